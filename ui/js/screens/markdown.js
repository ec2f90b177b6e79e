// Markdown to PDF/DOCX: editor with live preview, every option of /md/convert, download or save.
import { docsForm, Unavailable } from '../api.js';
import { announce, card, checkbox, clear, downloadBlob, field, formatBytes, h, notice, pageHeader, revealResult, segmented, setBusy, setFieldError, showError, unavailablePanel } from '../dom.js';
import { livePreview, previewFrame } from '../preview.js';
import { keepOptions } from './md-options.js';
import { conversionRemarks, linkPair, progressBar, themes } from './shared.js';

const SAMPLE = `# Release notes

Write or paste **Markdown** here, or drop a \`.md\` file onto this box.
The preview on the right follows as you type.

## Highlights

- Faster conversion of large tables
- A table of contents with page numbers
- Cover page with logo and versions

| Area | Change |
|------|--------|
| PDF  | Bookmarks for every heading |
| DOCX | Numbered lists restart correctly |
`;
const DRAFT_KEY = 'docservice.md-draft';

function imageInputs(kind, label) {
  const url = field({ label: `${label} address`, name: `${kind}_url`, type: 'url', placeholder: 'https://…/image.png', spellcheck: false });
  const file = field({ label: `or upload ${label.toLowerCase()}`, name: `${kind}_file`, type: 'file', accept: 'image/png,image/jpeg,image/gif,image/webp,image/svg+xml' });
  const wrap = h('div', { class: 'image-pair' }, url.wrap, file.wrap);
  return { url, file, wrap };
}

