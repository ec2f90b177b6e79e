// Convert: a large document or a scan runs as a job (POST /api/convert with async=true), so a
// person sees "page N of M", the time left at the pace so far and a Cancel button, instead of
// a spinner. The job's pages come from its record (done/total) by its event stream, and by
// polling when the stream breaks; the result (stored by the job) is read back through the
// service so the screen shows it as a direct conversion would.
import { docsError, docsEvents, docsForm, docsGet, Unavailable } from '../api.js';
import { cancelJob } from './batch-jobs.js';

const MB = 1024 * 1024;
const ENDED = ['done', 'failed', 'cancelled'];
const IMAGE_RE = /\.(png|jpe?g|tiff?|webp)$/i;
const sleep = (ms) => new Promise((r) => { setTimeout(r, ms); });

/** True when `file` is better converted as a job: any file over 2 MB, a PDF over 1 MB (a scan
 * is read page by page by OCR), and every image (a photo or scan goes to OCR). */
export function runsAsJob(file) {
  if (!file) return false;
  const pdf = /\.pdf$/i.test(file.name) || file.type === 'application/pdf';
  const image = IMAGE_RE.test(file.name) || (file.type || '').startsWith('image/');
  return file.size > 2 * MB || (pdf && file.size > MB) || image;
}

/** "about 40 s left" / "about 3 min left" from the pages done so far and the time they took;
 * '' until one page is done. */
export function timeLeft(done, total, seconds) {
  if (!done || !total || done >= total || seconds <= 0) return '';
  const left = Math.max(1, Math.round((seconds / done) * (total - done)));
  if (left < 60) return `about ${left} s left`;
  return `about ${Math.round(left / 60)} min left`;
}

/** One line for a running job: "Page 3 of 20 · about 40 s left". */
export function pageLine(st, seconds) {
  if (st.state === 'queued') return 'Queued…';
  if (!st.total) return 'Reading the document…';
  const shown = Math.min(st.total, st.done + (st.done < st.total ? 1 : 0));
  const left = timeLeft(st.done, st.total, seconds);
  return `Page ${shown} of ${st.total}${left ? ` · ${left}` : ''}`;
}

/** The text a finished job stored (the output of a conversion that was not asked to be
 * saved): by the service's own link of the object (read from this origin, whatever public
 * address the link names), else through the service's download of the company's storage. */
async function storedText(result) {
  const link = new URL(result.storage_url, location.href);
  if (link.pathname.startsWith('/proxy/object/')) {
    const resp = await fetch(link.pathname + link.search, { cache: 'no-store', credentials: 'omit' });
    if (!resp.ok) throw docsError({ code: resp.status === 404 ? 40401 : 50201, msg: 'the stored result could not be read', data: null }, resp.status);
    return resp.text();
  }
  const fd = new FormData();
  fd.append('url', result.storage_url);
  const got = await docsForm('/proxy/download', fd);
  return got && got.blob ? got.blob.text() : '';
}

/**
 * Run the conversion form `fd` as a job. `bar` is the screen's progress bar, `cancelButton`
 * its Cancel button (shown while the job runs), `saved` whether the person asked to keep the
 * result in storage. Resolves to the answer a direct request gives ({content, ...} or the
 * stored links); rejects with the job's error, or a 40901 error carrying `job` when cancelled.
 * Rejects with `fallback` set when the service cannot run jobs (no storage): convert directly.
 */
export async function convertAsJob(fd, { bar, cancelButton, saved, isGone = () => false }) {
  fd.append('async', 'true');
  let first;
  try {
    first = await docsForm('/api/convert', fd, {
      onProgress: (f) => { if (f !== null && f < 1) bar.set(f, `Uploading… ${Math.round(f * 100)}%`); else bar.busy('Queued…'); },
    });
  } catch (err) {
    if (err && err.code === 50201) err.fallback = true;  // jobs keep their input in storage
    throw err;
  }
  if (!first || !first.job_id) return first;
  const jobId = first.job_id;
  const statusUrl = first.status_url || `/api/jobs/${jobId}`;
  let began = 0;  // when the first page count arrived (the pace counts from there)
  let latest = { state: 'queued', done: 0, total: null };
  const paint = (st) => {
    if (!ENDED.includes(st.state)) {
      if (st.total && !began) began = performance.now();
      const seconds = began ? (performance.now() - began) / 1000 : 0;
      const line = pageLine(st, seconds);
      if (st.total) bar.set(st.done / st.total, line); else bar.busy(line);
    }
  };
  const show = (st) => {
    if (ENDED.includes(latest.state)) return;
    if (st.total === latest.total && st.done < latest.done && st.state === latest.state) return;
    latest = { ...latest, ...st };
    paint(latest);
  };
  cancelButton.hidden = false;
  cancelButton.disabled = false;
  cancelButton.onclick = async () => {
    cancelButton.disabled = true;
    bar.busy('Cancelling…');
    try { await cancelJob(jobId); } catch { /* ended meanwhile: its end is shown */ }
  };
  const stop = new AbortController();
  const watchdog = setInterval(() => { if (isGone()) stop.abort(); }, 500);
  let end = null;
  try {
    await docsEvents(`${statusUrl}/events`, (name, data) => {
      if (name === 'progress') show(data);
      if (name === 'end') end = data;
    }, { signal: stop.signal });
  } catch (e) {
    if (isGone()) throw new Error('left the page');
    if (e && e.code && e.code !== 'HTTP_404' && e.code !== 'ABORTED' && !(e instanceof Unavailable)) throw e;
  } finally {
    clearInterval(watchdog);
  }
  let st = end ? await docsGet(statusUrl) : null;  // the end event leaves the result out
  while (!st || !ENDED.includes(st.state)) {  // the stream broke: poll until the job ends
    if (isGone()) throw new Error('left the page');
    if (st) { show(st); await sleep(400); }
    st = await docsGet(statusUrl);
  }
  cancelButton.hidden = true;
  cancelButton.onclick = null;
  if (st.state === 'cancelled') {
    throw Object.assign(docsError({ code: 40901, msg: 'The conversion was cancelled.', data: null }), { job: st });
  }
  if (st.state === 'failed') throw docsError({ code: st.code, msg: st.msg, data: null });
  const result = st.result || {};
  if (saved) return result;
  return { ...result, content: await storedText(result) };
}
