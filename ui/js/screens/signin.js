// Sign in: company code, username, password.
import { authApi, inMinutes, session, Unavailable } from '../api.js';
import { announce, clear, field, h, notice, setBusy, setFieldError, showError } from '../dom.js';

/** What a wrong password costs from here on: tries left before a pause, or the pause. */
function lockoutWarning(err) {
  if (err.code !== 'USER_NOT_FOUND' || !Number.isInteger(err.attemptsLeft)) return '';
  if (err.retryAfter) return `Sign-in from this device is paused for ${inMinutes(err.retryAfter)}; after that, each wrong try pauses it for longer.`;
  if (err.attemptsLeft <= 2) {
    const tries = err.attemptsLeft === 1 ? '1 attempt' : `${err.attemptsLeft} attempts`;
    return `${tries} left before sign-in from this device is paused for a minute.`;
  }
  return '';
}

function render(view, ctx) {
  const company = field({ label: 'Company code', name: 'companyCode', autocomplete: 'organization', required: true, spellcheck: false });
  const username = field({ label: 'Username', name: 'username', autocomplete: 'username', required: true, spellcheck: false });
  const password = field({ label: 'Password', name: 'password', type: 'password', autocomplete: 'current-password', required: true });
  const reveal = h('button', { type: 'button', class: 'btn btn-ghost btn-sm reveal', 'aria-pressed': 'false', 'aria-label': 'Show password' }, 'Show');
  reveal.addEventListener('click', () => {
    const show = password.input.type === 'password';
    password.input.type = show ? 'text' : 'password';
    reveal.setAttribute('aria-pressed', String(show));
    reveal.textContent = show ? 'Hide' : 'Show';
    reveal.setAttribute('aria-label', show ? 'Hide password' : 'Show password');
  });
  password.input.after(reveal);
  password.input.parentElement.classList.add('has-reveal');
  const wrapPw = h('div', { class: 'input-with-button' });
  password.input.before(wrapPw);
  wrapPw.append(password.input, reveal);

  const message = h('div', { class: 'form-message', id: 'signin-message' });
  const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-block' }, 'Sign in');
  company.input.dataset.autofocus = '';

  const form = h('form', { class: 'stack', novalidate: true, 'aria-describedby': 'signin-message' },
    company.wrap, username.wrap, password.wrap, message, submit);

  const flash = ctx.takeFlash();
  if (flash) message.append(notice('info', null, h('p', {}, flash)));
  // first run: no company yet, so nobody can sign in; say how to get in
  authApi('GET', '/api/setup').then(() => {
    message.prepend(notice('info', 'No company yet', h('p', {}, 'This service was just installed. Open the setup address printed in the terminal where it was started (it ends in #/setup?token=…), or create the first administrator there with "just create-admin".')));
  }).catch(() => { /* 404: set up already, or no sign-in on this server */ });

  const fields = { companyCode: company, username, password };
  form.addEventListener('submit', async (e) => {
    e.preventDefault();
    clear(message);
    Object.values(fields).forEach((f) => setFieldError(f, ''));
    const values = { companyCode: company.input.value.trim(), username: username.input.value.trim(), password: password.input.value };
    const missing = [];
    if (!values.companyCode) { setFieldError(company, 'Enter your company code.'); missing.push(company); }
    if (!values.username) { setFieldError(username, 'Enter your username.'); missing.push(username); }
    if (!values.password) { setFieldError(password, 'Enter your password.'); missing.push(password); }
    if (missing.length) { missing[0].input.focus(); announce('Some fields need attention.', true); return; }
    setBusy(submit, true, 'Signing in…');
    try {
      const login = await authApi('POST', '/api/auth/login', values);
      session.save(login.token, { username: login.username, role: login.role, id: login.userId });
      let me = null;
      try { me = await authApi('GET', '/api/auth/me'); } catch { me = null; }
      ctx.signedIn(login.token, me || { id: login.userId, username: login.username, role: login.role, realName: '' });
      const next = sessionStorage.getItem('docservice.next') || 'convert';
      sessionStorage.removeItem('docservice.next');
      announce(`Signed in as ${login.username}.`);
      ctx.navigate(next === 'signin' ? 'convert' : next);
    } catch (err) {
      setBusy(submit, false);
      if (err instanceof Unavailable) {
        clear(message);
        message.append(notice('info', 'This server has no sign-in', h('p', {}, 'It only runs the document conversion service. You can use the conversion tools without an account.'),
          h('button', { type: 'button', class: 'btn btn-secondary', onclick: () => { ctx.continueAsGuest(); ctx.navigate('convert'); } }, 'Continue to the conversion tools')));
        return;
      }
      const target = fields[err.field];
      if (target) { setFieldError(target, err.message); target.input.focus(); }
      else {
        const warning = lockoutWarning(err);
        showError(message, warning ? { message: `${err.message} ${warning}` } : err);
        if (err.code === 'USER_NOT_FOUND') { password.input.select(); password.input.focus(); }
      }
      announce(message.textContent || err.message, true);
    }
  });

  view.append(h('div', { class: 'signin' },
    h('div', { class: 'signin-brand' },
      h('span', { class: 'brand-mark-lg', 'aria-hidden': 'true' }, 'd'),
      h('span', {}, 'docservice')),
    h('section', { class: 'card signin-card', 'aria-labelledby': 'signin-title' },
      h('h1', { id: 'signin-title', class: 'page-title', tabindex: '-1' }, 'Sign in'),
      h('p', { class: 'lead' }, 'Convert documents, publish Markdown as PDF or Word, and manage your team.'),
      form),
    h('p', { class: 'signin-foot muted' }, 'Your session is kept only in this browser tab.')));
}

export default { id: 'signin', title: 'Sign in', render };