function render(view) {
  let mode = 'text';
  const editor = field({ label: 'Markdown text', name: 'markdown_text', type: 'textarea', rows: 18, value: sessionStorage.getItem(DRAFT_KEY) ?? SAMPLE, spellcheck: false, hint: 'Type, paste, or drop a .md file here.' });
  editor.input.classList.add('md-editor');
  editor.wrap.querySelector('label').classList.add('visually-hidden');
  const openFile = h('input', { type: 'file', accept: '.md,.markdown,.txt,text/markdown,text/plain', class: 'visually-hidden', id: 'md-open-file', tabindex: '-1', 'aria-label': 'Markdown file to open' });
  const openButton = h('button', { type: 'button', class: 'btn btn-secondary btn-sm' }, 'Open a .md file…');
  openButton.addEventListener('click', () => openFile.click());
  const mdUrl = field({ label: 'Markdown address', name: 'markdown_url', type: 'url', placeholder: 'https://example.com/README.md', spellcheck: false, hint: 'The server fetches it when you generate (no preview here).' });
  const urlWrap = h('div', { hidden: true }, mdUrl.wrap);
  const textWrap = h('div', { class: 'stack-sm' }, editor.wrap, h('div', { class: 'row-inline' }, openButton, openFile, h('span', { class: 'muted small', id: 'md-count' })));
  const setMode = (v) => { mode = v; textWrap.hidden = v !== 'text'; urlWrap.hidden = v !== 'url'; };
  const source = segmented({
    legend: 'Markdown source', name: 'md-source', value: 'text', hideLegend: true,
    options: [{ value: 'text', label: 'Write or drop' }, { value: 'url', label: 'From an address' }],
    onchange: setMode,
  });
  // the service's own reader and HTML writer make the preview (POST /md/preview), shown in a
  // sandboxed frame; remote images are placeholders there (the file fetches them)
  const preview = previewFrame('Live preview of the Markdown', 'md-preview paper');
  const previewStatus = h('p', { class: 'preview-status small', role: 'status' });
  const previewRegion = h('section', { class: 'card preview-card', 'aria-labelledby': 'md-preview-title' },
    h('div', { class: 'card-head' }, h('h2', { class: 'card-title', id: 'md-preview-title' }, 'Preview'), h('span', { class: 'muted small' }, 'Approximate; the chosen style applies in the file')),
    previewStatus,
    h('div', { class: 'paper-scroll' }, preview));
  const live = livePreview({ frame: preview, status: previewStatus, delay: 300 });

  let timer = null;
  const count = () => textWrap.querySelector('#md-count');
  function noteDraft() {
    const text = editor.input.value;
    const words = (text.match(/\S+/g) || []).length;
    count().textContent = `${words.toLocaleString()} words`;
    try { sessionStorage.setItem(DRAFT_KEY, text); } catch { /* quota */ }
  }
  function updatePreview({ now = false } = {}) {
    live.update(editor.input.value, { now });
    clearTimeout(timer);
    if (now) noteDraft(); else timer = setTimeout(noteDraft, 120);
  }
  editor.input.addEventListener('input', () => { updatePreview(); setFieldError(editor, ''); });
  async function loadFile(f) {
    if (!f) return;
    if (f.size > 10 * 1024 * 1024) { setFieldError(editor, 'That file is larger than 10 MB.'); return; }
    editor.input.value = await f.text();
    updatePreview({ now: true });
    announce(`Loaded ${f.name}.`);
    editor.input.focus();
  }
  openFile.addEventListener('change', () => loadFile(openFile.files[0]));
  editor.input.addEventListener('dragover', (e) => { e.preventDefault(); editor.input.classList.add('dragging'); });
  editor.input.addEventListener('dragleave', () => editor.input.classList.remove('dragging'));
  editor.input.addEventListener('drop', (e) => {
    const f = e.dataTransfer && e.dataTransfer.files && e.dataTransfer.files[0];
    editor.input.classList.remove('dragging');
    if (f) { e.preventDefault(); loadFile(f); }
  });

  // ---- options
  const target = segmented({ legend: 'Format', name: 'target', value: 'pdf', options: [{ value: 'pdf', label: 'PDF' }, { value: 'docx', label: 'Word (DOCX)' }], onchange: (v) => updateTarget(v) });
  const style = field({ label: 'Style', name: 'css_name', type: 'select', value: 'default', options: ['default', 'github', 'academic', 'compact'], hint: 'Print theme of the PDF.' });
  let styleWanted = '';
  themes().then((names) => {
    const current = styleWanted || style.input.value;
    clear(style.input);
    for (const n of names) style.input.append(h('option', { value: n }, n.charAt(0).toUpperCase() + n.slice(1)));
    style.input.value = names.includes(current) ? current : names[0];
  });
  const filename = field({ label: 'Output name', name: 'filename', placeholder: 'document', hint: 'Base name of the file, without extension.', spellcheck: false });
  const toc = checkbox({ label: 'Table of contents', name: 'toc', hint: 'With page numbers in PDF.' });
  const header = field({ label: 'Header text', name: 'header_text', placeholder: 'e.g. Acme — Internal' });
  const footer = field({ label: 'Footer text', name: 'footer_text', placeholder: 'e.g. Confidential' });
  const productName = field({ label: 'Product name', name: 'product_name' });
  const productVersion = field({ label: 'Product version', name: 'product_version', placeholder: 'e.g. 2.4' });
  const documentName = field({ label: 'Document name', name: 'document_name' });
  const documentVersion = field({ label: 'Document version', name: 'document_version', placeholder: 'e.g. v1.0' });
  const copyright = field({ label: 'Copyright', name: 'copyright_text', placeholder: '© 2025 Acme Ltd' });
  const cover = imageInputs('cover', 'Cover image');
  const logo = imageInputs('logo', 'Logo');
  const css = field({ label: 'Custom CSS', name: 'css_text', type: 'textarea', rows: 5, spellcheck: false, placeholder: 'h1 { color: #1d4ed8; }', hint: 'Added after the style.' });
  css.input.classList.add('mono');

  function updateTarget(v) {
    style.input.disabled = v !== 'pdf';
    style.wrap.classList.toggle('is-disabled', v !== 'pdf');
    generate.textContent = v === 'pdf' ? 'Download PDF' : 'Download DOCX';
  }

  const message = h('div', { class: 'form-message' });
  const progress = progressBar('Generating');
  const generate = h('button', { type: 'submit', class: 'btn btn-primary btn-lg', value: 'download' }, 'Download PDF');
  const saveBtn = h('button', { type: 'submit', class: 'btn btn-secondary btn-lg', value: 'save' }, 'Save to storage');
  const result = h('div', { class: 'result-area', 'aria-live': 'polite' });
  const ready = h('div', { class: 'bar-status', 'aria-live': 'polite' });  // "Your file is ready"

  const fieldset = (legend, ...children) => h('fieldset', { class: 'group' }, h('legend', {}, legend), ...children);
  const options = h('div', { class: 'options-grid' },
    fieldset('Output', target.group, style.wrap, filename.wrap, toc.wrap),
    fieldset('Cover page', h('div', { class: 'two-col' }, productName.wrap, productVersion.wrap, documentName.wrap, documentVersion.wrap), copyright.wrap, cover.wrap, logo.wrap),
    fieldset('Page furniture and style', header.wrap, footer.wrap, css.wrap));

  const allFields = { markdown_text: editor, markdown_url: mdUrl, css_name: style, css_text: css, header_text: header, footer_text: footer, product_name: productName, product_version: productVersion, document_name: documentName, document_version: documentVersion, copyright_text: copyright, filename, cover_url: cover.url, cover_file: cover.file, logo_url: logo.url, logo_file: logo.file };

  const form = h('form', { class: 'stack-lg', novalidate: true },
    h('div', { class: 'editor-grid' },
      h('section', { class: 'card editor-card', 'aria-labelledby': 'md-editor-title' },
        h('div', { class: 'card-head' }, h('h2', { class: 'card-title', id: 'md-editor-title' }, 'Markdown'), source.group),
        textWrap, urlWrap),
      previewRegion),
    card('Options', options),
    // the action bar stays in view at the bottom of the screen (on a phone the options are
    // far below the editor): errors, progress, the file just made, and the two actions
    h('div', { class: 'action-bar action-bar-card' }, message, progress.el, ready, h('div', { class: 'form-actions' }, saveBtn, generate)),
    result);

  const body = h('div', {});
  body.append(form);
  view.append(pageHeader('Markdown to PDF or Word', 'Write or drop Markdown, see it as you type, and publish it as a PDF or DOCX with a cover, a table of contents and your style.'), body);
  const kept = keepOptions({
    root: form,
    texts: Object.fromEntries([style, filename, header, footer, productName, productVersion, documentName, documentVersion, copyright, css, cover.url, logo.url, mdUrl].map((f) => [f.input.name, f.input])),
    checks: { toc: toc.input },
    segments: { target: { inputs: target.inputs, onSet: updateTarget }, source: { inputs: source.inputs, onSet: setMode } },
    files: { cover_file: cover.file.input, logo_file: logo.file.input },
  });
  styleWanted = kept.styleWanted || '';
  if (styleWanted) style.input.value = styleWanted;
  updatePreview({ now: true });

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    const saving = e.submitter && e.submitter.value === 'save';
    clear(message);
    Object.values(allFields).forEach((f) => setFieldError(f, ''));
    const fd = new FormData();
    const tgt = target.value;
    if (mode === 'text') {
      if (!editor.input.value.trim()) { setFieldError(editor, 'Write or drop some Markdown first.'); editor.input.focus(); announce('Write some Markdown first.', true); return; }
      fd.append('markdown_text', editor.input.value);
    } else {
      const u = mdUrl.input.value.trim();
      if (!/^https?:\/\/\S+$/i.test(u)) { setFieldError(mdUrl, 'Enter an address that starts with http:// or https://.'); mdUrl.input.focus(); return; }
      fd.append('markdown_url', u);
    }
    for (const [k, pair] of [['cover', cover], ['logo', logo]]) {
      const f = pair.file.input.files[0];
      const u = pair.url.input.value.trim();
      if (f && u) { setFieldError(pair.url, 'Give an address or a file, not both.'); pair.url.input.focus(); return; }
      if (f) fd.append(`${k}_file`, f, f.name);
      if (u) fd.append(`${k}_url`, u);
    }
    fd.append('target', tgt);
    if (tgt === 'pdf') fd.append('css_name', style.input.value);
    for (const f of [css, header, footer, productName, productVersion, documentName, documentVersion, copyright, filename]) {
      if (f.input.value.trim()) fd.append(f.input.name, f.input.value);
    }
    fd.append('toc', toc.input.checked ? 'true' : 'false');
    fd.append('save', saving ? 'true' : 'false');

    const button = saving ? saveBtn : generate;
    setBusy(button, true, saving ? 'Saving…' : 'Generating…');
    (saving ? generate : saveBtn).disabled = true;
    clear(result);
    clear(ready);
    progress.start(`Generating the ${tgt.toUpperCase()}…`);
    try {
      const answer = await docsForm('/md/convert', fd, { onProgress: (f) => { if (f !== null && f < 1) progress.set(f, `Uploading… ${Math.round(f * 100)}%`); else progress.busy(`Generating the ${tgt.toUpperCase()}…`); } });
      progress.done();
      if (answer && answer.blob) showFile(answer, tgt);
      else showSaved(answer || {});
    } catch (err) {
      progress.done();
      if (err instanceof Unavailable) { clear(body); body.append(unavailablePanel('Markdown to PDF/DOCX')); return; }
      placeError(err, saving);
      announce(err.message, true);
    } finally {
      setBusy(button, false);
      saveBtn.disabled = false;
      generate.disabled = false;
    }
  });

  function placeError(err, saving) {
    const raw = `${err.raw || ''}`.toLowerCase();
    const filled = (pair) => (pair.file.input.files[0] ? pair.file : pair.url);
    let f = null;
    if (/^cover/.test(raw) || raw.includes('cover_')) f = filled(cover);
    else if (/^logo/.test(raw) || raw.includes('logo_')) f = filled(logo);
    else if (raw.includes('css_name')) f = style;
    else if (err.code === 50201 && saving) f = null;
    else if (mode === 'url' && [40003, 41301, 42201, 50401].includes(err.code)) f = mdUrl;
    else if (err.code === 42201) {
      const urls = [cover.url, logo.url].filter((x) => x.input.value.trim());
      f = urls.length === 1 ? urls[0] : null;
    } else if (mode === 'text' && (raw.includes('markdown') || err.code === 41301)) f = editor;
    if (f) { setFieldError(f, err.message); f.input.focus(); return; }
    showError(message, err, saving ? 'The file was not saved' : 'The file was not generated');
    message.querySelector('[role="alert"]')?.setAttribute('tabindex', '-1');
  }

  let lastUrl = null;
  function showFile(answer, tgt) {
    const name = answer.filename || `${filename.input.value.trim() || 'document'}.${tgt}`;
    downloadBlob(answer.blob, name);
    if (lastUrl) URL.revokeObjectURL(lastUrl);
    lastUrl = URL.createObjectURL(answer.blob);
    const items = [h('p', {}, `${name} (${formatBytes(answer.blob.size)}) was downloaded.`),
      h('p', { class: 'row-inline' },
        h('a', { class: 'btn btn-secondary btn-sm', href: lastUrl, download: name }, 'Download again'),
        tgt === 'pdf' ? h('a', { class: 'btn btn-ghost btn-sm', href: lastUrl, target: '_blank', rel: 'noopener' }, 'Open in a new tab') : null)];
    items.push(conversionRemarks(answer));
    ready.append(notice('success', 'Your file is ready', ...items));
    announce(`${name} is ready.`);
  }

  function showSaved(data) {
    result.append(card('Saved to storage', notice('success', null, h('p', {}, 'The file is stored.')), conversionRemarks(data), linkPair(data)));
    const heading = result.querySelector('.card-title');
    heading.setAttribute('tabindex', '-1');
    revealResult(heading);
    announce('Saved to storage.');
  }

  return () => { clearTimeout(timer); live.stop(); if (lastUrl) URL.revokeObjectURL(lastUrl); };
}

export default { id: 'markdown', title: 'Markdown to PDF/DOCX', render };
