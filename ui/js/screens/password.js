// "Change password" dialog for everyone: the current password, then the new one twice.
// On success every other session of the user ends; this one stays.
import { authApi } from '../api.js';
import { dialog, passwordPair } from '../dialog.js';
import { announce, clear, field, h, notice, setBusy, setFieldError, showError } from '../dom.js';

export function openChangePassword(opener) {
  const current = field({ label: 'Current password', name: 'oldPassword', type: 'password', required: true, autocomplete: 'current-password' });
  const pair = passwordPair(field, setFieldError);
  const message = h('div', { class: 'form-message', 'aria-live': 'polite' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Change password');
  const cancel = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Cancel');
  const form = h('form', { class: 'stack', novalidate: true },
    h('p', { class: 'muted small' }, 'Your other sessions (other browsers and devices) will be signed out.'),
    current.wrap, pair.first.wrap, pair.again.wrap, message, h('div', { class: 'dialog-actions' }, cancel, submit));
  const dlg = dialog('Change password', form, () => { if (opener) opener.focus(); });
  cancel.addEventListener('click', () => dlg.close());
  current.input.focus();
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(message);
    setFieldError(current, '');
    if (!current.input.value) { setFieldError(current, 'Enter your current password.'); current.input.focus(); return; }
    const next = pair.value();
    if (next === null) { announce('Some fields need attention.', true); return; }
    setBusy(submit, true, 'Changing…');
    try {
      await authApi('PUT', '/api/auth/password', { oldPassword: current.input.value, newPassword: next });
      clear(form);
      form.append(notice('success', 'Password changed', h('p', {}, 'Your other sessions were signed out. Use the new password next time.')),
        h('div', { class: 'dialog-actions' }, h('button', { type: 'button', class: 'btn btn-primary', onclick: () => dlg.close() }, 'Done')));
      form.querySelector('.dialog-actions button').focus();
      announce('Password changed.');
    } catch (err) {
      setBusy(submit, false);
      if (err.code === 'WRONG_PASSWORD') {
        setFieldError(current, 'This is not your current password.');
        current.input.select();
        current.input.focus();
      } else if (err.field === 'password' || /newPassword/.test(err.raw)) {
        setFieldError(pair.first, err.message);
        pair.first.input.focus();
      } else showError(message, err);
      announce(err.message, true);
    }
  });
}
