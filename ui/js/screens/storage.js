// Storage settings: connection form, test, clock check, profiles and link map.
import { plainApi, sentence, settingWords, Unavailable } from '../api.js';
import { announce, card, checkbox, clear, field, h, newId, notice, pageHeader, setBusy, setFieldError, showError, unavailablePanel } from '../dom.js';

const CONSOLE_RE = /(:9001\b)|\/(browser|minio)(\/|$)/i;

/** The storage settings inside a /config or profile answer, whatever its nesting. */
function findConfig(data, depth = 0) {
  if (!data || typeof data !== 'object' || depth > 3) return null;
  if ('endpoint' in data || 'bucket' in data) return data;
  for (const key of ['storage', 'config', 'profile', 'data', 'settings']) {
    const found = findConfig(data[key], depth + 1);
    if (found) return found;
  }
  return null;
}

/** A link map as [[from, to], ...] from the answer of GET /config/linkmap. */
function extractMap(data) {
  const candidates = [data && data.linkmap, data && data.map, data && data.links, data && data.items, data && data.data, data];
  for (const c of candidates) {
    if (Array.isArray(c)) {
      return c.map((x) => (Array.isArray(x) ? [x[0], x[1]] : [x.from ?? x.source ?? x.key ?? '', x.to ?? x.target ?? x.value ?? ''])).filter((p) => p[0] !== undefined);
    }
    if (c && typeof c === 'object') {
      const entries = Object.entries(c).filter(([k, v]) => typeof v === 'string' && k !== 'ok' && k !== 'hint' && k !== 'error');
      if (entries.length || c === (data && data.linkmap)) return entries;
    }
  }
  return [];
}

function profileList(data) {
  const list = Array.isArray(data) ? data : (data.profiles || data.items || data.names || []);
  return list.map((p) => (typeof p === 'string' ? { name: p } : p)).filter((p) => p && p.name);
}

