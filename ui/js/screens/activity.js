// Activity (ADMIN): the company's audit trail, newest first, with filters and pages.
import { authApi, Unavailable } from '../api.js';
import { card, clear, field, h, pageHeader, showError, unavailablePanel } from '../dom.js';

const ACTIONS = {
  login: 'Sign-in', logout: 'Sign-out', setup: 'First setup', 'user.create': 'User created',
  'user.rename': 'Renamed', 'user.status': 'Status changed', 'user.role': 'Role changed',
  'password.change': 'Password changed', 'password.reset': 'Password reset',
  'key.create': 'API key created', 'key.revoke': 'API key revoked', 'key.use': 'API key used',
  'storage.config': 'Storage changed', 'storage.profile': 'Storage profile saved',
  'storage.linkmap': 'Link map replaced',
};
const OUTCOMES = {
  success: ['OK', 'badge-success'], wrong_password: ['Wrong password', 'badge-danger-soft'],
  disabled: ['Account disabled', 'badge-danger-soft'], throttled: ['Throttled', 'badge-danger-soft'],
  last_admin: ['Refused: last admin', 'badge-muted'], username_exists: ['Refused: name taken', 'badge-muted'],
  role_capped: ['Limited to its maker\'s role', 'badge-muted'], owner_disabled: ['Refused: maker disabled', 'badge-danger-soft'],
  revoked: ['Refused: key revoked', 'badge-danger-soft'],
};
// the details of a record in words ("key: nightly CI" -> "key nightly CI"); unknown ones as sent
const DETAIL_WORDS = {
  key: 'key', prefix: 'starts with', keyRole: 'key role', makerRole: 'maker\'s role', makerStatus: 'maker',
  expires: 'expires', role: 'role', status: 'status', count: 'times', last: 'last at',
  change: '', profile: 'profile', endpoint: 'at', bucket: 'bucket', before: 'entries before',
  entries: 'entries now',
};

/** A record's details as a short readable phrase: "created, profile archive, at s3.local:9000". */
function detailWords(detail) {
  return Object.entries(detail || {}).map(([k, v]) => {
    const word = k in DETAIL_WORDS ? DETAIL_WORDS[k] : k;
    return word ? `${word} ${v}` : String(v);
  }).join(', ');
}

/** The few words of a record's details a row shows (all of them are in its tooltip). */
function detailSummary(item) {
  const d = item.detail || {};
  if (item.action.startsWith('key.') && d.key) {
    return d.role && d.role !== d.keyRole ? `“${d.key}”, acting as ${d.role}` : `“${d.key}”`;
  }
  if (item.action === 'storage.profile') return `“${d.profile}” ${d.change || 'saved'}`;
  if (item.action === 'storage.linkmap') return `${d.before} → ${d.entries} entries`;
  if (item.action === 'storage.config') {
    if (d.profile) return `profile “${d.profile}” loaded`;
    return d.bucket ? `bucket ${d.bucket}` : '';
  }
  return detailWords(d);
}

/** True for an actor or target that is an API key ("api-key:<id>"), not a person. */
function isKey(w) { return Boolean(w && /^api-key:/.test(w.username || '')); }

