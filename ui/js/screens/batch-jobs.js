// Batches: the company's past jobs (GET /api/jobs) with state, progress and Cancel; a
// finished job's results open again. A job is listed by the name its record carries (the
// archive's or folder's), so every tab and device shows it; a label this tab gave a job it
// sent is used for a record without one.
import { docsForm, docsGet } from '../api.js';
import { clear, h, notice, showError } from '../dom.js';

const NAMES_KEY = 'docservice.job-names';
const KINDS = { 'upload-archive': 'Upload', 'archive-process': 'Staged archive', 'md-convert': 'Markdown' };

export function rememberJobName(jobId, name) {
  try {
    const names = JSON.parse(sessionStorage.getItem(NAMES_KEY) || '{}');
    names[jobId] = name;
    sessionStorage.setItem(NAMES_KEY, JSON.stringify(names));
  } catch { /* quota */ }
}

export function jobName(job) {
  if (job.name) return job.name;
  try {
    const names = JSON.parse(sessionStorage.getItem(NAMES_KEY) || '{}');
    if (names[job.id]) return names[job.id];
  } catch { /* ignore */ }
  return `${KINDS[job.kind] || job.kind || 'Job'} ${String(job.id).slice(0, 8)}`;
}

/** Ask the service to cancel a queued or running job. */
export function cancelJob(jobId) {
  return docsForm(`/api/jobs/${encodeURIComponent(jobId)}/cancel`, new FormData());
}

const STATE_BADGE = { queued: 'badge-muted', running: '', done: 'badge-success', failed: 'badge-danger', cancelled: 'badge-muted' };
const ENDED = ['done', 'failed', 'cancelled'];

/** The later of two readings of one job (the event stream and the polled list arrive in any
 * order): an ended job stays ended, and the count of documents done never goes back. */
export function laterState(known, incoming) {
  if (!known) return { ...incoming };
  if (ENDED.includes(known.state) && !ENDED.includes(incoming.state)) return known;
  if (!ENDED.includes(incoming.state) && Number(incoming.done || 0) < Number(known.done || 0)) return known;
  return { ...known, ...incoming };
}

/** "283 of 400 documents": the one wording of a job's count, in its row and its progress line. */
export function jobCount(job, long = false) {
  if (!job.total) return job.state === 'queued' ? 'waiting' : '—';
  return long ? `${job.done} of ${job.total} document${job.total === 1 ? '' : 's'}` : `${job.done} of ${job.total}`;
}

/**
 * The "Recent jobs" card. `onOpen(job)` shows a finished job's results. Polls every 2 s
 * while a job is queued or running; `dispose()` stops it. It holds the one state of each job
 * it has seen: `update(state)` takes a newer reading (from a job's event stream), redraws its
 * row and tells those who `watch(id, fn)` it, so a progress line elsewhere and the row never
 * disagree.
 */
