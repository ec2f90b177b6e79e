// Batches: upload an archive (zip, tar.gz, tgz) and process it, or stage it and process later.
import { docsError, docsEvents, docsForm, docsGet, probe, Unavailable } from '../api.js';
import { announce, card, checkbox, clear, downloadBlob, dropzone, field, formatBytes, h, newId, notice, pageHeader, revealResult, segmented, setBusy, setFieldError, showError, unavailablePanel } from '../dom.js';
import { cancelJob, filesCsv, jobCount, jobsPanel, rememberJobName } from './batch-jobs.js';
import { linkLifetime, progressBar, storageIsPublic } from './shared.js';

const ACCEPT = '.zip,.tar.gz,.tgz,application/zip,application/gzip,application/x-gzip,application/x-tar';
const ARCHIVE_RE = /\.(zip|tar\.gz|tgz)$/i;

const sleep = (ms) => new Promise((r) => { setTimeout(r, ms); });
const STAGED_KEY = 'docservice.staged';  // the staged archive of this tab survives leaving the page
const ROWS_SHOWN = 100;  // result rows drawn at first; "Show all" draws the rest

function render(view) {
  let mode = 'upload';
  let disposed = false;

  /** Run an archive as a job and follow its progress (server-sent events; polling if the
   * stream breaks); falls back to a direct answer. */
  async function runBatch(path, fd, bar, uploadPhase, label, cancelButton) {
    fd.append('async', 'true');
    const first = await docsForm(path, fd, {
      onProgress: uploadPhase ? (x) => {
        if (x !== null && x < 1) bar.set(x * 0.3, `Uploading… ${Math.round(x * 100)}%`);
        else bar.busy('Unpacking the archive…');
      } : undefined,
    });
    if (!first || !first.job_id) return first;
    rememberJobName(first.job_id, label);
    jobs.load();
    // Cancel while it runs: the job ends "cancelled" and the stream below says so
    const onCancel = async () => {
      cancelButton.disabled = true;
      try { await cancelJob(first.job_id); } catch { /* ended meanwhile: its end is shown */ }
    };
    cancelButton.disabled = false;
    cancelButton.hidden = false;
    cancelButton.onclick = onCancel;
    bar.busy('Queued…');
    const statusUrl = first.status_url || `/api/jobs/${first.job_id}`;
    // one source of counts: every reading (event stream or polled list) goes to the jobs
    // panel, and this line is drawn from the state it keeps, as the job's row is
    const paint = (st) => {
      if (st.state === 'queued') bar.busy('Queued…');
      else if (st.total && !['done', 'failed', 'cancelled'].includes(st.state)) {
        const where = st.current ? ` (${st.current})` : '';
        bar.set((uploadPhase ? 0.3 : 0) + (uploadPhase ? 0.7 : 1) * (st.done / st.total), `Processing… ${jobCount(st, true)}${where}`);
      }
    };
    const unwatch = jobs.watch(first.job_id, paint);
    const show = (st) => jobs.update({ ...st, id: first.job_id });
    const finish = async (st) => {
      cancelButton.hidden = true;
      cancelButton.onclick = null;
      unwatch();
      if (st.state === 'cancelled') st = await cancelledResult(statusUrl, st);
      jobs.load();
      if (st.state === 'done') return st.result;
      if (st.state === 'cancelled') throw Object.assign(docsError({ code: 40901, msg: 'The job was cancelled.', data: null }), { job: st });
      throw docsError({ code: st.code, msg: st.msg, data: st.result || null });
    };
    const stop = new AbortController();
    const watchdog = setInterval(() => { if (disposed) stop.abort(); }, 500);
    try {
      await docsEvents(`${statusUrl}/events`, (name, data) => { if (name === 'progress') show(data); }, { signal: stop.signal });
    } catch (e) {
      if (disposed) { unwatch(); throw new Error('left the page'); }
      if (e && e.code && e.code !== 'HTTP_404' && !(e instanceof Unavailable)) { unwatch(); throw e; }
    } finally {
      clearInterval(watchdog);
    }
    for (;;) {  // the stream has ended (or broke): read the job, polling until it has ended
      if (disposed) { unwatch(); throw new Error('left the page'); }
      const st = await docsGet(statusUrl);
      show(st);
      if (['done', 'failed', 'cancelled'].includes(st.state)) return finish(st);
      await sleep(350);
    }
  }

  /** A cancelled job that ran records what it stored once the document in work is done (a
   * moment after the cancel): wait a little for that list. */
  async function cancelledResult(statusUrl, st) {
    for (let i = 0; i < 20 && st.total && !st.result && !disposed; i += 1) {
      await sleep(300);
      st = await docsGet(statusUrl);
    }
    return st;
  }
  const archive = dropzone({ label: 'Drop an archive here, or choose one', name: 'file', accept: ACCEPT, hint: 'zip, tar.gz or tgz with Markdown, HTML and their images', onfile: () => setFieldError(archive, '') });
  const prefix = field({ label: 'Storage prefix', name: 'prefix', placeholder: 'e.g. manuals/2025', hint: 'Optional key prefix for everything uploaded.', spellcheck: false });
  const modeChoice = segmented({
    legend: 'When to process', name: 'batch-mode', value: 'upload',
    options: [{ value: 'upload', label: 'Upload and process now' }, { value: 'stage', label: 'Stage now, process later' }],
    onchange: (v) => { mode = v; submit.textContent = v === 'upload' ? 'Upload and process' : 'Stage archive'; prefix.wrap.hidden = v !== 'upload'; },
  });
  const message = h('div', { class: 'form-message' });
  const progress = progressBar('Batch progress');
  const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-lg' }, 'Upload and process');
  const cancelUpload = h('button', { type: 'button', class: 'btn btn-danger-outline btn-lg', hidden: true }, 'Cancel batch');
  const form = h('form', { class: 'stack', novalidate: true }, modeChoice.group, archive.wrap, prefix.wrap, message, progress.el, h('div', { class: 'form-actions' }, cancelUpload, submit));

  // process a staged archive
  const stagedInfo = h('div', { class: 'staged-info', 'aria-live': 'polite' });
  const stageId = field({ label: 'Staged archive id', name: 'id', required: true, spellcheck: false, hint: 'Filled in when you stage an archive; paste an id to process one staged earlier.' });
  const stagePrefix = field({ label: 'Storage prefix', name: 'prefix', placeholder: 'e.g. manuals', hint: 'Optional.', spellcheck: false });
  const versionId = field({ label: 'Version', name: 'versionId', placeholder: 'e.g. 2025-06', hint: 'Optional; adds a key segment: prefix/version/…', spellcheck: false });
  const processMessage = h('div', { class: 'form-message' });
  const processProgress = progressBar('Processing progress');
  const processBtn = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Process staged archive');
  const cancelProcess = h('button', { type: 'button', class: 'btn btn-danger-outline', hidden: true }, 'Cancel batch');
  const processForm = h('form', { class: 'stack', novalidate: true }, stagedInfo,
    h('div', { class: 'three-col' }, stageId.wrap, stagePrefix.wrap, versionId.wrap), processMessage, processProgress.el, h('div', { class: 'form-actions' }, cancelProcess, processBtn));
  const processCard = card('Process a staged archive', processForm);

  const results = h('div', { class: 'result-area' });
  const jobs = jobsPanel({ onOpen: (job, name) => {
    if (job.state === 'done') showResults(job.result || {}, name);
    else if (job.state === 'cancelled') { clear(message); clear(processMessage); showCancelled(job, name, results); }
    else if (job.result && Array.isArray(job.result.files)) showResults(job.result, name, { message: job.msg || 'The job failed.' });
    else { clear(results); results.append(notice('error', `${name} failed`, h('p', {}, String(job.msg || 'The job failed.')))); }
  } });
  const body = h('div', { class: 'stack-lg' }, card('Archive', form), processCard, results, jobs.root);
  view.append(pageHeader('Batches', 'Process a whole archive of Markdown and HTML: links are rewritten, assets uploaded to storage, and you get links to every file.'), body);

  Promise.all([probe('/api/upload-archive'), probe('/api/archive/stage')]).then(([up, stage]) => {
    if (!up && !stage) { clear(body); body.append(unavailablePanel('Batch processing')); }
  });

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(message);
    setFieldError(archive, '');
    const f = archive.file;
    if (!f) { setFieldError(archive, 'Choose or drop an archive first.'); archive.input.focus(); announce('Choose an archive first.', true); return; }
    if (!ARCHIVE_RE.test(f.name)) { setFieldError(archive, 'Use a .zip, .tar.gz or .tgz archive.'); archive.input.focus(); announce('Use a zip, tar.gz or tgz archive.', true); return; }
    const fd = new FormData();
    fd.append('file', f, f.name);
    if (mode === 'upload' && prefix.input.value.trim()) fd.append('prefix', prefix.input.value.trim());
    const path = mode === 'upload' ? '/api/upload-archive' : '/api/archive/stage';
    setBusy(submit, true, mode === 'upload' ? 'Processing…' : 'Staging…');
    if (mode === 'upload') clear(results);
    progress.set(0, 'Uploading… 0%');
    try {
      if (mode === 'upload') {
        const data = await runBatch(path, fd, progress, true, f.name, cancelUpload);
        progress.done();
        showResults(data, f.name);
      } else {
        const data = await docsForm(path, fd, {
          onProgress: (x) => { if (x !== null && x < 1) progress.set(x, `Uploading… ${Math.round(x * 100)}%`); else progress.busy('Storing the archive…'); },
        });
        progress.done();
        showStaged(data);
      }
    } catch (err) {
      progress.done();
      if (disposed) return;
      if (err.data && Array.isArray(err.data.files)) { showResults(err.data, f.name, err); return; }
      if (err instanceof Unavailable) { clear(message); message.append(notice('info', 'Not available on this server', h('p', {}, `${path} is not offered by this deployment.`))); return; }
      if (isCancelled(err)) showCancelled(err.job, f.name, message);
      else if ([40002, 40003, 40004, 41301].includes(err.code)) { setFieldError(archive, err.message); archive.input.focus(); } else showError(message, err, mode === 'upload' ? 'The archive was not processed' : 'The archive was not staged');
      announce(err.message, true);
    } finally {
      setBusy(submit, false);
      cancelUpload.hidden = true;
    }
  });

  let stagedName = '';
  function showStaged(data, restored = false) {
    clear(stagedInfo);
    stagedName = data.name || '';
    try { sessionStorage.setItem(STAGED_KEY, JSON.stringify({ id: data.id, name: data.name, size: data.size })); } catch { /* quota */ }
    stageId.input.value = data.id || '';
    stagedInfo.append(notice('success', 'Archive staged', h('p', {}, `${data.name || 'Archive'} · ${formatBytes(Number(data.size))}`), h('p', { class: 'mono small' }, `id ${data.id}`)));
    if (restored) return;
    announce('Archive staged. You can process it now.');
    stagePrefix.input.focus();
  }
  try {
    const kept = JSON.parse(sessionStorage.getItem(STAGED_KEY) || 'null');
    if (kept && kept.id) showStaged(kept, true);
  } catch { /* ignore */ }

  processForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(processMessage);
    setFieldError(stageId, '');
    const id = stageId.input.value.trim();
    if (!id) { setFieldError(stageId, 'Stage an archive first, or paste the id of a staged one.'); stageId.input.focus(); return; }
    const fd = new FormData();
    fd.append('id', id);
    if (stagePrefix.input.value.trim()) fd.append('prefix', stagePrefix.input.value.trim());
    if (versionId.input.value.trim()) fd.append('versionId', versionId.input.value.trim());
    setBusy(processBtn, true, 'Processing…');
    processProgress.busy('Fetching the staged archive…');
    clear(results);
    try {
      const data = await runBatch('/api/archive/process', fd, processProgress, false, stagedName || id, cancelProcess);
      processProgress.done();
      showResults(data, stagedName || id);
    } catch (err) {
      processProgress.done();
      if (disposed) return;
      if (err.data && Array.isArray(err.data.files)) { showResults(err.data, stagedName || id, err); return; }
      if (err instanceof Unavailable) { clear(processMessage); processMessage.append(notice('info', 'Not available on this server', h('p', {}, 'Processing staged archives is not offered by this deployment.'))); return; }
      if (isCancelled(err)) showCancelled(err.job, stagedName || id, processMessage);
      else if (err.code === 40401 || /\bid\b/i.test(err.raw)) { setFieldError(stageId, err.code === 40401 ? 'No staged archive has this id (it may have expired).' : err.message); stageId.input.focus(); } else showError(processMessage, err, 'The archive was not processed');
      announce(err.message, true);
    } finally {
      setBusy(processBtn, false);
      cancelProcess.hidden = true;
    }
  });

  /** A cancelled batch: what it stored before the cancel (the results table) and what it did
   * not (listed under it); without that list (cancelled while queued, or the job not done
   * with its last document yet) a note in `slot`. */
  function showCancelled(job, label, slot) {
    clear(slot);
    const result = job && job.result;
    if (result && Array.isArray(result.files)) { showResults(result, label, null, job); return; }
    const ran = job && job.total;
    slot.append(notice('info', 'Batch cancelled', h('p', {}, ran
      ? `The job was cancelled after ${jobCount(job, true)}. The list of what it stored appears under "Recent jobs" (Open results) once the document in work is done.`
      : 'The job was cancelled before it started; nothing was stored.')));
  }

  function showResults(data, label, error = null, cancelled = null) {
    clear(results);
    if (error) results.append(notice('error', 'The batch stopped early', h('p', {}, error.message), error.hint ? h('p', { class: 'notice-hint' }, error.hint) : null));
    const files = Array.isArray(data.files) ? data.files : [];
    const failed = files.filter(isFailed);
    const assetsOk = files.reduce((n, f) => n + (Number(f.asset_ok) || 0), 0);
    const assetsFail = files.reduce((n, f) => n + (Number(f.asset_fail) || 0), 0);
    const mappings = files.reduce((n, f) => n + (Array.isArray(f.mappings) ? f.mappings.length : 0), 0);
    const stats = h('ul', { class: 'stats', 'aria-label': 'Summary' },
      stat(data.total && data.total !== files.length ? `${files.length}/${data.total}` : String(data.count ?? files.length), 'documents'),
      stat(String(files.length - failed.length), 'without problems', 'ok'),
      stat(String(failed.length), failed.length === 1 ? 'with a problem' : 'with problems', failed.length ? 'bad' : ''),
      stat(String(mappings), 'links rewritten'),
      assetsOk || assetsFail ? stat(`${assetsOk}/${assetsOk + assetsFail}`, 'assets uploaded', assetsFail ? 'bad' : 'ok') : null);
    const tbody = h('tbody');
    let showAll = false;
    const failedOnly = checkbox({ label: 'Failed only', name: 'failed-only' });
    const more = h('button', { type: 'button', class: 'btn btn-secondary btn-sm', hidden: true });
    const shownNote = h('p', { class: 'muted small', 'aria-live': 'polite' });
    const drawRows = () => {
      const wanted = failedOnly.input.checked ? failed : files;
      const shown = showAll ? wanted : wanted.slice(0, ROWS_SHOWN);
      clear(tbody);
      tbody.append(...shown.map(fileRow));
      shownNote.textContent = `${shown.length} of ${wanted.length} file${wanted.length === 1 ? '' : 's'} shown`;
      more.hidden = shown.length >= wanted.length;
      more.textContent = `Show all ${wanted.length}`;
    };
    failedOnly.input.addEventListener('change', drawRows);
    more.addEventListener('click', () => { showAll = true; drawRows(); });
    const base = String(label).replace(/\.(zip|tar\.gz|tgz)$/i, '').replace(/[^\w.-]+/g, '_') || 'batch';
    const csvBtn = h('button', { type: 'button', class: 'btn btn-secondary btn-sm' }, 'Download CSV');
    csvBtn.addEventListener('click', () => downloadBlob(new Blob([filesCsv(files)], { type: 'text/csv;charset=utf-8' }), `${base}-results.csv`));
    const jsonBtn = h('button', { type: 'button', class: 'btn btn-secondary btn-sm' }, 'Download JSON');
    jsonBtn.addEventListener('click', () => downloadBlob(new Blob([JSON.stringify(data, null, 2)], { type: 'application/json' }), `${base}-results.json`));
    const tools = h('div', { class: 'row-inline results-tools' }, failedOnly.wrap, shownNote, csvBtn, jsonBtn);
    drawRows();
    const table = h('table', { class: 'data-table batch-table' },
      h('caption', { class: 'visually-hidden' }, `Processed files of ${label}`),
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Source'), h('th', { scope: 'col' }, 'Links'), h('th', { scope: 'col' }, 'Assets'), h('th', { scope: 'col' }, 'Mappings'))),
      tbody);
    const heading = h('h2', { class: 'card-title', tabindex: '-1' }, `Results · ${label}`);
    results.append(h('section', { class: 'card', 'aria-label': 'Batch results' },
      heading,
      cancelled ? cancelNote(data, cancelled) : null,
      error || cancelled ? null : failed.length ? notice('warning', `${failed.length} file${failed.length > 1 ? 's' : ''} had problems`, h('p', {}, 'They are highlighted below.')) : notice('success', null, h('p', {}, 'Every file was processed.')),
      stats,
      files.length ? tools : null,
      files.length ? h('div', { class: 'table-scroll' }, table) : h('p', { class: 'muted' }, 'The archive held no Markdown or HTML files.'),
      more));
    revealResult(heading);
    announce(cancelled ? `Batch cancelled. ${files.length} documents were stored before the cancel.` : `Processed ${files.length} files, ${failed.length} with problems.`);
  }

  return () => { disposed = true; jobs.dispose(); };
}

