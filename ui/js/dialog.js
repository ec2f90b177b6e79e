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