export function jobsPanel({ onOpen }) {
  const message = h('div', { class: 'list-message' });
  const tbody = h('tbody');
  const table = h('table', { class: 'data-table jobs-table' },
    h('caption', { class: 'visually-hidden' }, 'Recent batch jobs of your company'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Job'), h('th', { scope: 'col' }, 'Started'),
      h('th', { scope: 'col' }, 'State'), h('th', { scope: 'col' }, 'Progress'), h('th', { scope: 'col', class: 'al-r' }, 'Actions'))),
    tbody);
  const refresh = h('button', { type: 'button', class: 'btn btn-secondary btn-sm' }, 'Refresh');
  const root = h('section', { class: 'card', 'aria-labelledby': 'jobs-title' },
    h('div', { class: 'card-head' }, h('h2', { class: 'card-title', id: 'jobs-title' }, 'Recent jobs'), refresh),
    h('p', { class: 'muted small' }, 'Batches of your company from the last 24 hours. Results of a finished job open again here.'),
    message, h('div', { class: 'table-scroll' }, table));
  let timer = null;
  let disposed = false;
  const states = new Map();    // job id -> its latest state
  const watchers = new Map();  // job id -> functions told of every change

  /** Take a reading of a job; redraw its row and tell its watchers. Returns the state. */
  function update(reading) {
    const job = laterState(states.get(reading.id), reading);
    states.set(job.id, job);
    const tr = tbody.querySelector(`tr[data-job-id="${CSS.escape(String(job.id))}"]`);
    if (tr) tr.replaceWith(row(job));
    for (const fn of watchers.get(job.id) || []) fn(job);
    return job;
  }

  function watch(jobId, fn) {
    if (!watchers.has(jobId)) watchers.set(jobId, new Set());
    watchers.get(jobId).add(fn);
    if (states.has(jobId)) fn(states.get(jobId));
    return () => watchers.get(jobId)?.delete(fn);
  }

  async function load() {
    clearTimeout(timer);
    if (disposed) return;
    try {
      const data = await docsGet('/api/jobs?pageSize=20');
      clear(message);
      const items = (data.items || []).map((j) => laterState(states.get(j.id), j));
      for (const job of items) states.set(job.id, job);
      draw(items);
      for (const job of items) for (const fn of watchers.get(job.id) || []) fn(job);
      if (items.some((j) => j.state === 'queued' || j.state === 'running')) timer = setTimeout(load, 2000);
    } catch (err) {
      showError(message, err, 'The jobs could not be loaded');
    }
  }

  function draw(items) {
    clear(tbody);
    if (!items.length) {
      tbody.append(h('tr', { class: 'empty-row' }, h('td', { colspan: '5' }, h('p', { class: 'muted' }, 'No batch jobs yet.'))));
      return;
    }
    for (const job of items) tbody.append(row(job));
  }

  function row(job) {
    const name = jobName(job);
    const actions = [];
    if (job.state === 'queued' || job.state === 'running') {
      const cancel = h('button', { type: 'button', class: 'btn btn-sm btn-danger-outline' }, 'Cancel', h('span', { class: 'visually-hidden' }, ` ${name}`));
      cancel.addEventListener('click', async () => {
        cancel.disabled = true;
        try { await cancelJob(job.id); } catch (err) { showError(message, err, 'The job was not cancelled'); }
        load();
      });
      actions.push(cancel);
    }
    // a cancelled job that ran lists what it stored before the cancel and what it did not
    if (job.state === 'done' || job.state === 'failed' || (job.state === 'cancelled' && job.total)) {
      const open = h('button', { type: 'button', class: 'btn btn-sm btn-secondary' }, 'Open results', h('span', { class: 'visually-hidden' }, ` of ${name}`));
      open.addEventListener('click', async () => {
        try { onOpen(await docsGet(`/api/jobs/${encodeURIComponent(job.id)}`), name); } catch (err) { showError(message, err, 'The results could not be opened'); }
      });
      actions.push(open);
    }
    const progress = jobCount(job);
    const started = new Date((job.created || 0) * 1000);
    return h('tr', { dataset: { jobId: job.id, state: job.state } },
      h('td', { dataset: { label: 'Job' } }, h('span', { class: 'source-path' }, name)),
      h('td', { dataset: { label: 'Started' } }, Number.isNaN(started.getTime()) ? '' : started.toLocaleString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit', second: '2-digit' })),
      h('td', { dataset: { label: 'State' } }, h('span', { class: `badge ${STATE_BADGE[job.state] ?? ''}` }, job.state), job.state === 'failed' && job.msg ? h('p', { class: 'row-error' }, String(job.msg)) : null),
      h('td', { dataset: { label: 'Progress' } }, progress),
      h('td', { class: 'actions-cell', dataset: { label: 'Actions' } }, h('div', { class: 'row-actions' }, actions)));
  }

  refresh.addEventListener('click', load);
  load();
  return { root, load, update, watch, dispose() { disposed = true; clearTimeout(timer); watchers.clear(); }, notice: (text) => { clear(message); message.append(notice('info', null, h('p', {}, text))); } };
}

/** The result files as CSV (one row a file) for a spreadsheet. */
export function filesCsv(files) {
  const cols = ['source', 'ok', 'error', 'storage_url', 'storage_presigned_url', 'asset_ok', 'asset_fail', 'mappings'];
  const cell = (v) => {
    const s = v === undefined || v === null ? '' : String(v);
    const safe = /^[=+\-@\t\r]/.test(s) ? `'${s}` : s;  // no formulas in a spreadsheet
    return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
  };
  const lines = [cols.join(',')];
  for (const f of files) {
    lines.push([f.source, f.error ? false : f.ok !== false, f.error, f.storage_url, f.storage_presigned_url,
      f.asset_ok, f.asset_fail, Array.isArray(f.mappings) ? f.mappings.length : 0].map(cell).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