/** What a cancelled batch stored (the table under it) and what it did not (listed here). */
function cancelNote(data, job) {
  const stored = Array.isArray(data.files) ? data.files.length : 0;
  const skipped = Array.isArray(data.not_processed) ? data.not_processed : [];
  const total = job.total || stored + skipped.length;
  return notice('info', 'Batch cancelled',
    h('p', {}, `Stored before the cancel: ${stored} of ${total} document${total === 1 ? '' : 's'} (listed below). Not processed, so not stored: ${skipped.length}.`),
    skipped.length ? h('details', { class: 'not-processed' }, h('summary', {}, `Show the ${skipped.length} document${skipped.length === 1 ? '' : 's'} not processed`),
      h('ul', {}, skipped.slice(0, 1000).map((s) => h('li', {}, h('code', {}, String(s)))),
        skipped.length > 1000 ? h('li', { class: 'muted' }, `… and ${skipped.length - 1000} more (in Download JSON)`) : null)) : null);
}

function isCancelled(err) { return err && err.code === 40901 && /cancel/i.test(err.raw || err.message || ''); }

function stat(value, label, tone = '') {
  return h('li', { class: `stat ${tone ? `stat-${tone}` : ''}` }, h('span', { class: 'stat-value' }, value), h('span', { class: 'stat-label' }, label));
}

