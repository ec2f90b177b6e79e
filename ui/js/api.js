// API client for both envelopes of the service, signed in by the session cookie.
//   annotation API: {"code":"SUCCESS","data":...} / {"code":"USER_NOT_FOUND","message":"..."} + HTTP status
//   conversion API v2: {"code":0,"msg":"ok","data":...} / {"code":40001,"msg":"...","data":null} (HTTP 200)
//   plain JSON (/config/*, /system/time/check): {"ok":true,...} / {"ok":false,"error","hint"} + 4xx/5xx

// The session itself is a cookie the service sets at sign-in: HttpOnly (no script here reads
// it), SameSite=Strict, shared by every tab of this browser and ended for all of them by
// sign-out (docs/security.md). Kept here is only who signed in, in localStorage so that a new
// tab opens signed in too; the server decides on every request (a 401 ends it here).
export const USER_KEY = 'docservice.user';
const OLD_TOKEN_KEY = 'docservice.token';   // where a tab kept a bearer token before
// every request says it comes from this app: the service requires it of changes made with the
// session cookie, and another site's page cannot send it (a custom header needs CORS)
const APP_HEADER = { 'X-Requested-With': 'docservice' };

export const session = {
  get user() {
    try { return JSON.parse(localStorage.getItem(USER_KEY) || 'null'); } catch { return null; }
  },
  get signedIn() { return Boolean(this.user); },
  /** Remember who signed in (the token of a login answer is for scripts: the cookie holds it). */
  save(_token, user) {
    if (user) localStorage.setItem(USER_KEY, JSON.stringify(user));
  },
  clear() {
    localStorage.removeItem(USER_KEY);
    sessionStorage.removeItem(OLD_TOKEN_KEY);
    sessionStorage.removeItem(USER_KEY);
  },
};

/** A failed call: `code` is the service's code (string or number), `message` is in words. */
export class ApiError extends Error {
  constructor({ status = 0, code = 'ERROR', message = 'Something went wrong.', raw = '', hint = '', field = '', retryAfter = 0 } = {}) {
    super(message);
    this.status = status;
    this.code = code;
    this.raw = raw;          // the server's own text
    this.hint = hint;
    this.field = field;      // form field the error belongs to, when known
    this.retryAfter = retryAfter;
  }
}

/** The endpoint does not exist on this server (another service set, or not built yet). */
export class Unavailable extends ApiError {
  constructor(path) {
    super({ status: 404, code: 'UNAVAILABLE', message: `Not available on this server (${path} is not mounted here).` });
    this.path = path;
  }
}

const AUTH_MESSAGES = {
  USER_NOT_FOUND: 'The company code, username or password is not right.',
  USER_DISABLED: 'This account is disabled. Ask an administrator to enable it.',
  UNAUTHORIZED: 'Your session has ended. Please sign in again.',
  FORBIDDEN: 'Your role does not allow this. An ADMIN can do it.',
  NOT_FOUND: 'That user does not exist (any more) in your company.',
  USERNAME_EXISTS: 'This username is already taken in your company.',
  LAST_ADMIN: 'Not possible: the company would be left without an active ADMIN.',
  INVALID_ROLE: 'Choose one of the roles ADMIN, REVIEWER or ANNOTATOR.',
  PAYLOAD_TOO_LARGE: 'What you sent is too large.',
  SERVICE_UNAVAILABLE: 'The service is briefly unavailable. Try again in a moment.',
  WRONG_PASSWORD: 'This is not your current password.',
  SETUP_TOKEN_INVALID: 'This setup address is not valid any more (used, expired or mistyped). Restart the service for a new one, or run "just create-admin".',
  INTERNAL_ERROR: 'Something went wrong on the server. Try again; if it keeps happening, tell an administrator.',
};

