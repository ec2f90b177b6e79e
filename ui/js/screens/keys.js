// API keys (ADMIN): the company's keys for scripts and CI; create (the key is shown once), revoke.
// Also the company's webhook signing secret: create or rotate (shown once).
import { authApi, docsGet, plainApi, Unavailable } from '../api.js';
import { announce, card, clear, copyText, field, h, newId, notice, pageHeader, setBusy, setFieldError, showError, unavailablePanel } from '../dom.js';
import { dialog } from '../dialog.js';

const ROLES = ['ANNOTATOR', 'REVIEWER', 'ADMIN'];
const EXPIRY = [
  { value: '90', label: 'In 90 days' }, { value: '30', label: 'In 30 days' },
  { value: '365', label: 'In one year' }, { value: '', label: 'Never' },
];

function render(view) {
  const pageMessage = h('div', { class: 'page-message', 'aria-live': 'polite' });
  const newButton = h('button', { type: 'button', class: 'btn btn-primary' }, h('span', { 'aria-hidden': 'true', class: 'btn-icon' }, '+'), 'New key');
  const tbody = h('tbody');
  const table = h('table', { class: 'data-table keys-table' },
    h('caption', { class: 'visually-hidden' }, 'API keys of your company'),
    h('thead', {}, h('tr', {},
      h('th', { scope: 'col' }, 'Key'), h('th', { scope: 'col' }, 'Role'), h('th', { scope: 'col' }, 'Made by'), h('th', { scope: 'col' }, 'Created'),
      h('th', { scope: 'col' }, 'Last used'), h('th', { scope: 'col' }, 'Expires'), h('th', { scope: 'col', class: 'al-r' }, 'Actions'))),
    tbody);
  const listMessage = h('div', { class: 'list-message' });
  const body = h('div', {});
  view.append(
    pageHeader('API keys', 'Keys let scripts and CI call this service with the rights of a role in your company. A revoked key stops working at once.', newButton),
    pageMessage, body);
  body.append(card(null, listMessage, h('div', { class: 'table-scroll' }, table)), webhookSecret());
  newButton.addEventListener('click', () => openCreate());

  async function load() {
    clear(listMessage);
    table.setAttribute('aria-busy', 'true');
    try {
      const data = await authApi('GET', '/api/keys');
      draw(data.items || []);
    } catch (err) {
      if (err instanceof Unavailable) { clear(body); body.append(unavailablePanel('API keys')); return; }
      clear(tbody);
      showError(listMessage, err, 'The keys could not be loaded');
    } finally {
      table.removeAttribute('aria-busy');
    }
  }

  function draw(items) {
    clear(tbody);
    if (!items.length) {
      tbody.append(h('tr', { class: 'empty-row' }, h('td', { colspan: '7' },
        h('p', { class: 'empty-title' }, 'No API keys yet'),
        h('p', { class: 'muted' }, 'Create one with "New key" for a script or a CI job.'))));
    }
    for (const k of items) tbody.append(...row(k));
  }

  function row(k) {
    const msgId = newId('key-msg');
    const message = h('div', { class: 'row-message', id: msgId, 'aria-live': 'polite' });
    const revoke = h('button', { type: 'button', class: 'btn btn-sm btn-danger-outline', 'aria-describedby': msgId, dataset: { action: 'revoke' } },
      'Revoke', h('span', { class: 'visually-hidden' }, ` ${k.name}`));
    revoke.addEventListener('click', () => openRevoke(k, revoke, message));
    const expired = k.expiresAt && new Date(k.expiresAt) <= new Date();
    const tr = h('tr', { dataset: { keyId: k.id, keyName: k.name }, class: expired ? 'is-disabled' : '' },
      h('td', { dataset: { label: 'Key' } }, h('span', { class: 'user-name' }, k.name), h('code', { class: 'user-login' }, `${k.prefix}…`)),
      h('td', { dataset: { label: 'Role' } }, h('span', { class: 'badge' }, titleCase(k.role))),
      h('td', { dataset: { label: 'Made by' } }, maker(k.createdBy)),
      h('td', { dataset: { label: 'Created' } }, when(k.createdAt)),
      h('td', { dataset: { label: 'Last used' } }, k.lastUsedAt ? when(k.lastUsedAt) : 'Never'),
      h('td', { dataset: { label: 'Expires' } }, k.expiresAt ? `${expired ? 'Expired ' : ''}${when(k.expiresAt)}` : 'Never'),
      h('td', { class: 'actions-cell', dataset: { label: 'Actions' } }, h('div', { class: 'row-actions' }, revoke)));
    return [tr, h('tr', { class: 'message-row' }, h('td', { colspan: '7' }, message))];
  }


  function openCreate() {
    const name = field({ label: 'Name', name: 'name', required: true, autocomplete: 'off', hint: 'What uses the key, e.g. "Nightly CI". Up to 64 characters.' });
    const role = field({ label: 'Role', name: 'role', type: 'select', value: 'ANNOTATOR', options: ROLES.map((r) => ({ value: r, label: titleCase(r) })) });
    const expires = field({ label: 'Expires', name: 'expires', type: 'select', value: '90', options: EXPIRY });
    const message = h('div', { class: 'form-message' });
    const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Create key');
    const cancel = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Cancel');
    const form = h('form', { class: 'stack', novalidate: true }, name.wrap, role.wrap, expires.wrap, message,
      h('div', { class: 'dialog-actions' }, cancel, submit));
    const dlg = dialog('New API key', form, () => newButton.focus());
    cancel.addEventListener('click', () => dlg.close());
    name.input.focus();
    form.addEventListener('submit', async (e) => {
      e.preventDefault();
      clear(message);
      setFieldError(name, '');
      const values = { name: name.input.value.trim(), role: role.input.value };
      if (expires.input.value) values.expiresInDays = Number(expires.input.value);
      if (!values.name || values.name.length > 64) { setFieldError(name, 'Give the key a name of 1 to 64 characters.'); name.input.focus(); return; }
      setBusy(submit, true, 'Creating…');
      try {
        const created = await authApi('POST', '/api/keys', values);
        clear(form);
        showSecret(form, created, () => dlg.close());
        announce(`Key ${created.name} was created. Copy it now; it is not shown again.`);
        load();
      } catch (err) {
        setBusy(submit, false);
        if (err.code === 'VALIDATION_ERROR') { setFieldError(name, err.message); name.input.focus(); } else showError(message, err);
        announce(err.message, true);
      }
    });
  }

  function showSecret(slot, created, done) {
    const keyId = newId('new-key');
    const input = h('input', { id: keyId, class: 'mono', readonly: true, value: created.key, spellcheck: 'false', autocomplete: 'off' });
    const copied = h('p', { class: 'muted', 'aria-live': 'polite' });
    const copy = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Copy');
    copy.addEventListener('click', async () => {
      const ok = await copyText(created.key);
      copied.textContent = ok ? 'Copied to the clipboard.' : 'Copy failed; select the key and copy it by hand.';
    });
    const close = h('button', { type: 'button', class: 'btn btn-primary' }, 'Done');
    close.addEventListener('click', done);
    slot.append(
      notice('warning', 'Copy the key now', h('p', {}, 'This is the only time it is shown. Send it as "Authorization: Bearer <key>".')),
      h('div', { class: 'field' }, h('label', { for: keyId }, `Key "${created.name}" (${titleCase(created.role)})`),
        h('div', { class: 'input-with-button' }, input, copy)),
      copied, h('div', { class: 'dialog-actions' }, close));
    input.focus();
    input.select();
  }

  function openRevoke(k, opener, rowMessage) {
    const message = h('div', { class: 'form-message' });
    const confirm = h('button', { type: 'button', class: 'btn btn-danger' }, 'Revoke key');
    const cancel = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Cancel');
    let revoked = false;
    const dlg = dialog(`Revoke "${k.name}"?`, h('div', { class: 'stack' },
      h('p', {}, 'Scripts using this key stop working at once. This cannot be undone.'), message,
      h('div', { class: 'dialog-actions' }, cancel, confirm)), () => { if (!revoked) opener.focus(); else newButton.focus(); });
    cancel.addEventListener('click', () => dlg.close());
    cancel.focus();
    confirm.addEventListener('click', async () => {
      setBusy(confirm, true, 'Revoking…');
      try {
        await authApi('DELETE', `/api/keys/${encodeURIComponent(k.id)}`);
        revoked = true;
        dlg.close();
        clear(pageMessage);
        pageMessage.append(notice('success', null, h('p', {}, `Key ${k.name} was revoked.`)));
        announce(`Key ${k.name} was revoked.`);
        load();
      } catch (err) {
        setBusy(confirm, false);
        showError(message, err);
        if (rowMessage) clear(rowMessage);
        announce(err.message, true);
      }
    });
  }

  load();
}

