// Markdown previews made by the service (POST /md/preview: its own Markdown reader and HTML
// writer), so what the app shows is what the service reads; there is no Markdown parser in the
// browser. The HTML is shown in a sandboxed iframe (sandbox="": no scripts, an opaque origin,
// no forms, no popups) whose document also carries a policy allowing only inline styles and
// data: images, so whatever the Markdown holds can neither run nor reach the app or the network.
import { docsJson } from './api.js';
import { h } from './dom.js';

const POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'";
const STYLE = `
:root { color-scheme: light; }
body { margin: 0; padding: 28px 32px; font: 14.5px/1.65 system-ui, -apple-system, "Segoe UI", "Noto Sans", "DejaVu Sans", sans-serif; color: #1f2328; overflow-wrap: anywhere; }
body > :first-child { margin-top: 0; }
h1, h2, h3, h4, h5, h6 { line-height: 1.25; margin: 1.4em 0 .5em; }
h1 { font-size: 1.75em; } h2 { font-size: 1.35em; padding-bottom: .25em; border-bottom: 1px solid #e2e5ea; } h3 { font-size: 1.12em; }
p, ul, ol, table, pre, blockquote { margin: 0 0 .85em; }
ul, ol { padding-left: 1.5em; }
a { color: #0969da; }
img { max-width: 100%; height: auto; }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", Consolas, monospace; font-size: .88em; }
code { background: #f0f1f4; padding: .1em .35em; border-radius: 4px; }
pre { background: #f6f7f9; border: 1px solid #e2e5ea; border-radius: 6px; padding: 12px 14px; overflow: auto; }
pre code { background: none; padding: 0; }
blockquote { margin-left: 0; padding: 2px 16px; border-left: 3px solid #c9cfe9; color: #3d4450; }
table { border-collapse: collapse; display: block; overflow-x: auto; max-width: 100%; width: max-content; font-size: .93em; }
th, td { border: 1px solid #e2e5ea; padding: 6px 10px; text-align: left; vertical-align: top; }
th { background: #f9fafb; }
hr { border: 0; border-top: 1px solid #e2e5ea; margin: 1.6em 0; }
li.task-list-item { list-style: none; }
.placeholder { background: #fff8c5; border: 1px dashed #d4a72c; padding: 0 .3em; }
.math.display { overflow-x: auto; text-align: center; }
section.footnotes { border-top: 1px solid #e2e5ea; margin-top: 2em; font-size: .88em; color: #575f6b; }
.empty { color: #575f6b; }
`;

/** The whole document shown in a preview frame around the service's HTML fragment. */
function frameDocument(fragment) {
  return `<!doctype html><html><head><meta charset="utf-8"><meta http-equiv="Content-Security-Policy" content="${POLICY}"><style>${STYLE}</style></head><body>${fragment}</body></html>`;
}

/** A sandboxed frame for previews; `title` names it for screen readers. */
export function previewFrame(title, cls = 'md-preview') {
  return h('iframe', { class: cls, sandbox: '', title, referrerpolicy: 'no-referrer', srcdoc: frameDocument('') });
}

/** Show the service's HTML `fragment` (or, when empty, `emptyText`) in `frame`. */
export function showInFrame(frame, fragment, emptyText = 'Nothing to preview yet.') {
  const empty = `<p class="empty">${emptyText.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c])}</p>`;
  frame.srcdoc = frameDocument(fragment.trim() ? fragment : empty);
}

// How long a preview may take before the app gives up on it: the service stops a preview
// that runs past its own job limit (120 s by default) and says so (50401); this adds 30 s
// for a wait in its queue and the way back. Past it the answer is lost (a stalled service, a
// proxy that dropped the request), not late. The app cannot read the service's setting:
// GET /config, which holds it, is for ADMINs.
const PREVIEW_LIMIT_SECONDS = 150;

/** The service's preview of `markdown`: `{html, warnings}` (rejects with the ApiError; code
 * TIMEOUT when the service has not answered within PREVIEW_LIMIT_SECONDS). */
export function fetchPreview(markdown, { signal } = {}) {
  return docsJson('/md/preview', { markdown }, { signal, limitSeconds: PREVIEW_LIMIT_SECONDS });
}

/**
 * Keep `frame` showing the service's preview of a text that changes: `update(text)` asks again
 * `delay` ms after the last change (an earlier request still out is cancelled), the last good
 * preview stays while typing, and a failure is one short line in `status` (cleared by the next
 * success). `stop()` cancels what is pending.
 */
export function livePreview({ frame, status, delay = 300 }) {
  let timer = null;
  let pending = null;
  async function run(text) {
    if (pending) pending.abort();
    const mine = new AbortController();
    pending = mine;
    if (!text.trim()) {
      showInFrame(frame, '');
      status.textContent = '';
      return;
    }
    status.dataset.busy = '1';
    try {
      const data = await fetchPreview(text, { signal: mine.signal });
      if (pending !== mine) return;
      showInFrame(frame, data.html || '');
      status.textContent = '';
    } catch (err) {
      if (pending !== mine || err.code === 'ABORTED') return;
      status.textContent = `Preview not updated: ${err.message}`;
    } finally {
      if (pending === mine) { pending = null; delete status.dataset.busy; }
    }
  }
  return {
    update(text, { now = false } = {}) {
      clearTimeout(timer);
      if (now) run(text); else timer = setTimeout(() => run(text), delay);
    },
    stop() { clearTimeout(timer); if (pending) pending.abort(); },
  };
}
