// Small DOM helpers: element builder, form fields with labelled errors, tabs, announcements.

let uid = 0;
/** A page-unique id with a readable prefix. */
export function newId(prefix = 'id') { uid += 1; return `${prefix}-${uid}`; }

/**
 * Build an element: h('button', {class: 'btn', onclick: fn, type: 'button'}, 'Save').
 * Props: class, text, html (trusted only), dataset, on<event>, booleans, other attributes.
 */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'class') el.className = value;
    else if (key === 'text') el.textContent = value;
    else if (key === 'html') el.innerHTML = value;
    else if (key === 'dataset') Object.assign(el.dataset, value);
    else if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'value') el.value = value;
    else if (key === 'checked') el.checked = Boolean(value);
    else if (value === true) el.setAttribute(key, '');
    else el.setAttribute(key, String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Focus a result's heading and scroll its card to the top of the screen, under the top bar
 * when that is sticky (a plain focus() leaves it at the very bottom on a phone). */
export function revealResult(heading) {
  heading.focus({ preventScroll: true });
  const box = heading.closest('.card') || heading;
  const bar = document.getElementById('topbar');
  const sticky = bar && !bar.hidden && getComputedStyle(bar).position === 'sticky';
  const offset = sticky ? bar.getBoundingClientRect().height : 0;
  window.scrollTo({ top: Math.max(0, box.getBoundingClientRect().top + window.scrollY - offset - 12), behavior: 'instant' });
}

export function clear(el) { while (el.firstChild) el.firstChild.remove(); return el; }

const politeEl = () => document.getElementById('live-polite');
const assertiveEl = () => document.getElementById('live-assertive');

/** Say something to screen readers (polite by default). */
export function announce(text, assertive = false) {
  const el = assertive ? assertiveEl() : politeEl();
  if (!el) return;
  el.textContent = '';
  setTimeout(() => { el.textContent = text; }, 30);
}

/**
 * A labelled form field. Returns {wrap, input, error} where `error` is the element the field's
 * error text goes into (linked by aria-describedby).
 */
export function field({ label, name, type = 'text', hint = '', value = '', required = false, autocomplete, options, placeholder, rows, multiple, accept, inputmode, spellcheck, cls = '' }) {
  const id = newId(`f-${name}`);
  const hintId = `${id}-hint`;
  const errId = `${id}-error`;
  let input;
  if (type === 'select') {
    input = h('select', { id, name },
      (options || []).map((o) => (typeof o === 'string' ? h('option', { value: o }, o) : h('option', { value: o.value }, o.label))));
    input.value = value;
  } else if (type === 'textarea') {
    input = h('textarea', { id, name, rows: rows || 6, placeholder, spellcheck: spellcheck === false ? 'false' : undefined });
    input.value = value;
  } else {
    input = h('input', { id, name, type, autocomplete, placeholder, multiple, accept, inputmode, spellcheck: spellcheck === false ? 'false' : undefined });
    if (type !== 'file') input.value = value;
  }
  if (required) { input.required = true; input.setAttribute('aria-required', 'true'); }
  const describedBy = [hint ? hintId : '', errId].filter(Boolean).join(' ');
  input.setAttribute('aria-describedby', describedBy);
  const error = h('p', { class: 'field-error', id: errId, hidden: true });
  const wrap = h('div', { class: `field ${cls}`.trim(), dataset: { field: name } },
    h('label', { for: id }, label),
    hint ? h('p', { class: 'hint', id: hintId }, hint) : null,
    input,
    error);
  return { wrap, input, error };
}

/** A checkbox with its label on the right. */
export function checkbox({ label, name, checked = false, hint = '' }) {
  const id = newId(`c-${name}`);
  const input = h('input', { type: 'checkbox', id, name, checked });
  const hintId = hint ? `${id}-hint` : undefined;
  if (hintId) input.setAttribute('aria-describedby', hintId);
  const wrap = h('div', { class: 'check', dataset: { field: name } }, input,
    h('div', { class: 'check-text' }, h('label', { for: id }, label), hint ? h('p', { class: 'hint', id: hintId }, hint) : null));
  return { wrap, input };
}

/** A radio group rendered as a segmented control. */
export function segmented({ legend, name, options, value, onchange, hideLegend = false }) {
  const inputs = [];
  const group = h('fieldset', { class: 'segmented' },
    h('legend', { class: hideLegend ? 'visually-hidden' : '' }, legend),
    h('div', { class: 'segmented-options' }, options.map((o) => {
      const id = newId(`r-${name}`);
      const input = h('input', { type: 'radio', name, id, value: o.value, checked: o.value === value });
      if (onchange) input.addEventListener('change', () => onchange(o.value));
      inputs.push(input);
      return h('span', { class: 'segment' }, input, h('label', { for: id }, o.label));
    })));
  return { group, get value() { const c = inputs.find((i) => i.checked); return c ? c.value : value; }, inputs };
}

/** Show `message` as the error of a field (or clear it with ''). */
export function setFieldError(f, message) {
  if (!f) return;
  f.error.textContent = message || '';
  f.error.hidden = !message;
  if (message) f.input.setAttribute('aria-invalid', 'true');
  else f.input.removeAttribute('aria-invalid');
  f.wrap.classList.toggle('has-error', Boolean(message));
}

/** An inline message box; kind = error | success | info | warning. Returns the element. */
export function notice(kind, title, ...body) {
  const role = kind === 'error' ? 'alert' : 'status';
  return h('div', { class: `notice notice-${kind}`, role },
    h('span', { class: 'notice-icon', 'aria-hidden': 'true' }, { error: '!', success: '✓', info: 'i', warning: '!' }[kind]),
    h('div', { class: 'notice-body' }, title ? h('p', { class: 'notice-title' }, title) : null, ...body));
}

/** Replace the contents of a message slot with an error (from an ApiError or text). */
export function showError(slot, err, title = '') {
  clear(slot);
  if (!err) return;
  const message = typeof err === 'string' ? err : err.message;
  const extra = [];
  if (err && err.hint) extra.push(h('p', { class: 'notice-hint' }, err.hint));
  slot.append(notice('error', title || null, h('p', {}, message), ...extra));
}

/** Put a button in a busy state (disabled + spinner + label) and back. A button that had
 * the focus gets it back when it is ready again, unless the focus has moved on meanwhile
 * (a disabled button drops the focus to the page, and a keyboard user would start over). */
export function setBusy(button, busy, busyLabel) {
  if (busy) {
    button.dataset.label = button.textContent;
    button.dataset.hadFocus = document.activeElement === button ? '1' : '';
    button.disabled = true;
    button.setAttribute('aria-busy', 'true');
    button.textContent = '';
    button.append(h('span', { class: 'spinner', 'aria-hidden': 'true' }), busyLabel || button.dataset.label);
  } else {
    button.disabled = false;
    button.removeAttribute('aria-busy');
    button.textContent = button.dataset.label || button.textContent;
    const lost = !document.activeElement || document.activeElement === document.body;
    if (button.dataset.hadFocus && lost && button.isConnected) button.focus();
    button.dataset.hadFocus = '';
  }
}

/**
 * Accessible tabs (WAI-ARIA tabs pattern, arrow keys move between tabs).
 * tabs: [{id, label, panel: Node}]. Returns {root, select(id)}.
 */
export function tabs(items, { label = 'Views', onselect } = {}) {
  const base = newId('tabs');
  const list = h('div', { class: 'tablist', role: 'tablist', 'aria-label': label });
  const panels = [];
  const buttons = items.map((t, i) => {
    const tabId = `${base}-tab-${t.id}`;
    const panelId = `${base}-panel-${t.id}`;
    const b = h('button', { type: 'button', class: 'tab', role: 'tab', id: tabId, 'aria-controls': panelId, 'aria-selected': i === 0 ? 'true' : 'false', tabindex: i === 0 ? '0' : '-1', dataset: { tab: t.id } }, t.label);
    const p = h('div', { class: 'tabpanel', role: 'tabpanel', id: panelId, 'aria-labelledby': tabId, tabindex: '0', hidden: i !== 0 }, t.panel);
    panels.push(p);
    b.addEventListener('click', () => select(t.id, false));
    b.addEventListener('keydown', (e) => {
      let j = null;
      if (e.key === 'ArrowRight') j = (i + 1) % items.length;
      else if (e.key === 'ArrowLeft') j = (i - 1 + items.length) % items.length;
      else if (e.key === 'Home') j = 0;
      else if (e.key === 'End') j = items.length - 1;
      if (j !== null) { e.preventDefault(); select(items[j].id, true); }
    });
    list.append(b);
    return b;
  });
  function select(id, focus) {
    items.forEach((t, i) => {
      const on = t.id === id;
      buttons[i].setAttribute('aria-selected', on ? 'true' : 'false');
      buttons[i].tabIndex = on ? 0 : -1;
      panels[i].hidden = !on;
      if (on && focus) buttons[i].focus();
    });
    if (onselect) onselect(id);
  }
  return { root: h('div', { class: 'tabs' }, list, panels), select };
}

/** Copy text to the clipboard; resolves true on success. */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const ta = h('textarea', { class: 'visually-hidden', 'aria-hidden': 'true' });
    ta.value = text;
    document.body.append(ta);
    ta.select();
    let ok = false;
    try { ok = document.execCommand('copy'); } catch { ok = false; }
    ta.remove();
    return ok;
  }
}

