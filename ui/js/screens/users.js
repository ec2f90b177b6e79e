// Users (ADMIN): paged, filterable list; create, rename, enable/disable, change role,
// reset a password.
import { authApi, session, Unavailable } from '../api.js';
import { confirmDialog, dialog, passwordPair, passwordTools } from '../dialog.js';
import { announce, card, clear, copyText, field, h, newId, notice, pageHeader, setBusy, setFieldError, showError, unavailablePanel } from '../dom.js';

const ROLES = ['ADMIN', 'REVIEWER', 'ANNOTATOR'];
const STATUSES = ['ACTIVE', 'DISABLED'];
// keys that move through a closed list one option at a time: a change they make is only a
// choice in progress, confirmed by Enter or by leaving the list (not a question per key)
const LIST_KEYS = new Set(['ArrowUp', 'ArrowDown', 'ArrowLeft', 'ArrowRight', 'Home', 'End', 'PageUp', 'PageDown']);
const ROLE_WORDS = {
  ADMIN: 'An Admin manages users, API keys, storage and the activity log of the company.',
  REVIEWER: 'A Reviewer works with documents; no administration of users, keys or storage.',
  ANNOTATOR: 'An Annotator works with documents; no administration of users, keys or storage.',
};

function render(view, ctx) {
  const state = { page: 1, pageSize: 20, role: '', status: '', total: 0, items: [] };
  const pageMessage = h('div', { class: 'page-message', 'aria-live': 'polite' });
  const newButton = h('button', { type: 'button', class: 'btn btn-primary' }, h('span', { 'aria-hidden': 'true', class: 'btn-icon' }, '+'), 'New user');

  const roleFilter = field({ label: 'Role', name: 'role-filter', type: 'select', options: [{ value: '', label: 'All roles' }, ...ROLES.map((r) => ({ value: r, label: titleCase(r) }))] });
  const statusFilter = field({ label: 'Status', name: 'status-filter', type: 'select', options: [{ value: '', label: 'Any status' }, ...STATUSES.map((s) => ({ value: s, label: titleCase(s) }))] });
  const sizeFilter = field({ label: 'Per page', name: 'page-size', type: 'select', value: '20', options: ['10', '20', '50', '100'] });
  for (const f of [roleFilter, statusFilter, sizeFilter]) {
    f.input.addEventListener('change', () => {
      state.role = roleFilter.input.value;
      state.status = statusFilter.input.value;
      state.pageSize = Number(sizeFilter.input.value);
      state.page = 1;
      load();
    });
  }
  const filters = h('form', { class: 'filters', 'aria-label': 'Filter users', onsubmit: (e) => e.preventDefault() }, roleFilter.wrap, statusFilter.wrap, sizeFilter.wrap);

  const tbody = h('tbody');
  const table = h('table', { class: 'data-table users-table' },
    h('caption', { class: 'visually-hidden' }, 'Users of your company'),
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'User'), h('th', { scope: 'col' }, 'Role'),
      h('th', { scope: 'col' }, 'Status'), h('th', { scope: 'col', class: 'al-r' }, 'Actions'))),
    tbody);
  const listMessage = h('div', { class: 'list-message' });
  const summary = h('p', { class: 'pager-summary', 'aria-live': 'polite' });
  const prev = h('button', { type: 'button', class: 'btn btn-secondary btn-sm' }, '‹ Previous');
  const next = h('button', { type: 'button', class: 'btn btn-secondary btn-sm' }, 'Next ›');
  prev.addEventListener('click', () => { if (state.page > 1) { state.page -= 1; load(prev); } });
  next.addEventListener('click', () => { state.page += 1; load(next); });
  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages of users' }, summary, h('div', { class: 'pager-buttons' }, prev, next));

  const body = h('div', {});
  view.append(
    pageHeader('Users', 'People of your company. A new role or a disabled account takes effect on their very next request: a disabled user\'s sessions end and their API keys stop working until enabled again.', newButton),
    pageMessage,
    body);
  body.append(card(null, filters, listMessage, h('div', { class: 'table-scroll' }, table), pager));
  const flash = ctx.takeFlash ? ctx.takeFlash() : '';
  if (flash) pageMessage.append(notice('success', null, h('p', {}, flash)));

  newButton.addEventListener('click', () => { clearMessages(); openCreate(); });

  /** Success and error notes of earlier actions go when the next action starts. */
  function clearMessages() {
    clear(pageMessage);
    for (const m of tbody.querySelectorAll('.row-message')) clear(m);
  }

  async function load(focusAfter) {
    clear(listMessage);
    table.setAttribute('aria-busy', 'true');
    const q = new URLSearchParams({ page: String(state.page), pageSize: String(state.pageSize) });
    if (state.role) q.set('role', state.role);
    if (state.status) q.set('status', state.status);
    try {
      const data = await authApi('GET', `/api/users?${q}`);
      state.items = data.items || [];
      state.total = data.total || 0;
      state.page = data.page || state.page;
      if (!state.items.length && state.total && state.page > 1) { state.page = Math.max(1, Math.ceil(state.total / state.pageSize)); return load(focusAfter); }
      drawRows();
    } catch (err) {
      if (err instanceof Unavailable) { clear(body); body.append(unavailablePanel('User administration')); return undefined; }
      clear(tbody);
      showError(listMessage, err, 'The list could not be loaded');
    } finally {
      table.removeAttribute('aria-busy');
    }
    if (focusAfter && focusAfter.disabled) (state.page > 1 ? prev : next).focus();
    return undefined;
  }

  function drawRows() {
    clear(tbody);
    if (!state.items.length) {
      tbody.append(h('tr', { class: 'empty-row' }, h('td', { colspan: '4' },
        h('p', { class: 'empty-title' }, 'No users match'),
        h('p', { class: 'muted' }, state.role || state.status ? 'Try other filters.' : 'Create the first one with "New user".'))));
    }
    for (const u of state.items) tbody.append(...row(u));
    const from = state.total ? (state.page - 1) * state.pageSize + 1 : 0;
    const to = Math.min(state.total, state.page * state.pageSize);
    const pages = Math.max(1, Math.ceil(state.total / state.pageSize));
    summary.textContent = state.total ? `${from}–${to} of ${state.total} users · page ${state.page} of ${pages}` : '0 users';
    prev.disabled = state.page <= 1;
    next.disabled = state.page >= pages;
  }

  function row(u) {
    const me = session.user && session.user.id === u.id;
    const msgId = newId('row-msg');
    const message = h('div', { class: 'row-message', id: msgId, 'aria-live': 'polite' });
    const roleId = newId('role');
    const roleSelect = h('select', { id: roleId, class: 'select-sm', 'aria-describedby': msgId, dataset: { action: 'role' } },
      ROLES.map((r) => h('option', { value: r }, titleCase(r))));
    roleSelect.value = u.role;
    // A pick with the mouse (or the open list) asks at once; arrow keys on the closed list
    // only choose: Enter or leaving the list asks, Escape puts the role back.
    let byKeys = false;
    let asking = false;
    const pending = (on) => {
      clear(message);
      if (on) message.append(h('p', { class: 'muted small' }, `Press Enter to make ${displayName(u)} ${titleCase(roleSelect.value)}, or Escape to keep ${titleCase(u.role)}.`));
    };
    roleSelect.addEventListener('mousedown', () => { byKeys = false; });
    roleSelect.addEventListener('keydown', (e) => {
      const changed = roleSelect.value !== u.role;
      if (e.key === 'Enter' && changed) { e.preventDefault(); commitRole(); return; }
      if (e.key === 'Escape' && changed) { e.preventDefault(); roleSelect.value = u.role; pending(false); return; }
      byKeys = LIST_KEYS.has(e.key) && !e.altKey;  // Alt+Down and Space open the list
    });
    roleSelect.addEventListener('change', () => {
      if (byKeys) { byKeys = false; pending(roleSelect.value !== u.role); return; }
      commitRole();
    });
    roleSelect.addEventListener('blur', () => { if (roleSelect.value !== u.role) commitRole(); });
    async function commitRole() {
      if (asking || roleSelect.value === u.role) return;
      asking = true;
      const wanted = roleSelect.value;
      clearMessages();
      const ok = await confirmDialog({
        title: `Make ${displayName(u)} ${titleCase(wanted)}?`,
        text: `${ROLE_WORDS[wanted]} The change applies on ${me ? 'your' : 'their'} very next request.`,
        confirmLabel: `Make ${titleCase(wanted)}`, opener: roleSelect,
      });
      if (!ok) { roleSelect.value = u.role; asking = false; return; }
      roleSelect.disabled = true;
      try {
        await authApi('PUT', `/api/users/${u.id}/role`, { role: wanted });
        u.role = wanted;
        replaceRow(u, 'role', `${displayName(u)} is now ${titleCase(wanted)}.`);
        if (me) refreshMe();
      } catch (err) {
        roleSelect.disabled = false;
        roleSelect.value = u.role;
        rowError(message, err, roleSelect);
      }
      asking = false;
    }
    const active = u.status === 'ACTIVE';
    // one's own account is not disabled from here: said before, not refused after the question
    const selfNoteId = me && active ? newId('self-note') : null;
    const statusButton = h('button', { type: 'button', class: `btn btn-sm ${active ? 'btn-danger-outline' : 'btn-secondary'}`, 'aria-describedby': selfNoteId ? `${selfNoteId} ${msgId}` : msgId, 'aria-disabled': selfNoteId ? 'true' : undefined, dataset: { action: 'status' }, title: selfNoteId ? undefined : active ? 'Their sessions end and their API keys stop working until enabled again' : 'Their API keys work again' },
      active ? 'Disable' : 'Enable', h('span', { class: 'visually-hidden' }, ` ${displayName(u)}`));
    statusButton.addEventListener('click', async () => {
      const wanted = active ? 'DISABLED' : 'ACTIVE';
      if (selfNoteId) { announce(SELF_DISABLE); return; }
      clearMessages();
      if (active && !await confirmDialog({
        title: `Disable ${displayName(u)}?`,
        text: `${displayName(u)} is signed out at once, their API keys stop working, and they cannot sign in until an administrator enables the account again (which also brings their keys back).`,
        confirmLabel: 'Disable', danger: true, opener: statusButton,
      })) return;
      setBusy(statusButton, true, active ? 'Disabling…' : 'Enabling…');
      try {
        await authApi('PUT', `/api/users/${u.id}/status`, { status: wanted });
        u.status = wanted;
        replaceRow(u, 'status', wanted === 'ACTIVE' ? `${displayName(u)} is enabled. Their API keys work again.` : `${displayName(u)} is disabled. Their sessions end and their API keys stop working until enabled again.`);
      } catch (err) {
        setBusy(statusButton, false);
        rowError(message, err, statusButton);
      }
    });
    const renameButton = h('button', { type: 'button', class: 'btn btn-sm btn-secondary', dataset: { action: 'rename' } },
      'Rename', h('span', { class: 'visually-hidden' }, ` ${displayName(u)}`));
    renameButton.addEventListener('click', () => { clearMessages(); openRename(u, renameButton); });
    const resetButton = h('button', { type: 'button', class: 'btn btn-sm btn-secondary', dataset: { action: 'reset-password' } },
      'Reset password', h('span', { class: 'visually-hidden' }, ` of ${displayName(u)}`));
    resetButton.addEventListener('click', () => { clearMessages(); openReset(u, resetButton); });

    const tr = h('tr', { dataset: { userId: String(u.id), username: u.username }, class: u.status === 'DISABLED' ? 'is-disabled' : '' },
      h('td', { dataset: { label: 'User' } },
        h('div', { class: 'user-cell' },
          h('span', { class: 'avatar avatar-sm', 'aria-hidden': 'true' }, displayName(u).charAt(0).toUpperCase()),
          h('span', {}, h('span', { class: 'user-name' }, u.realName || u.username, me ? h('span', { class: 'you' }, ' (you)') : null),
            h('span', { class: 'user-login' }, u.username)))),
      h('td', { dataset: { label: 'Role' } },
        h('label', { for: roleId, class: 'visually-hidden' }, `Role of ${displayName(u)}`), roleSelect),
      h('td', { dataset: { label: 'Status' } }, h('span', { class: `badge ${active ? 'badge-success' : 'badge-muted'}` }, titleCase(u.status))),
      h('td', { class: 'actions-cell', dataset: { label: 'Actions' } }, h('div', { class: 'row-actions' }, renameButton, resetButton, statusButton),
        selfNoteId ? h('p', { class: 'self-note muted small', id: selfNoteId }, SELF_DISABLE) : null));
    const msgRow = h('tr', { class: 'message-row' }, h('td', { colspan: '4' }, message));
    tr.messageRow = msgRow;
    return [tr, msgRow];
  }

  function replaceRow(u, focusAction, text) {
    const old = tbody.querySelector(`tr[data-user-id="${u.id}"]`);
    const [tr, msgRow] = row(u);
    if (old) { old.messageRow?.remove(); old.nextElementSibling?.classList.contains('message-row') && old.nextElementSibling.remove(); old.replaceWith(tr); tr.after(msgRow); }
    const control = tr.querySelector(`[data-action="${focusAction}"]`);
    if (control) control.focus();
    const msg = msgRow.querySelector('.row-message');
    msg.append(h('p', { class: 'row-ok' }, h('span', { 'aria-hidden': 'true' }, '✓ '), text));
    announce(text);
  }

  function rowError(slot, err, control) {
    clear(slot);
    slot.append(h('p', { class: 'row-error', role: 'alert' }, h('span', { 'aria-hidden': 'true', class: 'err-icon' }, '!'), err.message));
    if (control) control.focus();
  }

  async function refreshMe() {
    try {
      const me = await authApi('GET', '/api/auth/me');
      session.save('', me);
      if (me.role !== 'ADMIN') { ctx.navigate('convert'); }
    } catch { /* handled globally */ }
  }


  function openCreate() {
    const username = field({ label: 'Username', name: 'username', required: true, autocomplete: 'off', spellcheck: false, hint: '3 to 64 letters, digits or _ . @ -' });
    const password = field({ label: 'Initial password', name: 'password', type: 'password', required: true, autocomplete: 'new-password', hint: '8 to 128 characters. Share it with the person safely.' });
    const realName = field({ label: 'Real name', name: 'realName', autocomplete: 'off', hint: 'Optional, shown in lists.' });
    const role = field({ label: 'Role', name: 'role', type: 'select', value: 'ANNOTATOR', options: ROLES.map((r) => ({ value: r, label: titleCase(r) })) });
    const message = h('div', { class: 'form-message' });
    const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Create user');
    const cancel = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Cancel');
    const form = h('form', { class: 'stack', novalidate: true }, username.wrap, password.wrap, passwordTools([password.input]), realName.wrap, role.wrap, message,
      h('div', { class: 'dialog-actions' }, cancel, submit));
    const fields = { username, password, realName, role };
    const dlg = dialog('New user', form, () => newButton.focus());
    cancel.addEventListener('click', () => dlg.close());
    username.input.focus();
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      clear(message);
      Object.values(fields).forEach((f) => setFieldError(f, ''));
      const values = { username: username.input.value.trim(), password: password.input.value, realName: realName.input.value.trim(), role: role.input.value };
      let bad = null;
      if (!/^[\p{L}\p{N}_.@-]{3,64}$/u.test(values.username)) { setFieldError(username, 'Use 3 to 64 letters, digits or _ . @ -'); bad = bad || username; }
      if (values.password.length < 8 || values.password.length > 128) { setFieldError(password, 'The password needs 8 to 128 characters.'); bad = bad || password; }
      if (bad) { bad.input.focus(); announce('Some fields need attention.', true); return; }
      setBusy(submit, true, 'Creating…');
      try {
        const created = await authApi('POST', '/api/users', values);
        const generated = password.input.dataset.generated === values.password;
        dlg.close();
        clear(pageMessage);
        pageMessage.append(notice('success', null, h('p', {}, `User ${created.username || values.username} was created.`),
          generated ? shownOnce(values.password) : null));
        announce(`User ${values.username} was created.`);
        await load();
      } catch (err) {
        setBusy(submit, false);
        const target = fields[err.field];
        if (target) { setFieldError(target, err.message); target.input.focus(); } else showError(message, err);
        announce(err.message, true);
      }
    });
  }

  function openRename(u, opener) {
    const realName = field({ label: 'Real name', name: 'realName', value: u.realName || '', autocomplete: 'off', hint: 'Up to 100 characters. Leave empty to show the username.' });
    const message = h('div', { class: 'form-message' });
    const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save name');
    const cancel = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Cancel');
    const form = h('form', { class: 'stack', novalidate: true }, realName.wrap, message, h('div', { class: 'dialog-actions' }, cancel, submit));
    let saved = false;
    const dlg = dialog(`Rename ${u.username}`, form, () => {
      const again = saved ? tbody.querySelector(`tr[data-user-id="${u.id}"] [data-action="rename"]`) : opener;
      if (again) again.focus();
    });
    cancel.addEventListener('click', () => dlg.close());
    realName.input.focus();
    realName.input.select();
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      clear(message);
      setFieldError(realName, '');
      const value = realName.input.value.trim();
      if (value.length > 100) { setFieldError(realName, 'Use at most 100 characters.'); realName.input.focus(); return; }
      setBusy(submit, true, 'Saving…');
      try {
        await authApi('PUT', `/api/users/${u.id}`, { realName: value });
        u.realName = value;
        saved = true;
        dlg.close();
        replaceRow(u, 'rename', `${u.username} is now called ${value || u.username}.`);
        if (session.user && session.user.id === u.id) refreshMe();
      } catch (err) {
        setBusy(submit, false);
        if (err.field === 'realName' || err.code === 'VALIDATION_ERROR') { setFieldError(realName, err.message); realName.input.focus(); } else showError(message, err);
        announce(err.message, true);
      }
    });
  }

  function openReset(u, opener) {
    const me = session.user && session.user.id === u.id;
    const pair = passwordPair(field, setFieldError);
    const message = h('div', { class: 'form-message' });
    const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Set password');
    const cancel = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Cancel');
    const form = h('form', { class: 'stack', novalidate: true },
      h('p', { class: 'muted small' }, me
        ? 'This is your own account: all your sessions end, this one too, and you sign in again with the new password.'
        : `${displayName(u)} is signed out everywhere and signs in with this password. Share it safely.`),
      pair.first.wrap, pair.again.wrap, passwordTools([pair.first.input, pair.again.input]), message, h('div', { class: 'dialog-actions' }, cancel, submit));
    let saved = false;
    const dlg = dialog(`Reset password of ${u.username}`, form, () => {
      const again = saved ? tbody.querySelector(`tr[data-user-id="${u.id}"] [data-action="reset-password"]`) : opener;
      if (again) again.focus();
    });
    cancel.addEventListener('click', () => dlg.close());
    pair.first.input.focus();
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      clear(message);
      const password = pair.value();
      if (password === null) { announce('Some fields need attention.', true); return; }
      setBusy(submit, true, 'Setting…');
      try {
        await authApi('PUT', `/api/users/${u.id}/password`, { password });
        saved = true;
        const generated = pair.first.input.dataset.generated === password;
        dlg.close();
        replaceRow(u, 'reset-password', `The password of ${displayName(u)} was reset; their sessions ended.`);
        if (generated) tbody.querySelector(`tr[data-user-id="${u.id}"]`)?.messageRow?.querySelector('.row-message')?.append(shownOnce(password));
      } catch (err) {
        setBusy(submit, false);
        if (err.code === 'VALIDATION_ERROR') { setFieldError(pair.first, err.message); pair.first.input.focus(); } else showError(message, err);
        announce(err.message, true);
      }
    });
  }

  load();
}

const SELF_DISABLE = 'You cannot disable your own account; another administrator can.';

/** A generated password, shown once after it was set, with a Copy button. */
function shownOnce(password) {
  const status = h('span', { class: 'inline-status', 'aria-live': 'polite' });
  const copy = h('button', { type: 'button', class: 'btn btn-secondary btn-sm' }, 'Copy password');
  copy.addEventListener('click', async () => {
    status.textContent = (await copyText(password)) ? 'Copied.' : 'Copy failed; select the password and copy it by hand.';
  });
  return h('div', { class: 'shown-once' },
    h('p', {}, 'Initial password: ', h('code', { class: 'secret-once' }, password), ' ', copy, ' ', status),
    h('p', { class: 'muted small' }, 'Shown only now: hand it over safely before you leave this screen.'));
}

function displayName(u) { return u.realName || u.username; }
function titleCase(s) { return s.charAt(0) + s.slice(1).toLowerCase(); }

export default { id: 'users', title: 'Users', admin: true, render };
