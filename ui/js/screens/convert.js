// Convert a document (office formats, PDF, scans and images; upload or address) to Markdown,
// HTML, JSON, DocTags or chunks (pieces for search and language models, a view of their own).
import { docsForm, Unavailable } from '../api.js';
import { announce, card, checkbox, clear, copyText, downloadBlob, dropzone, field, h, notice, pageHeader, revealResult, segmented, setBusy, setFieldError, showError, tabs, unavailablePanel } from '../dom.js';
import { highlightJson, prettyJson } from '../json-view.js';
import { fetchPreview, previewFrame, showInFrame } from '../preview.js';
import { convertAsJob, runsAsJob } from './convert-job.js';
import { conversionRemarks, linkPair, progressBar } from './shared.js';

const EXPORTS = [
  { value: 'markdown', label: 'Markdown', ext: 'md', type: 'text/markdown' },
  { value: 'html', label: 'HTML', ext: 'html', type: 'text/html' },
  { value: 'json', label: 'JSON', ext: 'json', type: 'application/json' },
  { value: 'doctags', label: 'DocTags', ext: 'doctags.txt', type: 'text/plain' },
  { value: 'chunks', label: 'Chunks', ext: 'chunks.json', type: 'application/json' },
];

// export=chunks: each chunk with its heading path, pages and size, and its text as the
// Markdown a search index or a language model receives
function chunkList(content) {
  let chunks = [];
  try { chunks = JSON.parse(content); } catch { chunks = []; }
  const list = h('ol', { class: 'chunk-list', 'aria-label': `${chunks.length} chunk${chunks.length === 1 ? '' : 's'}` });
  chunks.forEach((c, i) => {
    const pages = (c.pages || []).length ? ` · page${c.pages.length > 1 ? 's' : ''} ${c.pages.join(', ')}` : '';
    const text = h('pre', { class: 'chunk-text', tabindex: '0', 'aria-label': `Text of chunk ${i + 1}` }, c.text || '');
    list.append(h('li', { class: 'chunk' },
      h('p', { class: 'chunk-meta muted small' }, `Chunk ${i + 1} · ${c.tokens} tokens${pages}`),
      (c.headings || []).length ? h('p', { class: 'chunk-path small' }, c.headings.join(' › ')) : null,
      text));
  });
  return list;
}

// export=markdown: the Markdown as the service's own reader and HTML writer show it
// (POST /md/preview), in a sandboxed frame. "Rendering…" stays only until the service answers
// or the preview's time limit passes (preview.js); a failure is one line above the frame with
// a Try again button, and only the latest attempt's answer is shown.
function renderedMarkdown(content) {
  const frame = previewFrame('The converted Markdown, rendered', 'md-preview md-preview-rendered');
  const status = h('p', { class: 'preview-status small', role: 'status' });
  const retry = h('button', { type: 'button', class: 'btn btn-secondary btn-sm', hidden: true }, 'Try again');
  let attempt = 0;
  function show() {
    attempt += 1;
    const mine = attempt;
    status.textContent = '';
    retry.hidden = true;
    showInFrame(frame, '', 'Rendering…');
    fetchPreview(content)
      .then((data) => { if (mine === attempt) showInFrame(frame, data.html || '', 'The document is empty.'); })
      .catch((err) => {
        if (mine !== attempt) return;
        status.textContent = `Not rendered: ${err.message} The Markdown source is in the next tab.`;
        showInFrame(frame, '', 'Not rendered.');
        retry.hidden = false;
      });
  }
  retry.addEventListener('click', () => {
    // the button goes while the preview is asked for again: keep the keyboard in the panel
    const panel = retry.closest('[role=tabpanel]');
    if (panel && document.activeElement === retry) panel.focus({ preventScroll: true });
    show();
  });
  show();
  return h('div', {}, h('div', { class: 'preview-failure' }, status, retry), frame);
}