function render(view) {
  const state = { page: 1, pageSize: 20, total: 0, items: [] };
  const action = field({ label: 'Action', name: 'action', type: 'select', options: [{ value: '', label: 'All actions' }, ...Object.entries(ACTIONS).map(([value, label]) => ({ value, label }))] });
  const actor = field({ label: 'By user', name: 'actor', autocomplete: 'off', spellcheck: false, placeholder: 'username' });
  const target = field({ label: 'Concerning user', name: 'target', autocomplete: 'off', spellcheck: false, placeholder: 'username' });
  const from = field({ label: 'From', name: 'from', type: 'date' });
  const to = field({ label: 'To', name: 'to', type: 'date' });
  const apply = h('button', { type: 'submit', class: 'btn btn-secondary' }, 'Apply');
  const filters = h('form', { class: 'filters activity-filters', 'aria-label': 'Filter activity' },
    action.wrap, actor.wrap, target.wrap, from.wrap, to.wrap, h('div', { class: 'filters-apply' }, apply));
  filters.addEventListener('submit', (e) => { e.preventDefault(); state.page = 1; load(); });
  action.input.addEventListener('change', () => { state.page = 1; load(); });

  const tbody = h('tbody');
  const table = h('table', { class: 'data-table activity-table' },
    h('caption', { class: 'visually-hidden' }, 'Activity of your company, newest first'),
    h('thead', {}, h('tr', {}, ['When', 'Who', 'What', 'Concerning', 'Result', 'From'].map((t) => h('th', { scope: 'col' }, t)))),
    tbody);
  const listMessage = h('div', { class: 'list-message' });
  const summary = h('p', { class: 'pager-summary', 'aria-live': 'polite' });
  const prev = h('button', { type: 'button', class: 'btn btn-secondary btn-sm' }, '‹ Newer');
  const next = h('button', { type: 'button', class: 'btn btn-secondary btn-sm' }, 'Older ›');
  prev.addEventListener('click', () => { if (state.page > 1) { state.page -= 1; load(); } });
  next.addEventListener('click', () => { state.page += 1; load(); });
  const body = h('div', {});
  view.append(pageHeader('Activity', 'Who signed in, who changed which account, API key and storage setting, in your company. Kept for 90 days.'), body);
  body.append(card(null, filters, listMessage, h('div', { class: 'table-scroll' }, table),
    h('nav', { class: 'pager', 'aria-label': 'Pages of activity' }, summary, h('div', { class: 'pager-buttons' }, prev, next))));

  async function load() {
    clear(listMessage);
    table.setAttribute('aria-busy', 'true');
    const q = new URLSearchParams({ page: String(state.page), pageSize: String(state.pageSize) });
    for (const [k, f] of [['action', action], ['actor', actor], ['target', target], ['from', from], ['to', to]]) {
      const v = f.input.value.trim();
      if (v) q.set(k, v);
    }
    try {
      const data = await authApi('GET', `/api/audit?${q}`);
      state.items = data.items || [];
      state.total = data.total || 0;
      draw();
    } catch (err) {
      if (err instanceof Unavailable) { clear(body); body.append(unavailablePanel('The activity log')); return; }
      clear(tbody);
      showError(listMessage, err, 'The activity could not be loaded');
    } finally {
      table.removeAttribute('aria-busy');
    }
  }

  function who(w) {
    if (!w) return h('span', { class: 'muted' }, '—');
    const shown = isKey(w) ? `API key ${w.username.slice(8, 16)}…` : w.username;
    return h('button', { type: 'button', class: 'link-button', title: `Show activity of ${shown}`, onclick: () => { actor.input.value = w.username; state.page = 1; load(); } }, shown);
  }

  function draw() {
    clear(tbody);
    if (!state.items.length) {
      tbody.append(h('tr', { class: 'empty-row' }, h('td', { colspan: '6' },
        h('p', { class: 'empty-title' }, 'No activity matches'), h('p', { class: 'muted' }, 'Try other filters.'))));
    }
    for (const item of state.items) {
      const when = new Date(item.time);
      const [label, cls] = OUTCOMES[item.outcome] || [item.outcome.replace(/_/g, ' '), 'badge-muted'];
      const detail = detailSummary(item);
      const allDetail = detailWords(item.detail);
      tbody.append(h('tr', { dataset: { action: item.action, outcome: item.outcome } },
        h('td', { dataset: { label: 'When' } }, h('time', { datetime: item.time, title: item.time }, when.toLocaleString())),
        h('td', { dataset: { label: 'Who' } }, who(item.actor)),
        h('td', { dataset: { label: 'What' }, title: [ACTIONS[item.action] || item.action, allDetail].filter(Boolean).join(': ') }, ACTIONS[item.action] || item.action, detail ? h('span', { class: 'muted small' }, ` (${detail})`) : null),
        h('td', { dataset: { label: 'Concerning' } }, item.target && item.actor && item.target.id === item.actor.id && item.target.username === item.actor.username ? h('span', { class: 'muted' }, 'themselves') : who(item.target)),
        h('td', { dataset: { label: 'Result' } }, h('span', { class: `badge ${cls}` }, label)),
        h('td', { dataset: { label: 'From' } }, h('span', { class: 'mono small' }, item.address || '—'))));
    }
    const pages = Math.max(1, Math.ceil(state.total / state.pageSize));
    summary.textContent = state.total ? `${state.total} ${state.total === 1 ? 'record' : 'records'} · page ${state.page} of ${pages}` : 'No records';
    prev.disabled = state.page <= 1;
    next.disabled = state.page >= pages;
  }

  load();
}

export default { id: 'activity', title: 'Activity', admin: true, render };