const DOCS_PREFIX = {
  40001: '',
  40002: 'Not supported: ',
  40003: 'The document could not be read: ',
  40004: 'The archive was refused as unsafe: ',
  40101: 'Sign in first: ',
  40301: 'Not allowed: ',
  40401: 'Not found: ',
  41301: 'Too large: ',
  42201: 'That address is not allowed: ',
  50001: 'The conversion failed: ',
  50201: 'Storage problem: ',
  50301: 'The server is busy. Try again in a moment. ',
  50401: 'The conversion took too long and was stopped. ',
};

const FIELD_WORDS = ['companyCode', 'companyName', 'username', 'password', 'realName', 'role', 'status', 'oldPassword', 'newPassword'];

/** A server's text as a sentence: capital first letter, a full stop at the end. */
export function sentence(text) {
  const t = String(text || '').trim();
  if (!t) return '';
  const s = t[0].toUpperCase() + t.slice(1);
  return /[.!?]$/.test(s) ? s : `${s}.`;
}

/**
 * A server message that names one of the operator's settings, in words for this caller: the
 * reason stays, the setting gets a sentence of its own, and only for an ADMIN (others cannot
 * act on it). "127.0.0.2 is a loopback address; list it in STORAGE_ALLOWED_ENDPOINTS to use
 * it" -> "127.0.0.2 is a loopback address, which this server does not connect to. The
 * server's operator can allow it with the setting STORAGE_ALLOWED_ENDPOINTS."
 */
const SETTING = '([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)';
const SETTING_RULES = [
  [new RegExp(`^(.*?)[;,] list it in ${SETTING} to use it\\.?$`), (m) => [`${m[1]}, which this server does not connect to`, `The server's operator can allow it with the setting ${m[2]}`]],
  [new RegExp(`^(.*? is a private address) and ${SETTING} is set\\.?$`), (m) => [`${m[1]}, which this server does not connect to`, `The server's operator refuses private addresses with the setting ${m[2]}`]],
  [new RegExp(`^(.*?) under this worker's ${SETTING}.*$`), (m) => [`${m[1]} one this worker may read`, `The server's operator lists those folders in the setting ${m[2]}`]],
];

export function settingParts(text) {
  const t = String(text || '').trim();
  const admin = Boolean(session.user && session.user.role === 'ADMIN');
  for (const [re, words] of SETTING_RULES) {
    const m = t.match(re);
    if (m) {
      const [reason, setting] = words(m);
      return [sentence(reason), admin ? sentence(setting) : ''];
    }
  }
  return [t, ''];
}

/** settingParts as one text: the reason, then (for an ADMIN) the setting's sentence. */
export function settingWords(text) {
  return settingParts(text).filter(Boolean).join(' ');
}

function humanField(name) {
  return { companyCode: 'Company code', companyName: 'Company name', realName: 'Real name', oldPassword: 'Current password', newPassword: 'New password' }[name] || name;
}

/** A wait in whole minutes, rounded up ("1 minute", "15 minutes"). */
export function inMinutes(seconds) {
  const m = Math.max(1, Math.ceil(Number(seconds) / 60));
  return m === 1 ? '1 minute' : `${m} minutes`;
}

/** Words for an annotation-API failure, and the field it names (if any). */
export function authError(status, body, retryAfter = 0) {
  const code = (body && body.code) || (status ? `HTTP_${status}` : 'NETWORK');
  const raw = (body && (body.message || body.msg)) || '';
  let field = '';
  let message = AUTH_MESSAGES[code] || '';
  if (code === 'VALIDATION_ERROR') {
    field = FIELD_WORDS.find((f) => raw.startsWith(f)) || '';
    message = sentence(field ? raw.replace(field, humanField(field)) : raw) || 'Check the values you entered.';
  } else if (code === 'USERNAME_EXISTS') field = 'username';
  else if (code === 'INVALID_ROLE') field = 'role';
  else if (code === 'RATE_LIMITED') {
    retryAfter = Number(body && body.retryAfter) || retryAfter;
    message = retryAfter
      ? `Too many wrong passwords. Sign-in from this device is paused; try again in ${inMinutes(retryAfter)}.`
      : 'Too many requests right now. Wait a little and try again.';
  }
  if (!message) message = sentence(raw) || `The request failed (HTTP ${status}).`;
  const err = new ApiError({ status, code, message, raw, field, retryAfter });
  if (body && Number.isInteger(body.attemptsLeft)) {
    err.attemptsLeft = body.attemptsLeft;
    err.retryAfter = Number(body.retryAfter) || 0;
  }
  return err;
}