/** The company's webhook signing secret: whether it exists, and create/rotate (shown once). */
function webhookSecret() {
  const status = h('p', { class: 'muted', 'aria-live': 'polite' }, 'Checking…');
  const button = h('button', { type: 'button', class: 'btn btn-secondary', dataset: { action: 'webhook-secret' } }, 'Create secret');
  const message = h('div', { class: 'form-message' });
  const section = card('Webhook secret',
    h('p', {}, 'Jobs sent with a callback_url are signed with this secret (X-Signature: sha256=HMAC-SHA256 of "X-Timestamp.body"). Until it exists, callback_url is refused. It is shown once; rotating replaces it at once.'),
    status, message, h('div', { class: 'row-actions' }, button));

  async function refresh() {
    try {
      const info = await docsGet('/api/webhook-secret');
      status.textContent = info.exists ? `A secret exists, made ${when(info.createdAt)}.` : 'No secret yet: webhooks are refused.';
      button.textContent = info.exists ? 'Rotate secret' : 'Create secret';
    } catch (err) {
      if (err instanceof Unavailable) { section.remove(); return; }
      status.textContent = '';
      showError(message, err, 'The webhook secret could not be checked');
    }
  }

  button.addEventListener('click', async () => {
    clear(message);
    setBusy(button, true, 'Working…');
    try {
      const made = await plainApi('POST', '/api/webhook-secret');
      const inputId = newId('webhook-secret');
      const input = h('input', { id: inputId, class: 'mono', readonly: true, value: made.secret, spellcheck: 'false', autocomplete: 'off' });
      const copied = h('p', { class: 'muted', 'aria-live': 'polite' });
      const copy = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Copy');
      copy.addEventListener('click', async () => {
        copied.textContent = (await copyText(made.secret)) ? 'Copied to the clipboard.' : 'Copy failed; select the secret and copy it by hand.';
      });
      const done = h('button', { type: 'button', class: 'btn btn-primary' }, 'Done');
      const dlg = dialog(made.rotated ? 'New webhook secret' : 'Webhook secret', h('div', { class: 'stack' },
        notice('warning', 'Copy the secret now', h('p', {}, made.rotated ? 'This is the only time it is shown. The old secret stopped working.' : 'This is the only time it is shown.')),
        h('div', { class: 'field' }, h('label', { for: inputId }, 'Secret'), h('div', { class: 'input-with-button' }, input, copy)),
        copied, h('div', { class: 'dialog-actions' }, done)), () => button.focus());
      done.addEventListener('click', () => dlg.close());
      input.focus();
      input.select();
      announce('The webhook secret was made. Copy it now; it is not shown again.');
    } catch (err) {
      showError(message, err);
      announce(err.message, true);
    } finally {
      setBusy(button, false);
      refresh();
    }
  });

  refresh();
  return section;
}

function when(iso) {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' });
}
// A key acts with at most its maker's current role; keys of the command line or a seed have none.
function maker(m) {
  if (!m) return h('span', { class: 'muted' }, 'Command line or seed');
  return m.username || `User ${m.id} (removed)`;
}
function titleCase(s) { return s.charAt(0) + s.slice(1).toLowerCase(); }

export default { id: 'keys', title: 'API keys', admin: true, render };
