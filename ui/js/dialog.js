// A modal <dialog> with a heading and a close button; focus returns to `opener` on close.
import { h, newId } from './dom.js';

export function dialog(title, content, onclose) {
  const titleId = newId('dlg');
  const close = h('button', { type: 'button', class: 'btn btn-ghost btn-icon-only dialog-close', 'aria-label': 'Close' }, '×');
  const dlg = h('dialog', { class: 'dialog', 'aria-labelledby': titleId },
    h('div', { class: 'dialog-head' }, h('h2', { id: titleId }, title), close), content);
  close.addEventListener('click', () => dlg.close());
  dlg.addEventListener('close', () => { dlg.remove(); if (onclose) onclose(); });
  document.body.append(dlg);
  dlg.showModal();
  return dlg;
}

/** Two password fields (new + again) checked alike: 8 to 128 characters and equal. */
export function passwordPair(field, setFieldError, label = 'New password') {
  const first = field({ label, name: 'newPassword', type: 'password', required: true, autocomplete: 'new-password', hint: '8 to 128 characters.' });
  const again = field({ label: `${label} again`, name: 'newPasswordAgain', type: 'password', required: true, autocomplete: 'new-password' });
  return {
    first, again,
    /** The password, or null after marking what is wrong. */
    value() {
      setFieldError(first, '');
      setFieldError(again, '');
      const v = first.input.value;
      if (v.length < 8 || v.length > 128) { setFieldError(first, 'The password needs 8 to 128 characters.'); first.input.focus(); return null; }
      if (again.input.value !== v) { setFieldError(again, 'The two passwords differ.'); again.input.focus(); return null; }
      return v;
    },
  };
}

/** Ask before a change that cannot simply be taken back (a role, a disabled account).
 * Resolves true when confirmed; on Cancel, Escape or × focus goes back to `opener`. */
export function confirmDialog({ title, text, confirmLabel, danger = false, opener = null }) {
  return new Promise((resolve) => {
    let confirmed = false;
    const ok = h('button', { type: 'button', class: `btn ${danger ? 'btn-danger' : 'btn-primary'}` }, confirmLabel);
    const cancel = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Cancel');
    const dlg = dialog(title, h('div', { class: 'stack' }, h('p', {}, text), h('div', { class: 'dialog-actions' }, cancel, ok)), () => {
      if (!confirmed && opener) opener.focus();
      resolve(confirmed);
    });
    cancel.addEventListener('click', () => dlg.close());
    ok.addEventListener('click', () => { confirmed = true; dlg.close(); });
    cancel.focus();
  });
}

const PASSWORD_ALPHABET = 'abcdefghijkmnpqrstuvwxyzABCDEFGHJKLMNPQRSTUVWXYZ23456789';

/** A random password of `length` characters from an alphabet without look-alikes (0/O, 1/l). */
export function randomPassword(length = 16) {
  const bytes = crypto.getRandomValues(new Uint32Array(length));
  return Array.from(bytes, (b) => PASSWORD_ALPHABET[b % PASSWORD_ALPHABET.length]).join('');
}

/** "Show" and "Generate" for new-password inputs: Generate fills every input with one random
 * password and shows it, so an admin can read it out or copy it before handing it over. */
export function passwordTools(inputs) {
  const show = h('button', { type: 'button', class: 'btn btn-ghost btn-sm', 'aria-pressed': 'false' }, 'Show password');
  const generate = h('button', { type: 'button', class: 'btn btn-secondary btn-sm' }, 'Generate password');
  const setShown = (on) => {
    for (const input of inputs) input.type = on ? 'text' : 'password';
    show.setAttribute('aria-pressed', String(on));
    show.textContent = on ? 'Hide password' : 'Show password';
  };
  show.addEventListener('click', () => setShown(inputs[0].type === 'password'));
  generate.addEventListener('click', () => {
    const value = randomPassword();
    for (const input of inputs) { input.value = value; input.dataset.generated = value; }
    setShown(true);
    inputs[0].focus();
    inputs[0].select();
  });
  return h('div', { class: 'row-inline password-tools' }, show, generate);
}