function isFailed(f) {
  return Boolean(f.error) || f.ok === false || Number(f.asset_fail) > 0 || (Array.isArray(f.failed) && f.failed.length > 0);
}

/** A batch file's presigned link, saying until when it opens (the answer's
 * `storage_link_expires_at`, else the link's own signature time and lifetime). */
function presignedChip(f) {
  const life = linkLifetime(f.storage_presigned_url);
  const until = f.storage_link_expires_at ? new Date(f.storage_link_expires_at) : life && life.until;
  const when = until && !Number.isNaN(until.getTime())
    ? until.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' }) : '';
  return h('a', { href: f.storage_presigned_url, target: '_blank', rel: 'noopener noreferrer', class: 'chip-link', title: `Time-limited link; works on private buckets${when ? `; stops working ${when}` : ''}` },
    'Presigned', when ? ` until ${when}` : '', h('span', { class: 'visually-hidden' }, ` link of ${f.source}`));
}

function fileRow(f) {
  const failed = isFailed(f);
  const links = [];
  const lasting = f.storage_link_kind === 'service' || f.storage_link_kind === 'direct';
  if (lasting && f.storage_url) links.push(h('a', { href: f.storage_url, target: '_blank', rel: 'noopener noreferrer', class: 'chip-link', title: 'Does not expire' }, 'Open', h('span', { class: 'visually-hidden' }, ` ${f.source}`)));
  // presigned (the operator chose them): first, as it opens on a private bucket too, with the
  // time it stops working in view, as a saved result shows it
  else if (f.storage_presigned_url) links.push(presignedChip(f));
  const chips = h('span', { class: 'chips' }, links);
  // direct: only once the bucket is known to allow public reads (a private one answers 403)
  if (!lasting && f.storage_url) {
    storageIsPublic().then((pub) => {
      if (pub === true) chips.append(h('a', { href: f.storage_url, target: '_blank', rel: 'noopener noreferrer', class: 'chip-link', title: 'Does not expire: the bucket allows public reads' }, 'Direct', h('span', { class: 'visually-hidden' }, ` link of ${f.source}`)));
    });
  }
  const maps = Array.isArray(f.mappings) ? f.mappings : [];
  const hasAssets = f.asset_ok !== undefined || f.asset_fail !== undefined;
  const id = newId('map');
  return h('tr', { class: failed ? 'is-failed' : '' },
    h('td', { dataset: { label: 'Source' } },
      h('span', { class: 'source-path' }, f.source || '(unnamed)'),
      failed ? h('span', { class: 'badge badge-danger' }, f.error ? 'Failed' : 'Problem') : null,
      f.error ? h('p', { class: 'row-error' }, String(f.error)) : null),
    h('td', { dataset: { label: 'Links' } }, links.length || (!lasting && f.storage_url) ? chips : h('span', { class: 'muted', title: 'Turn on "Store final files" in Storage to keep the rewritten documents' }, 'not stored')),
    h('td', { dataset: { label: 'Assets' } }, hasAssets
      ? h('div', {}, h('span', { class: 'ok-count' }, `${Number(f.asset_ok) || 0} ok`), Number(f.asset_fail) ? h('span', { class: 'fail-count' }, ` · ${f.asset_fail} failed`) : null,
        Array.isArray(f.failed) && f.failed.length
          ? h('ul', { class: 'failed-refs' }, f.failed.slice(0, 20).map((x) => h('li', {}, h('code', {}, String(x.ref ?? x)), x.reason ? `: ${x.reason}` : '')))
          : null)
      : h('span', { class: 'muted' }, '—')),
    h('td', { dataset: { label: 'Mappings' } }, maps.length
      ? h('details', { class: 'mappings' }, h('summary', { id }, `${maps.length} link${maps.length > 1 ? 's' : ''}`),
        h('ul', { 'aria-labelledby': id }, maps.slice(0, 200).map((m) => h('li', {}, mappingText(m)))))
      : h('span', { class: 'muted' }, 'none')));
}

function mappingText(m) {
  if (Array.isArray(m)) return [h('code', {}, String(m[0])), ' → ', h('code', {}, String(m[1] ?? ''))];
  if (m && typeof m === 'object') {
    const from = m.original ?? m.from ?? m.src ?? m.source ?? m.ref ?? m.old;
    const to = m.storage_url ?? m.url ?? m.to ?? m.new ?? m.target ?? m.storage_presigned_url;
    if (from !== undefined) return [h('code', {}, String(from)), ' → ', to ? h('code', {}, String(to)) : h('span', { class: 'fail-count' }, m.error ? `failed: ${m.error}` : 'not uploaded')];
    return h('code', {}, JSON.stringify(m));
  }
  return h('code', {}, String(m));
}

export default { id: 'batches', title: 'Batches', render };
