// Pieces shared by several screens: progress bar, stored-link pair, theme list.
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

/**
 * What the converter said besides the result: its warnings (problems: something left out or
 * approximated) in the amber box, and its notes (facts that are no problem, such as
 * "converted by LibreOffice" or the OCR confidence) apart, as plain information.
 */
export function conversionRemarks(data, from = '') {
  const text = (w) => (typeof w === 'string' ? w : JSON.stringify(w));
  const warnings = Array.isArray(data.warnings) ? data.warnings : [];
  const notes = Array.isArray(data.notes) ? data.notes : [];
  if (!warnings.length && !notes.length) return null;
  return h('div', { class: 'remarks' },
    warnings.length ? h('details', { class: 'warnings' }, h('summary', {}, `${warnings.length} warning${warnings.length > 1 ? 's' : ''}${from ? ` ${from}` : ''}`),
      h('ul', {}, warnings.map((w) => h('li', {}, text(w))))) : null,
    notes.length ? h('div', { class: 'conversion-notes', role: 'note', 'aria-label': 'Notes on the conversion' },
      h('span', { class: 'notes-icon', 'aria-hidden': 'true' }, 'i'),
      h('ul', {}, notes.map((n) => h('li', {}, text(n))))) : null);
}

/** When a presigned S3 link stops working, read from the link itself (X-Amz-Date and
 * X-Amz-Expires): {seconds, until}, or null for a link that carries neither. */
export function linkLifetime(url) {
  try {
    const q = new URL(url).searchParams;
    const seconds = Number(q.get('X-Amz-Expires'));
    const m = (q.get('X-Amz-Date') || '').match(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/);
    if (!seconds || !m) return null;
    const start = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]);
    return { seconds, until: new Date(start + seconds * 1000) };
  } catch {
    return null;
  }
}

function inWords(seconds) {
  if (seconds % 86400 === 0) return seconds === 86400 ? '24 hours' : `${seconds / 86400} days`;
  if (seconds % 3600 === 0) return seconds === 3600 ? '1 hour' : `${seconds / 3600} hours`;
  return `${Math.round(seconds / 60)} minutes`;
}

let publicPromise = null;
/** Whether the storage in use allows public reads: true/false for an ADMIN (GET /config),
 * undefined when this caller may not ask. Cached for the page. */
export function storageIsPublic() {
  if (!publicPromise) {
    publicPromise = fetch('/config', { cache: 'no-store' })   // signed in by the session cookie
      .then((r) => r.json().then((d) => (r.ok ? d : null), () => null))   // the body read either way
      .then((d) => (d && d.storage && typeof d.storage.public_read === 'boolean' ? d.storage.public_read : undefined))
      .catch(() => undefined);
  }
  return publicPromise;
}

function linkRow(name, value, note) {
  const status = h('span', { class: 'inline-status', 'aria-live': 'polite' });
  const copy = h('button', { type: 'button', class: 'btn btn-secondary btn-sm' }, 'Copy', h('span', { class: 'visually-hidden' }, ` ${name.toLowerCase()}`));
  copy.addEventListener('click', async () => {
    status.textContent = (await copyText(value)) ? 'Copied.' : 'Copy failed.';
    setTimeout(() => { status.textContent = ''; }, 3000);
  });
  return h('div', { class: 'link-row' },
    h('dt', {}, name, h('span', { class: 'muted small' }, ` — ${note}`)),
    h('dd', {}, h('a', { href: value, target: '_blank', rel: 'noopener noreferrer', class: 'link-url' }, value), copy, status));
}

/**
 * The links of a stored file. A lasting link (`storage_link_kind` service or direct) is shown
 * alone. Otherwise the presigned link comes first (it opens on a private bucket too) with its
 * lifetime; the direct link is offered as the first when the bucket is known
 * to be public, not at all when it is known to be private, and otherwise folded away with
 * a word on when it opens.
 */
export function linkPair(data) {
  const list = h('dl', { class: 'links' });
  if (data.storage_link_kind === 'service' || data.storage_link_kind === 'direct') {
    // one lasting link (both fields hold it): through this service, or a verified public bucket
    const url = data.storage_presigned_url || data.storage_url;
    if (url) {
      list.append(linkRow('Link', url, data.storage_link_kind === 'service'
        ? 'Does not expire; opens for anyone who has the link, through this service.'
        : 'Does not expire: the bucket allows public reads.'));
    }
    return list;
  }
  const life = data.storage_presigned_url ? linkLifetime(data.storage_presigned_url) : null;
  const lifeNote = life
    ? `Valid for ${inWords(life.seconds)}, until ${life.until.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })}; after that it stops working (documents that embed such links too).`
    : 'Time-limited; works on private buckets.';
  if (data.storage_presigned_url) list.append(linkRow('Presigned link', data.storage_presigned_url, lifeNote));
  if (data.storage_url) {
    storageIsPublic().then((pub) => {
      if (pub === true) list.prepend(linkRow('Direct link', data.storage_url, 'Does not expire: the bucket allows public reads.'));
      else if (pub === undefined) {
        list.append(h('details', { class: 'direct-link' }, h('summary', {}, 'Direct link (opens only if the bucket allows public reads)'),
          linkRow('Direct link', data.storage_url, 'A private bucket answers it with 403.')));
      }
    });
  }
  return list;
}

let themesPromise = null;
/** Theme names for css_name (GET /md/themes), falling back to the built-in four. */
export function themes() {
  if (!themesPromise) {
    themesPromise = fetch('/md/themes', { cache: 'no-store' })
      .then((r) => r.json().then((d) => (r.ok ? d : null), () => null))   // the body read either way
      .then((d) => (d && Array.isArray(d.themes) && d.themes.length ? d.themes : null))
      .catch(() => null)
      .then((list) => list || ['default', 'github', 'academic', 'compact']);
  }
  return themesPromise;
}