/** Words for a conversion-API (v2) failure. */
export function docsError(body, status = 200) {
  const code = Number(body && body.code) || 50001;
  const raw = (body && (body.msg || body.message)) || '';
  const redundant = { 40002: /unsupported|not supported|^not an? /i, 40003: /damaged|corrupt|password|encrypted|empty/i, 42201: /refused|not allowed/i, 50001: /failed/i, 41301: /large|limit/i, 40004: /unsafe/i, 40401: /not found|no such/i };
  const prefix = redundant[code] && redundant[code].test(raw) ? '' : (DOCS_PREFIX[code] ?? '');
  let message = prefix + (raw ? sentence(settingWords(raw)) : '');
  if (!message.trim()) message = `The request failed (code ${code}).`;
  let hint = '';
  if (code === 50201 && /not configured/i.test(raw)) hint = 'Set up object storage on the Storage screen first.';
  const err = new ApiError({ status, code, message: message.trim(), raw, hint });
  err.data = body && body.data ? body.data : null;   // partial results (e.g. a batch cut short)
  return err;
}

/** Words for a plain-JSON failure (`{ok:false,error,hint}`). */
export function plainError(status, body) {
  const raw = (body && (body.error || body.message || body.msg)) || '';
  // the reason first, then the hint, then (for an ADMIN) the operator's setting
  const [reason, setting] = settingParts(raw.replace(/^endpoint refused: /i, 'Endpoint refused: '));
  const message = sentence(reason) || `The request failed (HTTP ${status}).`;
  const hint = [sentence(settingWords((body && body.hint) || '')), setting].filter(Boolean).join(' ');
  return new ApiError({ status, code: (body && body.code) || `HTTP_${status}`, message, raw, hint, field: (body && body.field) || '' });
}

function missingEndpoint(status, body) {
  if (status !== 404) return false;
  if (!body || typeof body !== 'object') return true;
  if (body.message === 'no such endpoint') return true;
  return !('ok' in body) && !('code' in body);
}

function headers(extra = {}) {
  return { ...APP_HEADER, ...extra };
}

async function readJson(resp) {
  const text = await resp.text();
  if (!text) return null;
  try { return JSON.parse(text); } catch { return { __text: text }; }
}

const listeners = new Set();
/** Called when the server says the session is gone (401 on an authenticated call). */
export function onSessionLost(fn) { listeners.add(fn); }
function sessionLost() { for (const fn of listeners) fn(); }

async function send(path, init) {
  try {
    return await fetch(path, init);
  } catch {
    throw new ApiError({ status: 0, code: 'NETWORK', message: 'The server could not be reached. Check your connection and try again.' });
  }
}