function render(view) {
  const body = h('div', { class: 'stack-lg' });
  view.append(pageHeader('Storage', 'Where converted files and batch assets are stored: any S3-compatible service, such as MinIO.'), body);

  // ---- connection form -------------------------------------------------------------------
  const endpoint = field({ label: 'Endpoint', name: 'endpoint', required: true, placeholder: 'minio.example.com:9000', spellcheck: false,
    hint: 'Host and API port of the storage service. Not the web console: port 9001 and addresses with /browser or /minio are refused.' });
  const pub = field({ label: 'Public address', name: 'public', placeholder: 'files.example.com', spellcheck: false, hint: 'Host and port put into links for readers. Empty: the endpoint.' });
  const access = field({ label: 'Access key', name: 'access', autocomplete: 'off', spellcheck: false });
  const secret = field({ label: 'Secret key', name: 'secret', type: 'password', autocomplete: 'new-password', hint: 'Never shown again once saved. Leave empty to keep the stored one.' });
  const bucket = field({ label: 'Bucket', name: 'bucket', required: true, placeholder: 'docservice', spellcheck: false });
  const prefix = field({ label: 'Key prefix', name: 'prefix', placeholder: 'e.g. exports/', spellcheck: false, hint: 'Optional; put before every stored key.' });
  const secure = checkbox({ label: 'Use TLS (https)', name: 'secure' });
  const publicRead = checkbox({ label: 'Public read', name: 'public_read', hint: 'Anyone with a direct link can read. Otherwise use presigned links.' });
  const storeFinal = checkbox({ label: 'Store final files', name: 'store_final', checked: true, hint: 'Keep the converted outputs, not only their assets.' });
  const createMissing = checkbox({ label: 'Create the bucket if it is missing', name: 'create_if_missing', checked: true });
  const fields = { endpoint, public: pub, access, secret, bucket, prefix };

  const checkConsole = () => {
    const v = endpoint.input.value.trim();
    if (v && CONSOLE_RE.test(v)) {
      setFieldError(endpoint, 'This is the web console address. Use the API port (usually 9000), e.g. minio.example.com:9000.');
      return false;
    }
    setFieldError(endpoint, '');
    return true;
  };
  endpoint.input.addEventListener('blur', checkConsole);

  // the built-in storage (started with the service; its keys are the operator's, never shown):
  // while the form shows the storage in use unchanged, Test and "Save as profile" use it as it
  // is, without keys
  let inUse = false;     // the form shows the storage in use, as loaded
  let embedded = false;  // ... and that is the built-in one
  const builtIn = h('div', { class: 'built-in-note', hidden: true });
  const markChanged = () => { if (inUse) { inUse = false; updateBuiltIn(); } };
  function updateBuiltIn() {
    clear(builtIn);
    builtIn.hidden = !embedded;
    if (!embedded) return;
    builtIn.append(notice('info', inUse ? 'Built-in storage' : 'Built-in storage: your changes replace it',
      h('p', {}, 'This is the storage that comes with this service, on the same machine. Its keys belong to the operator (the secret is never shown); "Test connection" and "Save as profile" use it as it is, without entering keys.'),
      h('p', {}, 'To use your own S3 or MinIO instead, enter its endpoint, keys and bucket and press "Save settings".')));
  }
  const formMessage = h('div', { class: 'form-message' });
  const testResult = h('div', { class: 'check-result', 'aria-live': 'polite' });
  const clockResult = h('div', { class: 'check-result', 'aria-live': 'polite' });
  const saveBtn = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save settings');
  const testBtn = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Test connection');
  const clockBtn = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Check clock');
  // the answers of Save, Test and Check clock sit just above the action bar, which stays in
  // view at the bottom of the screen while the form is scrolled
  const form = h('form', { class: 'stack', novalidate: true }, builtIn,
    h('div', { class: 'two-col' }, endpoint.wrap, pub.wrap, access.wrap, secret.wrap, bucket.wrap, prefix.wrap),
    h('div', { class: 'checks' }, secure.wrap, publicRead.wrap, storeFinal.wrap, createMissing.wrap),
    formMessage, testResult, clockResult,
    h('div', { class: 'action-bar' }, h('div', { class: 'form-actions form-actions-split' }, h('div', { class: 'row-inline' }, testBtn, clockBtn), saveBtn)));

  /** The answers of an earlier Save, Test or Check clock go when the next one starts (an old
   * "Clocks agree" beside a new error reads as if both were now). */
  function clearAnswers() {
    clear(formMessage);
    clear(testResult);
    clear(clockResult);
  }
  /** Bring an answer into view above the action bar (the button pressed may be far below it
   * on a phone). */
  function reveal(slot) {
    const el = slot.firstElementChild;
    if (el) el.scrollIntoView({ block: 'nearest' });
  }

  function values({ withSecret = true } = {}) {
    const v = {
      endpoint: endpoint.input.value.trim(), public: pub.input.value.trim(), access: access.input.value.trim(),
      bucket: bucket.input.value.trim(), prefix: prefix.input.value.trim(),
      secure: secure.input.checked, public_read: publicRead.input.checked, store_final: storeFinal.input.checked,
    };
    if (withSecret && secret.input.value) v.secret = secret.input.value;
    return v;
  }

  // fields the person edited since the settings began to load: the first load, which can
  // arrive after they started typing, leaves those as they are
  const edited = new Set();
  function fill(cfg, { keepEdited = false } = {}) {
    if (!cfg) return;
    const keep = (input) => keepEdited && edited.has(input);
    for (const [k, f] of Object.entries(fields)) {
      if (keep(f.input)) continue;
      if (k === 'secret') {
        f.input.value = '';
        f.input.placeholder = cfg.secret || cfg.secret_set ? `stored${cfg.secret ? ` (${cfg.secret})` : ''} — leave empty to keep` : '';
      } else if (k === 'public' && cfg.public === cfg.endpoint) {
        f.input.value = '';  // links follow the endpoint: a new endpoint must not keep the old host in links
      } else if (cfg[k] !== undefined && cfg[k] !== null) f.input.value = String(cfg[k]);
    }
    const b = (x) => x === true || x === 'true' || x === 1 || x === '1';
    if ('secure' in cfg && !keep(secure.input)) secure.input.checked = b(cfg.secure);
    if ('public_read' in cfg && !keep(publicRead.input)) publicRead.input.checked = b(cfg.public_read);
    if ('store_final' in cfg && !keep(storeFinal.input)) storeFinal.input.checked = b(cfg.store_final);
    inUse = !edited.size || !keepEdited;
    edited.clear();
    updateBuiltIn();
  }
  for (const input of [endpoint, pub, access, secret, bucket, prefix].map((f) => f.input).concat([secure.input, publicRead.input, storeFinal.input])) {
    const changed = () => { edited.add(input); markChanged(); };
    input.addEventListener('input', changed);
    input.addEventListener('change', changed);
  }

  function validate() {
    Object.values(fields).forEach((f) => setFieldError(f, ''));
    let first = null;
    if (!endpoint.input.value.trim()) { setFieldError(endpoint, 'Enter the host and API port, e.g. minio.example.com:9000.'); first = endpoint; } else if (!checkConsole()) first = endpoint;
    if (!bucket.input.value.trim()) { setFieldError(bucket, 'Enter a bucket name.'); first = first || bucket; }
    if (first) { first.input.focus(); announce('Some fields need attention.', true); return false; }
    return true;
  }

  function placeError(err, slot, title) {
    const raw = `${err.raw || ''} ${err.hint || ''}`.toLowerCase();
    let f = fields[err.field] || null;
    if (!f && /console|9001|endpoint|\/browser|\/minio/.test(raw)) f = endpoint;
    else if (!f && /bucket/.test(raw) && !/connect/.test(raw)) f = bucket;
    if (f) {
      setFieldError(f, err.message + (err.hint && !err.message.includes(err.hint) ? ` ${err.hint}` : ''));
      f.input.focus();
    } else showError(slot, err, title);
    announce(err.message, true);
  }

  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clearAnswers();
    if (!validate()) return;
    setBusy(saveBtn, true, 'Saving…');
    try {
      const answer = await plainApi('POST', '/config/storage', { form: values() });
      embedded = false;
      fill(findConfig(answer) || { secret_set: true });
      formMessage.append(notice('success', null, h('p', {}, 'Storage settings saved. New conversions use them at once.')));
      const check = answer.public_read_check;
      if (check) formMessage.append(check.ok
        ? notice('success', 'Public read works', h('p', {}, 'An anonymous read of a test object through its direct link answered 200: direct links open for anyone who has them.'))
        : notice('warning', 'Public read is not in effect', h('p', {}, String(check.error || 'An anonymous read of a test object failed.')),
          h('p', {}, 'Direct links will not open. Untick "Public read" so that stored documents get presigned links, or allow public reads on the bucket in the storage itself.')));
      announce(check ? `Storage settings saved. ${check.ok ? 'Public read works.' : 'Public read is not in effect.'}` : 'Storage settings saved.');
    } catch (err) {
      if (err instanceof Unavailable) showError(formMessage, 'Saving settings is not available on this server.');
      else placeError(err, formMessage, 'The settings were not saved');
    } finally { setBusy(saveBtn, false); reveal(formMessage); }
  });

  const yes = (v) => v === true || v === 'true';
  function checkItem(label, value, { neutral = false } = {}) {
    const on = yes(value);
    const tone = value === undefined || value === null ? 'unknown' : on ? 'ok' : neutral ? 'neutral' : 'bad';
    const word = value === undefined || value === null ? 'unknown' : on ? 'yes' : 'no';
    return h('li', { class: `check-item check-${tone}` }, h('span', { class: 'check-icon', 'aria-hidden': 'true' }, { ok: '✓', bad: '✕', neutral: '–', unknown: '?' }[tone]), h('span', {}, `${label}: `, h('strong', {}, word)));
  }

  testBtn.addEventListener('click', async () => {
    clearAnswers();
    if (!inUse && !validate()) return;
    setBusy(testBtn, true, 'Testing…');
    try {
      // unchanged: the storage in use is tested (no keys needed); otherwise the form's fields.
      // A failed test answers {ok:false, connected, bucket_exists, error, hint}: show the checklist
      const form = inUse ? { create_if_missing: createMissing.input.checked } : { ...values(), create_if_missing: createMissing.input.checked };
      const data = await plainApi('POST', '/config/storage/test', { form, allowNotOk: true });
      const ok = yes(data.ok) && yes(data.connected);
      // "created" is said only when the test made the bucket (not "Created now: unknown")
      const list = h('ul', { class: 'checklist', 'aria-label': 'Connection test' },
        checkItem('Connected', data.connected), checkItem('Bucket exists', data.bucket_exists),
        yes(data.created) ? checkItem('Bucket created by this test', true) : null);
      const details = [];
      if (data.error) details.push(h('p', {}, h('strong', {}, 'Error: '), sentence(settingWords(data.error))));
      if (data.hint) details.push(h('p', { class: 'notice-hint' }, h('strong', {}, 'Hint: '), sentence(settingWords(data.hint))));
      testResult.append(h('section', { class: `result-panel ${ok ? 'is-ok' : 'is-bad'}`, 'aria-label': 'Connection test result' },
        h('p', { class: 'result-panel-title' }, ok ? 'Connection works' : 'Connection problem'), list, ...details));
      if (!ok && /console|web page/i.test(`${data.error} ${data.hint}`)) setFieldError(endpoint, 'This address answers like the web console, not the S3 API. Use the API port (usually 9000).');
      announce(ok ? 'Connection works.' : `Connection problem. ${data.error || ''} ${data.hint || ''}`);
    } catch (err) {
      if (err instanceof Unavailable) showError(testResult, 'Testing the connection is not available on this server.');
      else placeError(err, testResult, 'The test could not run');
    } finally { setBusy(testBtn, false); reveal(testResult); }
  });

  clockBtn.addEventListener('click', async () => {
    clearAnswers();
    setBusy(clockBtn, true, 'Checking…');
    try {
      const v = values({ withSecret: false });
      const data = await plainApi('GET', '/system/time/check', { query: v.endpoint ? { endpoint: v.endpoint, secure: String(v.secure) } : {}, allowNotOk: true });
      const diff = Number(data.diff_sec);
      const fine = data.ok !== false && data.diff_sec !== null && Number.isFinite(diff);
      const rows = [
        ['Storage time', data.server_time], ['This server', data.local_time],
        ['Difference', data.diff_sec !== null && data.diff_sec !== undefined && Number.isFinite(diff) ? `${diff > 0 ? '+' : ''}${diff.toFixed(Math.abs(diff) < 10 ? 1 : 0)} s` : '—'],
      ];
      clockResult.append(h('section', { class: `result-panel ${fine ? 'is-ok' : 'is-bad'}`, 'aria-label': 'Clock check result' },
        h('p', { class: 'result-panel-title' }, fine ? 'Clocks agree' : 'Clock difference'),
        h('dl', { class: 'kv' }, rows.map(([k, val]) => h('div', {}, h('dt', {}, k), h('dd', {}, val ? String(val) : '—')))),
        data.error ? h('p', {}, h('strong', {}, 'Error: '), sentence(settingWords(data.error))) : null,
        data.hint ? h('p', { class: 'notice-hint' }, h('strong', {}, 'Hint: '), sentence(settingWords(data.hint))) : null));
      announce(fine ? 'Clocks agree.' : `Clock difference of ${diff} seconds. ${data.hint || ''}`);
    } catch (err) {
      if (err instanceof Unavailable) showError(clockResult, 'The clock check is not available on this server.');
      else showError(clockResult, err, 'The clock could not be checked');
      announce(err.message, true);
    } finally { setBusy(clockBtn, false); reveal(clockResult); }
  });

  // ---- profiles ---------------------------------------------------------------------------
  const profileSelect = field({ label: 'Saved profiles', name: 'profile', type: 'select', options: [{ value: '', label: 'No profiles yet' }] });
  const loadBtn = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Load');
  const profileName = field({ label: 'Profile name', name: 'profile_name', placeholder: 'e.g. production', spellcheck: false });
  const saveProfileBtn = h('button', { type: 'button', class: 'btn btn-secondary' }, 'Save as profile');
  const profileMessage = h('div', { class: 'form-message', 'aria-live': 'polite' });
  const profilesCard = card('Profiles',
    h('p', { class: 'muted' }, 'Keep several storage set-ups (say, staging and production) and switch between them.'),
    h('div', { class: 'profile-grid' },
      h('div', { class: 'inline-field' }, profileSelect.wrap, loadBtn),
      h('div', { class: 'inline-field' }, profileName.wrap, saveProfileBtn)),
    profileMessage);

  async function loadProfiles(select) {
    try {
      const list = profileList(await plainApi('GET', '/config/profiles'));
      const names = list.map((p) => p.name);
      clear(profileSelect.input);
      if (!names.length) profileSelect.input.append(h('option', { value: '' }, 'No profiles yet'));
      for (const p of list) profileSelect.input.append(h('option', { value: p.name }, p.endpoint ? `${p.name} — ${p.endpoint}/${p.bucket || ''}` : p.source === 'operator' ? `${p.name} — built-in storage` : p.name));
      if (select && names.includes(select)) profileSelect.input.value = select;
      loadBtn.disabled = !names.length;
    } catch (err) {
      if (err instanceof Unavailable) { clear(profileMessage); profileMessage.append(h('p', { class: 'muted' }, 'Profiles are not available on this server.')); loadBtn.disabled = true; saveProfileBtn.disabled = true; }
      else showError(profileMessage, err, 'Profiles could not be listed');
    }
  }

  loadBtn.addEventListener('click', async () => {
    clear(profileMessage);
    const name = profileSelect.input.value;
    if (!name) { setFieldError(profileSelect, 'Choose a profile.'); profileSelect.input.focus(); return; }
    setBusy(loadBtn, true, 'Loading…');
    try {
      const data = await plainApi('POST', '/config/load_profile', { form: { name } });
      embedded = name === 'embedded';
      fill(findConfig(data));
      profileMessage.append(notice('success', null, h('p', {}, `Profile “${name}” loaded; it is now the active storage.`)));
      announce(`Profile ${name} loaded.`);
    } catch (err) {
      showError(profileMessage, err, 'The profile could not be loaded');
      announce(err.message, true);
    } finally { setBusy(loadBtn, false); }
  });

  saveProfileBtn.addEventListener('click', async () => {
    clear(profileMessage);
    setFieldError(profileName, '');
    const name = profileName.input.value.trim();
    if (!name) { setFieldError(profileName, 'Give the profile a name.'); profileName.input.focus(); announce('Give the profile a name.', true); return; }
    setBusy(saveProfileBtn, true, 'Saving…');
    try {
      await plainApi('POST', '/config/save_profile', { form: inUse ? { name } : { name, ...values() } });
      profileMessage.append(notice('success', null, h('p', {}, `Saved the current settings as “${name}”.`)));
      announce(`Profile ${name} saved.`);
      await loadProfiles(name);
    } catch (err) {
      if (err.field === 'name' || /name/i.test(err.raw || '')) { setFieldError(profileName, err.message); profileName.input.focus(); } else showError(profileMessage, err, 'The profile was not saved');
      announce(err.message, true);
    } finally { setBusy(saveProfileBtn, false); }
  });

  // ---- link map ---------------------------------------------------------------------------
  const mapRows = h('tbody');
  const mapMessage = h('div', { class: 'form-message', 'aria-live': 'polite' });
  const addRowBtn = h('button', { type: 'button', class: 'btn btn-secondary btn-sm' }, h('span', { 'aria-hidden': 'true', class: 'btn-icon' }, '+'), 'Add a link');
  const saveMapBtn = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save link map');
  const mapTable = h('table', { class: 'data-table map-table' },
    h('caption', { class: 'visually-hidden' }, 'Link map'),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Link or path in documents'), h('th', { scope: 'col' }, 'Replace with'), h('th', { scope: 'col' }, h('span', { class: 'visually-hidden' }, 'Remove')))),
    mapRows);
  const mapForm = h('form', { class: 'stack', novalidate: true },
    h('p', { class: 'muted' }, 'Fixed replacements applied when links are rewritten, e.g. an old intranet address to its new home.'),
    h('div', { class: 'table-scroll' }, mapTable),
    h('div', { class: 'row-inline' }, addRowBtn), mapMessage, h('div', { class: 'form-actions' }, saveMapBtn));
  const mapCard = card('Link map', mapForm);

  function addMapRow(from = '', to = '', focus = false) {
    const n = mapRows.children.length + 1;
    const fromId = newId('map-from');
    const toId = newId('map-to');
    const fromInput = h('input', { id: fromId, type: 'text', value: from, class: 'map-from', spellcheck: 'false', placeholder: 'http://old.example/…' });
    const toInput = h('input', { id: toId, type: 'text', value: to, class: 'map-to', spellcheck: 'false', placeholder: 'https://new.example/…' });
    const remove = h('button', { type: 'button', class: 'btn btn-ghost btn-sm btn-danger-text' }, 'Remove', h('span', { class: 'visually-hidden' }, ` link ${n}`));
    const tr = h('tr', {},
      h('td', { dataset: { label: 'From' } }, h('label', { for: fromId, class: 'visually-hidden' }, `Link ${n}: from`), fromInput),
      h('td', { dataset: { label: 'To' } }, h('label', { for: toId, class: 'visually-hidden' }, `Link ${n}: replace with`), toInput),
      h('td', { class: 'al-r' }, remove));
    remove.addEventListener('click', () => {
      const nextFocus = tr.nextElementSibling?.querySelector('input') || tr.previousElementSibling?.querySelector('input') || addRowBtn;
      tr.remove();
      if (!mapRows.children.length) addMapRow();
      nextFocus.focus();
      announce('Link removed.');
    });
    mapRows.append(tr);
    if (focus) fromInput.focus();
  }
  addRowBtn.addEventListener('click', () => addMapRow('', '', true));

  mapForm.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(mapMessage);
    const map = {};
    let bad = null;
    for (const tr of mapRows.children) {
      const from = tr.querySelector('.map-from');
      const to = tr.querySelector('.map-to');
      from.removeAttribute('aria-invalid');
      to.removeAttribute('aria-invalid');
      if (!from.value.trim() && !to.value.trim()) continue;
      if (!from.value.trim() || !to.value.trim()) { (from.value.trim() ? to : from).setAttribute('aria-invalid', 'true'); bad = bad || (from.value.trim() ? to : from); continue; }
      map[from.value.trim()] = to.value.trim();
    }
    if (bad) { showError(mapMessage, 'Each link needs both sides (or clear both to drop it).'); bad.focus(); return; }
    setBusy(saveMapBtn, true, 'Saving…');
    try {
      await plainApi('POST', '/config/linkmap', { json: { map } });
      mapMessage.append(notice('success', null, h('p', {}, `Link map saved (${Object.keys(map).length} link${Object.keys(map).length === 1 ? '' : 's'}).`)));
      announce('Link map saved.');
    } catch (err) {
      if (err instanceof Unavailable) showError(mapMessage, 'The link map is not available on this server.');
      else showError(mapMessage, err, 'The link map was not saved');
      announce(err.message, true);
    } finally { setBusy(saveMapBtn, false); }
  });

  // ---- load -------------------------------------------------------------------------------
  body.append(card('Connection', form), h('div', { class: 'split-2' }, profilesCard, mapCard));
  (async () => {
    try {
      const snapshot = await plainApi('GET', '/config');
      embedded = snapshot.storage_embedded === true;
      const cfg = findConfig(snapshot);
      if (cfg) fill(cfg, { keepEdited: true }); else { inUse = embedded && !edited.size; updateBuiltIn(); }
    } catch (err) {
      if (err instanceof Unavailable) { clear(body); body.append(unavailablePanel('Storage configuration')); return; }
      showError(formMessage, err, 'The current settings could not be read');
    }
    loadProfiles();
    try {
      const pairs = extractMap(await plainApi('GET', '/config/linkmap'));
      for (const [a, b] of pairs) addMapRow(a, b);
    } catch (err) {
      if (err instanceof Unavailable) { mapForm.replaceChildren(h('p', { class: 'muted' }, 'The link map is not available on this server.')); }
      else showError(mapMessage, err, 'The link map could not be read');
    }
    if (!mapRows.children.length && mapForm.contains(mapTable)) addMapRow();
  })();
}

export default { id: 'storage', title: 'Storage', admin: true, render };
