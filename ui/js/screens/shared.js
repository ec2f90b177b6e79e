// Pieces shared by several screens: progress bar, stored-link pair, theme list.
import { session } from '../api.js';
import { copyText, h, newId } from '../dom.js';

/** A labelled progress bar: start(text), set(fraction, text), busy(text), done(). */
export function progressBar(label) {
  const id = newId('progress');
  const text = h('span', { class: 'progress-text', id: `${id}-text` });
  const bar = h('progress', { id, max: '1', 'aria-labelledby': `${id}-text` });
  const el = h('div', { class: 'progress', hidden: true, role: 'status', 'aria-live': 'polite', 'aria-label': label }, text, bar);
  return {
    el,
    start(t) { el.hidden = false; bar.removeAttribute('value'); text.textContent = t; },
    set(f, t) { el.hidden = false; bar.value = Math.max(0, Math.min(1, f)); text.textContent = t; },
    busy(t) { el.hidden = false; bar.removeAttribute('value'); if (text.textContent !== t) text.textContent = t; },
    done() { el.hidden = true; },
  };
}

/** Direct + presigned links of a stored file, each with a copy button. */
export function linkPair(data) {
  const rows = [
    ['Direct link', data.storage_url, 'May answer 403 when the bucket is private.'],
    ['Presigned link', data.storage_presigned_url, 'Time-limited; works on private buckets.'],
  ];
  return h('dl', { class: 'links' }, rows.filter(([, v]) => v).map(([name, value, note]) => {
    const status = h('span', { class: 'inline-status', 'aria-live': 'polite' });
    const copy = h('button', { type: 'button', class: 'btn btn-secondary btn-sm' }, 'Copy', h('span', { class: 'visually-hidden' }, ` ${name.toLowerCase()}`));
    copy.addEventListener('click', async () => {
      status.textContent = (await copyText(value)) ? 'Copied.' : 'Copy failed.';
      setTimeout(() => { status.textContent = ''; }, 3000);
    });
    return h('div', { class: 'link-row' },
      h('dt', {}, name, h('span', { class: 'muted small' }, ` — ${note}`)),
      h('dd', {}, h('a', { href: value, target: '_blank', rel: 'noopener noreferrer', class: 'link-url' }, value), copy, status));
  }));
}

let themesPromise = null;
/** Theme names for css_name (GET /md/themes), falling back to the built-in four. */
export function themes() {
  if (!themesPromise) {
    themesPromise = fetch('/md/themes', { cache: 'no-store', headers: session.token ? { Authorization: `Bearer ${session.token}` } : {} })
      .then((r) => (r.ok ? r.json() : null))
      .then((d) => (d && Array.isArray(d.themes) && d.themes.length ? d.themes : null))
      .catch(() => null)
      .then((list) => list || ['default', 'github', 'academic', 'compact']);
  }
  return themesPromise;
}