function render(view) {
  let mode = 'file';
  let disposed = false;
  const file = dropzone({
    label: 'Drop a document, scan or image here, or choose a file', name: 'file',
    accept: '.docx,.pdf,.pptx,.xlsx,.odt,.ods,.odp,.doc,.xls,.ppt,.rtf,.epub,.html,.htm,.csv,.png,.jpg,.jpeg,.tif,.tiff,.webp,image/png,image/jpeg,image/tiff,image/webp,application/pdf,application/vnd.openxmlformats-officedocument.wordprocessingml.document,application/vnd.openxmlformats-officedocument.presentationml.presentation,application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    hint: 'Word, PDF, PowerPoint, Excel, OpenDocument, RTF, EPUB, HTML, CSV, or a scan or photo (PNG, JPEG, TIFF, WebP), up to the server\'s upload limit',
    onfile: () => setFieldError(file, ''),
  });
  const url = field({ label: 'Document address', name: 'source_url', type: 'url', placeholder: 'https://example.com/report.docx', hint: 'A public http(s) address of a document (DOCX, PDF, HTML…).', spellcheck: false });
  const urlWrap = h('div', { hidden: true }, url.wrap);
  const source = segmented({
    legend: 'Source', name: 'source-mode', value: 'file', hideLegend: false,
    options: [{ value: 'file', label: 'Upload a file' }, { value: 'url', label: 'From an address' }],
    onchange: (v) => { mode = v; file.wrap.hidden = v !== 'file'; urlWrap.hidden = v !== 'url'; },
  });
  const exportChoice = segmented({ legend: 'Export as', name: 'export', value: 'markdown', options: EXPORTS });
  const engine = field({
    label: 'Engine', name: 'engine', type: 'select', value: 'word2markdown',
    hint: 'Structured reads styles, numbering, tables and footnotes. Lenient copes better with unusual Word files.',
    // the values are the API's engine names; people see what each does
    options: [{ value: 'word2markdown', label: 'Structured (recommended)' }, { value: 'alt_engine', label: 'Lenient, for unusual Word files' }],
  });
  const filename = field({ label: 'Output name', name: 'filename', placeholder: 'same as the document', hint: 'Optional base name, without extension.', spellcheck: false });
  const save = checkbox({ label: 'Save to storage', name: 'save', hint: 'Store the result and its images, and get links instead of the text.' });
  const pageMarkers = checkbox({ label: 'Mark where PDF pages start', name: 'page_markers', hint: 'Markdown and HTML: a comment <!-- page N --> before the first block of each page.' });
  const saveError = h('p', { class: 'field-error', hidden: true, id: 'convert-save-error' });
  save.input.setAttribute('aria-describedby', `${save.input.getAttribute('aria-describedby') || ''} convert-save-error`.trim());
  save.wrap.querySelector('.check-text').append(saveError);

  const message = h('div', { class: 'form-message' });
  const progress = progressBar('Converting');
  const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-lg' }, 'Convert');
  // shown while a large document or a scan converts as a job (convert-job.js)
  const cancel = h('button', { type: 'button', class: 'btn btn-danger-outline btn-lg', hidden: true }, 'Cancel');
  const form = h('form', { class: 'convert-form', novalidate: true },
    h('div', { class: 'form-grid' },
      h('div', { class: 'form-col stack' }, source.group, file.wrap, urlWrap),
      h('div', { class: 'form-col stack' }, exportChoice.group, engine.wrap, filename.wrap, save.wrap, pageMarkers.wrap)),
    // the action bar stays in view at the bottom of the screen while the form is scrolled
    h('div', { class: 'action-bar' }, message, progress.el, h('div', { class: 'form-actions' }, cancel, submit)));

  const result = h('div', { class: 'result-area', 'aria-live': 'polite' });
  const body = h('div', { class: 'stack-lg' }, card(null, form), result);
  view.append(pageHeader('Convert a document', 'Turn an office document, a PDF or a scan into Markdown, HTML, JSON or DocTags.'), body);

  function clearErrors() {
    clear(message);
    setFieldError(file, '');
    setFieldError(url, '');
    saveError.hidden = true;
    saveError.textContent = '';
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearErrors();
    const exportValue = exportChoice.value;
    const fd = new FormData();
    if (mode === 'file') {
      if (!file.file) { setFieldError(file, 'Choose or drop a document first.'); file.input.focus(); announce('Choose a file first.', true); return; }
      fd.append('file', file.file, file.file.name);
    } else {
      const v = url.input.value.trim();
      if (!/^https?:\/\/\S+$/i.test(v)) { setFieldError(url, 'Enter an address that starts with http:// or https://.'); url.input.focus(); announce('Enter a valid address.', true); return; }
      fd.append('source_url', v);
    }
    fd.append('export', exportValue);
    fd.append('engine', engine.input.value);
    fd.append('save', save.input.checked ? 'true' : 'false');
    // the preview shows the images (Markdown defaults to placeholders); chunks keep their names
    if (exportValue !== 'chunks') fd.append('images', 'embed');
    if (pageMarkers.input.checked && ['markdown', 'html'].includes(exportValue)) fd.append('page_markers', 'true');
    if (filename.input.value.trim()) fd.append('filename', filename.input.value.trim());
    const stem = filename.input.value.trim() || (mode === 'file' ? file.file.name.replace(/\.[^.]+$/, '') : (url.input.value.split('/').pop().split('?')[0].replace(/\.[^.]+$/, '') || 'document'));

    setBusy(submit, true, 'Converting…');
    clear(result);
    progress.start(mode === 'file' ? 'Uploading…' : 'Fetching and converting…');
    const direct = () => docsForm('/api/convert', fd, {
      onProgress: (f) => { if (f !== null && f < 1) progress.set(f, `Uploading… ${Math.round(f * 100)}%`); else progress.busy('Converting…'); },
    });
    try {
      let data;
      if (mode === 'file' && runsAsJob(file.file)) {
        try {
          data = await convertAsJob(fd, { bar: progress, cancelButton: cancel, saved: save.input.checked, isGone: () => disposed });
        } catch (err) {
          if (!err.fallback) throw err;
          fd.delete('async');
          data = await direct();  // no storage for the job's input: convert directly
        }
      } else {
        data = await direct();
      }
      progress.done();
      showResult(data, exportValue, stem);
      announce(data.content !== undefined ? 'Conversion finished.' : 'Saved to storage.');
    } catch (err) {
      progress.done();
      cancel.hidden = true;
      if (err instanceof Unavailable) { clear(body); body.append(unavailablePanel('Document conversion')); return; }
      if (err.job && err.job.state === 'cancelled') {
        const { done, total } = err.job;
        const after = total ? ` after ${done} of ${total} page${total === 1 ? '' : 's'}` : '';
        message.append(notice('info', null, h('p', {}, `Conversion cancelled${after}.`)));
        announce(`Conversion cancelled${after}.`);
        return;
      }
      placeError(err);
      announce(err.message, true);
    } finally {
      setBusy(submit, false);
    }
  });

  function placeError(err) {
    const code = err.code;
    if (code === 50201 && save.input.checked) {
      saveError.textContent = err.message + (err.hint ? ` ${err.hint}` : '');
      saveError.hidden = false;
      save.input.focus();
      return;
    }
    const sourceCodes = [40001, 40002, 40003, 41301, 42201];
    if (sourceCodes.includes(code) && !/export|engine|save|track/i.test(err.raw)) {
      if (mode === 'file') { setFieldError(file, err.message); file.input.focus(); } else { setFieldError(url, err.message); url.input.focus(); }
      return;
    }
    showError(message, err, 'The document was not converted');
  }

  function showResult(data, exportValue, stem) {
    clear(result);
    const meta = EXPORTS.find((x) => x.value === exportValue);
    if (data.content === undefined) {
      result.append(card('Saved to storage',
        notice('success', null, h('p', {}, 'The result is stored.')),
        conversionRemarks(data, 'from the converter'),
        linkPair(data)));
      result.querySelector('.card-title').setAttribute('tabindex', '-1');
      revealResult(result.querySelector('.card-title'));
      return;
    }
    const content = ['json', 'chunks'].includes(exportValue) ? prettyJson(data.content) : data.content;
    const fname = `${stem || 'document'}.${meta.ext}`;
    const copyBtn = h('button', { type: 'button', class: 'btn btn-secondary btn-sm' }, 'Copy');
    const dlBtn = h('button', { type: 'button', class: 'btn btn-secondary btn-sm' }, 'Download');
    const copied = h('span', { class: 'inline-status', 'aria-live': 'polite' });
    copyBtn.addEventListener('click', async () => {
      const ok = await copyText(content);
      copied.textContent = ok ? 'Copied to the clipboard.' : 'Copy failed; select the text and copy it by hand.';
      setTimeout(() => { copied.textContent = ''; }, 4000);
    });
    dlBtn.addEventListener('click', () => downloadBlob(new Blob([content], { type: `${meta.type};charset=utf-8` }), fname));

    const sourceView = h('pre', { class: 'code-view', tabindex: '0', 'aria-label': `${meta.label} source` }, h('code', {}, content));
    let views;
    if (exportValue === 'markdown') {
      views = [
        { id: 'rendered', label: 'Rendered', panel: renderedMarkdown(content) },
        { id: 'source', label: 'Markdown source', panel: sourceView },
      ];
    } else if (exportValue === 'html') {
      const frame = h('iframe', { class: 'html-preview', sandbox: '', title: 'Preview of the converted HTML', referrerpolicy: 'no-referrer' });
      frame.srcdoc = content;
      views = [
        { id: 'preview', label: 'Preview', panel: frame },
        { id: 'source', label: 'HTML source', panel: sourceView },
      ];
    } else if (exportValue === 'json') {
      views = [
        { id: 'json', label: 'JSON', panel: h('pre', { class: 'code-view json-view', tabindex: '0', 'aria-label': 'JSON, pretty-printed', html: highlightJson(data.content) }) },
      ];
    } else if (exportValue === 'chunks') {
      views = [
        { id: 'chunks', label: 'Chunks', panel: chunkList(data.content) },
        { id: 'json', label: 'JSON', panel: h('pre', { class: 'code-view json-view', tabindex: '0', 'aria-label': 'Chunks as JSON, pretty-printed', html: highlightJson(data.content) }) },
      ];
    } else {
      views = [{ id: 'source', label: 'DocTags', panel: sourceView }];
    }
    const warnings = conversionRemarks(data, 'from the converter');
    const t = tabs(views, { label: 'Result views' });
    const heading = h('h2', { class: 'card-title', tabindex: '-1' }, 'Result');
    result.append(h('section', { class: 'card result-card', 'aria-label': 'Result' },
      h('div', { class: 'result-head' },
        h('div', {}, heading, h('p', { class: 'muted small' }, `${fname} · ${data.media_type || meta.type} · ${content.length.toLocaleString()} characters`)),
        h('div', { class: 'result-actions' }, copied, copyBtn, dlBtn)),
      warnings, t.root));
    revealResult(heading);
  }
  // leaving the screen stops following a job (the job itself runs on; the jobs list has it)
  return () => { disposed = true; };
}

export default { id: 'convert', title: 'Convert', render };
