// First run: create the first company and its administrator with the one-time setup
// address `serve` printed (#/setup?token=...). The token is taken from the address by the
// router (and removed from it), then checked with GET /api/setup before the form shows.
import { authApi, Unavailable } from '../api.js';
import { passwordPair } from '../dialog.js';
import { announce, clear, field, h, notice, setBusy, setFieldError, showError } from '../dom.js';

function render(view, ctx) {
  const token = ctx.setupToken || '';
  const body = h('div', { class: 'stack' }, h('p', { class: 'muted', role: 'status' }, 'Checking the setup address…'));
  view.append(h('div', { class: 'signin' },
    h('div', { class: 'signin-brand' }, h('span', { class: 'brand-mark-lg', 'aria-hidden': 'true' }, 'd'), h('span', {}, 'docservice')),
    h('section', { class: 'card signin-card setup-card', 'aria-labelledby': 'setup-title' },
      h('h1', { id: 'setup-title', class: 'page-title', tabindex: '-1' }, 'Set up docservice'),
      h('p', { class: 'lead' }, 'Create your company and its first administrator. You will be signed in right away.'),
      body)));

  function done(title, text, action) {
    clear(body);
    body.append(notice('info', title, h('p', {}, text)), action);
  }
  const toSignin = h('button', { type: 'button', class: 'btn btn-primary btn-block', onclick: () => ctx.navigate('signin') }, 'Go to sign in');

  authApi('GET', `/api/setup?token=${encodeURIComponent(token)}`).then((state) => {
    if (!state.tokenValid) {
      done('This setup address is not valid', 'It was used already, it expired (after one hour), or it was copied incompletely. Restart the service to print a new address, or create the administrator in a terminal with "just create-admin".', toSignin);
      return;
    }
    form();
  }).catch((err) => {
    if (err instanceof Unavailable || err.status === 404) {
      done('Setup is already done', 'A company exists on this server. Sign in with your company code, username and password.', toSignin);
    } else { clear(body); showError(body, err); }
  });

  function form() {
    clear(body);
    const code = field({ label: 'Company code', name: 'companyCode', required: true, autocomplete: 'off', spellcheck: false, hint: 'Short, used at sign-in, e.g. ACME. Letters, digits, _ . -' });
    const name = field({ label: 'Company name', name: 'companyName', required: true, autocomplete: 'organization', hint: 'Shown in the app, e.g. Acme Ltd.' });
    const username = field({ label: 'Your username', name: 'username', required: true, autocomplete: 'username', spellcheck: false, hint: '3 to 64 letters, digits or _ . @ -' });
    const realName = field({ label: 'Your name', name: 'realName', autocomplete: 'name', hint: 'Optional.' });
    const pair = passwordPair(field, setFieldError, 'Password');
    const message = h('div', { class: 'form-message' });
    const submit = h('button', { type: 'submit', class: 'btn btn-primary btn-block' }, 'Create company and sign in');
    const fields = { companyCode: code, companyName: name, username, realName, password: pair.first };
    const f = h('form', { class: 'stack', novalidate: true }, code.wrap, name.wrap, username.wrap, realName.wrap, pair.first.wrap, pair.again.wrap, message, submit);
    body.append(f);
    code.input.focus();
    f.addEventListener('submit', async (e) => {
      e.preventDefault();
      clear(message);
      Object.values(fields).forEach((x) => setFieldError(x, ''));
      const values = { token, companyCode: code.input.value.trim(), companyName: name.input.value.trim(), username: username.input.value.trim(), realName: realName.input.value.trim() };
      const bad = [];
      if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(values.companyCode)) { setFieldError(code, 'Use 1 to 64 letters, digits or _ . - (starting with a letter or digit).'); bad.push(code); }
      if (!values.companyName) { setFieldError(name, 'Enter the company name.'); bad.push(name); }
      if (!/^[\p{L}\p{N}_.@-]{3,64}$/u.test(values.username)) { setFieldError(username, 'Use 3 to 64 letters, digits or _ . @ -'); bad.push(username); }
      if (bad.length) { bad[0].input.focus(); announce('Some fields need attention.', true); return; }
      const password = pair.value();
      if (password === null) { announce('Some fields need attention.', true); return; }
      setBusy(submit, true, 'Creating…');
      try {
        const made = await authApi('POST', '/api/setup', { ...values, password });
        sessionStorage.removeItem('docservice.setupToken');
        ctx.signedIn(made.token, { id: made.userId, username: made.username, role: made.role, realName: values.realName, companyId: made.companyId, companyName: made.companyName });
        ctx.setFlash(`Welcome! ${made.companyName} is set up and you are its administrator. Sign in next time with company code ${made.companyCode}. Add your team with "New user".`);
        announce('Company created. You are signed in.');
        ctx.navigate('users');
      } catch (err) {
        setBusy(submit, false);
        const target = fields[err.field];
        if (target) { setFieldError(target, err.message); target.input.focus(); } else showError(message, err);
        announce(err.message, true);
      }
    });
  }
}

export default { id: 'setup', title: 'Set up', render };