/** Annotation API call; resolves to `data`. */
export async function authApi(method, path, body) {
  const init = { method, headers: headers(), cache: 'no-store' };
  if (body !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  const resp = await send(path, init);
  const data = await readJson(resp);
  if (missingEndpoint(resp.status, data)) throw new Unavailable(path);
  if (resp.ok && data && data.code === 'SUCCESS') return data.data;
  const err = authError(resp.status, data, Number(resp.headers.get('Retry-After')) || 0);
  if (resp.status === 401 && path !== '/api/auth/login') sessionLost();
  throw err;
}

/**
 * POST a multipart form to a conversion endpoint. Resolves to `data` of the v2 envelope, or,
 * when the answer is a file, to {blob, filename, type, warnings}. `onProgress(fraction|null)`
 * reports upload progress (XMLHttpRequest, because fetch cannot).
 */
export function docsForm(path, form, { onProgress, signal } = {}) {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', path);
    xhr.responseType = 'blob';
    const h = headers();
    for (const [k, v] of Object.entries(h)) xhr.setRequestHeader(k, v);
    if (onProgress) {
      xhr.upload.onprogress = (e) => onProgress(e.lengthComputable ? e.loaded / e.total : null);
      xhr.upload.onload = () => onProgress(1);
    }
    if (signal) signal.addEventListener('abort', () => xhr.abort());
    xhr.onerror = () => reject(new ApiError({ status: 0, code: 'NETWORK', message: 'The server could not be reached. Check your connection and try again.' }));
    xhr.onabort = () => reject(new ApiError({ status: 0, code: 'ABORTED', message: 'Cancelled.' }));
    xhr.onload = async () => {
      const type = xhr.getResponseHeader('Content-Type') || '';
      const blob = xhr.response;
      if (type.startsWith('application/json') || xhr.status >= 400) {
        let body = null;
        try { body = JSON.parse(await blob.text()); } catch { body = null; }
        if (missingEndpoint(xhr.status, body)) { reject(new Unavailable(path)); return; }
        if (xhr.status === 401) { sessionLost(); }
        if (body && body.code === 0) { resolve(body.data); return; }
        if (body && typeof body.code === 'number') { reject(docsError(body, xhr.status)); return; }
        if (body && typeof body.code === 'string') { reject(authError(xhr.status, body)); return; }
        reject(new ApiError({ status: xhr.status, code: `HTTP_${xhr.status}`, message: `The request failed (HTTP ${xhr.status}).` }));
        return;
      }
      let warnings = [];
      const rawWarnings = xhr.getResponseHeader('X-Conversion-Warnings');
      if (rawWarnings) { try { warnings = JSON.parse(decodeURIComponent(rawWarnings)); } catch { warnings = []; } }
      resolve({ blob, type, filename: filenameFrom(xhr.getResponseHeader('Content-Disposition')), warnings });
    };
    xhr.send(form);
  });
}

function filenameFrom(disposition) {
  if (!disposition) return '';
  const star = disposition.match(/filename\*=UTF-8''([^;]+)/i);
  if (star) { try { return decodeURIComponent(star[1]); } catch { /* fall through */ } }
  const plain = disposition.match(/filename="?([^";]+)"?/i);
  return plain ? plain[1] : '';
}

/**
 * Plain-JSON endpoints. `form` (object) is sent as multipart fields, `json` as a JSON body,
 * `query` as the query string. Resolves to the parsed object; `{ok:false}` rejects.
 */
export async function plainApi(method, path, { form, json, query, allowNotOk = false } = {}) {
  let url = path;
  if (query) {
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
    const s = q.toString();
    if (s) url += `?${s}`;
  }
  const init = { method, headers: headers(), cache: 'no-store' };
  if (form) {
    const fd = new FormData();
    for (const [k, v] of Object.entries(form)) if (v !== undefined && v !== null) fd.append(k, typeof v === 'boolean' ? String(v) : v);
    init.body = fd;
  } else if (json !== undefined) {
    init.headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(json);
  }
  const resp = await send(url, init);
  const data = await readJson(resp);
  if (missingEndpoint(resp.status, data)) throw new Unavailable(path);
  if (resp.status === 401) sessionLost();
  if (data && typeof data.code === 'number' && 'msg' in data) {       // a v2 envelope after all
    if (data.code === 0) return data.data ?? {};
    throw docsError(data, resp.status);
  }
  if (resp.ok && allowNotOk && data && data.ok === false) return data;   // a check that reports a problem
  if (!resp.ok || (data && data.ok === false)) {
    if (data && typeof data.code === 'string' && 'message' in data) throw authError(resp.status, data);
    throw plainError(resp.status, data);
  }
  return data || {};
}