/** Offer `blob` as a download named `filename`. */
export function downloadBlob(blob, filename) {
  const url = URL.createObjectURL(blob);
  const a = h('a', { href: url, download: filename, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 30000);
}

/** 1234567 -> "1.2 MB". */
export function formatBytes(n) {
  if (!Number.isFinite(n)) return '';
  const units = ['bytes', 'KB', 'MB', 'GB'];
  let i = 0;
  let v = n;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i += 1; }
  return i === 0 ? `${v} ${units[0]}` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** A drop zone around a visually hidden (but focusable) file input. */
export function dropzone({ label, name, accept, hint, onfile, multiple = false }) {
  const id = newId(`d-${name}`);
  const errId = `${id}-error`;
  const input = h('input', { type: 'file', id, name, accept, class: 'dz-input', multiple, 'aria-describedby': `${id}-hint ${errId}` });
  const chosen = h('p', { class: 'dz-chosen', 'aria-live': 'polite' });
  const zone = h('div', { class: 'dropzone' },
    input,
    h('label', { for: id, class: 'dz-label' },
      h('span', { class: 'dz-icon', 'aria-hidden': 'true' }, '⇪'),
      h('span', { class: 'dz-title' }, label),
      h('span', { class: 'dz-hint', id: `${id}-hint` }, hint)),
    chosen);
  const error = h('p', { class: 'field-error', id: errId, hidden: true });
  const wrap = h('div', { class: 'field', dataset: { field: name } }, zone, error);
  let file = null;
  function set(f) {
    file = f;
    zone.classList.toggle('has-file', Boolean(f));
    chosen.textContent = f ? `Selected: ${f.name} (${formatBytes(f.size)})` : '';
    if (onfile) onfile(f);
  }
  input.addEventListener('change', () => set(input.files && input.files[0] ? input.files[0] : null));
  // Enter opens the file chooser too (browsers open it on Space only), as on any button
  input.addEventListener('keydown', (e) => {
    if (e.key !== 'Enter' || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    e.preventDefault();
    try { input.showPicker(); } catch { input.click(); }
  });
  zone.addEventListener('dragover', (e) => { e.preventDefault(); zone.classList.add('dragging'); });
  zone.addEventListener('dragleave', () => zone.classList.remove('dragging'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('dragging');
    const f = e.dataTransfer && e.dataTransfer.files && e.dataTransfer.files[0];
    if (f) set(f);
  });
  return { wrap, input, error, get file() { return file; }, set, reset() { input.value = ''; set(null); } };
}

/** Page heading block: h1 (focus target on navigation) + lead text. */
export function pageHeader(title, lead, ...actions) {
  return h('div', { class: 'page-header' },
    h('div', {}, h('h1', { tabindex: '-1', class: 'page-title' }, title), lead ? h('p', { class: 'lead' }, lead) : null),
    actions.length ? h('div', { class: 'page-actions' }, actions) : null);
}

/** Card wrapper with an optional heading. */
export function card(title, ...children) {
  const headingId = title ? newId('card') : undefined;
  return h('section', { class: 'card', 'aria-labelledby': headingId },
    title ? h('h2', { class: 'card-title', id: headingId }, title) : null, ...children);
}

/** A "not available on this server" panel for endpoints this deployment lacks. */
export function unavailablePanel(what) {
  return h('div', { class: 'card empty-state', role: 'status' },
    h('p', { class: 'empty-title' }, 'Not available on this server'),
    h('p', { class: 'muted' }, `${what} is not offered by this deployment yet. Ask the administrator to enable it.`));
}