/** True when `path` exists here (any answer but a bare 404). Used to hide unbuilt screens. */
export async function probe(path, method = 'GET') {
  try {
    const resp = await send(path, { method, headers: headers(), cache: 'no-store' });
    const data = await readJson(resp);
    return !missingEndpoint(resp.status, data);
  } catch {
    return false;
  }
}

/** GET a conversion-API (v2) resource; resolves to `data`. */
export async function docsGet(path) {
  const resp = await send(path, { method: 'GET', headers: headers(), cache: 'no-store' });
  const body = await readJson(resp);
  if (missingEndpoint(resp.status, body)) throw new Unavailable(path);
  if (resp.status === 401) sessionLost();
  if (body && body.code === 0) return body.data;
  if (body && typeof body.code === 'number') throw docsError(body, resp.status);
  throw new ApiError({ status: resp.status, code: `HTTP_${resp.status}`, message: `The request failed (HTTP ${resp.status}).` });
}

/**
 * POST a JSON body to a conversion-API (v2) endpoint; resolves to `data`. An aborted call
 * (`signal`) rejects with code ABORTED, so a caller can tell it from a failure. With
 * `limitSeconds`, a call that has no whole answer by then is given up (the request is
 * aborted) and rejects with code TIMEOUT: a stalled server or a dropped request then ends
 * in words instead of a wait without end.
 */
export async function docsJson(path, body, { signal, limitSeconds = 0 } = {}) {
  const call = new AbortController();
  const cancel = () => call.abort();
  if (signal) {
    if (signal.aborted) call.abort();
    else signal.addEventListener('abort', cancel, { once: true });
  }
  let late = false;
  const timer = limitSeconds > 0 ? setTimeout(() => { late = true; call.abort(); }, limitSeconds * 1000) : null;
  const init = { method: 'POST', headers: headers({ 'Content-Type': 'application/json' }), cache: 'no-store', body: JSON.stringify(body), signal: call.signal };
  let resp;
  let data;
  try {
    resp = await fetch(path, init);
    data = await readJson(resp);
  } catch {
    if (late) throw new ApiError({ code: 'TIMEOUT', message: `The server did not answer within ${limitSeconds} s.` });
    if (signal && signal.aborted) throw new ApiError({ code: 'ABORTED', message: 'Cancelled.' });
    throw new ApiError({ status: 0, code: 'NETWORK', message: 'The server could not be reached. Check your connection and try again.' });
  } finally {
    clearTimeout(timer);
    if (signal) signal.removeEventListener('abort', cancel);
  }
  if (missingEndpoint(resp.status, data)) throw new Unavailable(path);
  if (resp.status === 401) sessionLost();
  if (data && data.code === 0) return data.data;
  if (data && typeof data.code === 'number') throw docsError(data, resp.status);
  throw new ApiError({ status: resp.status, code: `HTTP_${resp.status}`, message: `The request failed (HTTP ${resp.status}).` });
}

/**
 * Follow a server-sent event stream of the docs face (`GET /api/jobs/{id}/events`) with the
 * session's cookie: `onEvent(name, data)` per event; resolves
 * when the stream ends. A JSON answer instead of a stream is thrown as the docs error.
 */
export async function docsEvents(path, onEvent, { signal } = {}) {
  const resp = await send(path, { method: 'GET', headers: headers({ Accept: 'text/event-stream' }), cache: 'no-store', signal });
  if (resp.status === 401) sessionLost();
  if (!(resp.headers.get('Content-Type') || '').startsWith('text/event-stream') || !resp.body) {
    const body = await readJson(resp);
    if (missingEndpoint(resp.status, body)) throw new Unavailable(path);
    if (body && typeof body.code === 'number') throw docsError(body, resp.status);
    throw new ApiError({ status: resp.status, code: `HTTP_${resp.status}`, message: `The request failed (HTTP ${resp.status}).` });
  }
  const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart());
      }
      if (data.length) onEvent(name, JSON.parse(data.join('\n')));
    }
  }
}
