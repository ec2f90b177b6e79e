// docservice browser app: hash router, session handling and the page shell.
import { authApi, onSessionLost, session, USER_KEY } from './js/api.js';
import { announce, clear, h } from './js/dom.js';
import signin from './js/screens/signin.js';
import users from './js/screens/users.js';
import convert from './js/screens/convert.js';
import markdown from './js/screens/markdown.js';
import batches from './js/screens/batches.js';
import storage from './js/screens/storage.js';
import keys from './js/screens/keys.js';
import setup from './js/screens/setup.js';
import activity from './js/screens/activity.js';
import { openChangePassword } from './js/screens/password.js';

const SCREENS = { signin, users, convert, markdown, batches, storage, keys, setup, activity };
const PUBLIC_ROUTES = ['signin', 'setup'];   // shown without a session, without the top bar
const SETUP_TOKEN_KEY = 'docservice.setupToken';
const DEFAULT_ROUTE = 'convert';
const GUEST_KEY = 'docservice.guest';

const view = document.getElementById('view');
const topbar = document.getElementById('topbar');
let cleanup = null;
let firstRender = true;
let flash = '';

function currentRoute() {
  const m = location.hash.match(/^#\/([\w-]+)/);
  return m && SCREENS[m[1]] ? m[1] : '';
}

function isGuest() { return sessionStorage.getItem(GUEST_KEY) === '1'; }

const ctx = {
  get user() { return session.user; },
  get guest() { return isGuest(); },
  navigate(route) {
    if (location.hash === `#/${route}`) render();
    else location.hash = `#/${route}`;
  },
  signedIn(token, user) {
    sessionStorage.removeItem(GUEST_KEY);
    session.save(token, user);
    updateShell();
  },
  continueAsGuest() {
    sessionStorage.setItem(GUEST_KEY, '1');
    updateShell();
  },
  takeFlash() { const f = flash; flash = ''; return f; },
  setFlash(text) { flash = text; },
  get setupToken() { return sessionStorage.getItem(SETUP_TOKEN_KEY) || ''; },
};

function updateShell() {
  const user = session.user;
  const who = document.getElementById('who-text');
  clear(who);
  if (user) {
    who.append(
      h('span', { class: 'avatar', 'aria-hidden': 'true' }, (user.realName || user.username || '?').trim().charAt(0).toUpperCase()),
      h('span', { class: 'who-lines' },
        h('span', { class: 'who-name' }, h('span', { class: 'visually-hidden' }, 'Signed in as '), user.realName || user.username),
        h('span', { class: 'who-meta' }, `${user.username} · ${user.role}${user.companyName ? ` · ${user.companyName}` : ''}`)));
  } else if (isGuest()) {
    who.append(h('span', { class: 'who-meta' }, 'Not signed in'));
  }
  document.getElementById('signout').textContent = user ? 'Sign out' : 'Sign in';
  document.getElementById('change-password').hidden = !user;
  for (const li of document.querySelectorAll('[data-admin]')) li.hidden = !(user && user.role === 'ADMIN');
  updateNavCue();
}

async function signOut() {
  if (session.signedIn) {
    try { await authApi('POST', '/api/auth/logout'); } catch { /* the session is gone either way */ }
  }
  session.clear();
  sessionStorage.removeItem(GUEST_KEY);
  flash = 'You are signed out.';
  updateShell();
  ctx.navigate('signin');
}

/** Mark which edges of the navigation hide tabs (the CSS fades them: a cue to scroll). */
function updateNavCue() {
  const nav = document.querySelector('.mainnav');
  const left = nav.scrollLeft > 2;
  const right = nav.scrollLeft + nav.clientWidth < nav.scrollWidth - 2;
  if (left && right) nav.dataset.more = 'both';
  else if (left || right) nav.dataset.more = left ? 'left' : 'right';
  else delete nav.dataset.more;
}

/** Scroll the navigation (only it, not the page) so the current tab is in view. */
function revealCurrentTab() {
  const nav = document.querySelector('.mainnav');
  const current = nav.querySelector('[aria-current="page"]');
  if (current && !topbar.hidden) {
    const n = nav.getBoundingClientRect();
    const r = current.getBoundingClientRect();
    if (r.left < n.left + 24 || r.right > n.right - 24) {
      nav.scrollLeft += (r.left + r.width / 2) - (n.left + n.width / 2);
    }
  }
  updateNavCue();
}

function render() {
  let route = currentRoute();
  if (route === 'setup') {
    // the one-time token of the setup address: kept for this tab, taken out of the address bar
    const m = location.hash.match(/[?&]token=([^&]*)/);
    if (m) sessionStorage.setItem(SETUP_TOKEN_KEY, decodeURIComponent(m[1]));
  }
  const authed = session.signedIn || isGuest();
  if (!route) route = authed ? DEFAULT_ROUTE : 'signin';
  if (!authed && !PUBLIC_ROUTES.includes(route)) {
    sessionStorage.setItem('docservice.next', route);
    route = 'signin';
  }
  if (authed && route === 'signin' && session.signedIn) route = DEFAULT_ROUTE;
  if (`#/${route}` !== location.hash) history.replaceState(null, '', `#/${route}`);

  if (cleanup) { try { cleanup(); } catch { /* ignore */ } cleanup = null; }
  const screen = SCREENS[route];
  topbar.hidden = PUBLIC_ROUTES.includes(route);
  document.body.classList.toggle('is-signin', PUBLIC_ROUTES.includes(route));
  for (const a of document.querySelectorAll('[data-route]')) {
    if (a.dataset.route === route) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  clear(view);
  document.title = `${screen.title} · docservice`;
  if (screen.admin && !(session.user && session.user.role === 'ADMIN')) {
    view.append(h('div', { class: 'page-header' }, h('h1', { class: 'page-title', tabindex: '-1' }, screen.title)),
      h('div', { class: 'card empty-state', role: 'status' },
        h('p', { class: 'empty-title' }, 'Administrators only'),
        h('p', { class: 'muted' }, 'This screen needs the ADMIN role. Ask an administrator of your company.')));
  } else {
    cleanup = screen.render(view, ctx) || null;
  }
  // focus: the page heading after a navigation (so screen readers hear where they are)
  const target = view.querySelector('[data-autofocus]') || view.querySelector('h1');
  if (target && !(firstRender && !PUBLIC_ROUTES.includes(route))) target.focus({ preventScroll: false });
  if (!firstRender) announce(`${screen.title} page`);
  firstRender = false;
  window.scrollTo(0, 0);
  revealCurrentTab();
}

document.getElementById('change-password').addEventListener('click', (e) => openChangePassword(e.currentTarget));

document.getElementById('signout').addEventListener('click', () => {
  if (session.user) signOut();
  else { sessionStorage.removeItem(GUEST_KEY); ctx.navigate('signin'); }
});

// the session ended (sign-out in another tab, an admin, its lifetime): every tab's next request
// hears 401 and goes to sign-in; one on the sign-in page already stays there
onSessionLost(() => {
  session.clear();
  if (PUBLIC_ROUTES.includes(currentRoute())) { updateShell(); return; }
  flash = 'Your session has ended. Please sign in again.';
  updateShell();
  sessionStorage.setItem('docservice.next', currentRoute() || DEFAULT_ROUTE);
  ctx.navigate('signin');
});

// the skip link must not change the hash (that is the router's)
document.querySelector('.skip-link').addEventListener('click', (e) => {
  e.preventDefault();
  const main = document.getElementById('main');
  main.focus();
  main.scrollIntoView();
});

window.addEventListener('hashchange', render);
document.querySelector('.mainnav').addEventListener('scroll', updateNavCue, { passive: true });
window.addEventListener('resize', revealCurrentTab);
updateShell();
render();

// refresh who is signed in (role or name may have changed since the last page load); without a
// record of it, the session cookie may still hold a session (signed in before this tab kept
// one): then the tab opens signed in
if (session.signedIn) {
  authApi('GET', '/api/auth/me').then((me) => { session.save('', me); updateShell(); }).catch(() => {});
} else if (!isGuest()) {
  // a plain fetch: its 401 (no session) must not end a sign-in begun meanwhile
  fetch('/api/auth/me', { cache: 'no-store', headers: { 'X-Requested-With': 'docservice' } })
    .then((r) => r.json().then((body) => (r.ok ? body : null), () => null))   // read to the end
    .then((body) => {
      if (!body || body.code !== 'SUCCESS' || session.signedIn) return;
      session.save('', body.data);
      updateShell();
      if (currentRoute() === 'signin') {
        const next = sessionStorage.getItem('docservice.next') || DEFAULT_ROUTE;
        sessionStorage.removeItem('docservice.next');
        ctx.navigate(next === 'signin' ? DEFAULT_ROUTE : next);
      }
    }).catch(() => {});
}

// sign-in and sign-out in another tab of this browser show here at once
window.addEventListener('storage', (e) => {
  if (e.key !== USER_KEY && e.key !== null) return;
  if (session.signedIn) { updateShell(); if (currentRoute() === 'signin') ctx.navigate(DEFAULT_ROUTE); return; }
  if (!PUBLIC_ROUTES.includes(currentRoute()) && !isGuest()) {
    flash = 'You are signed out.';
    updateShell();
    sessionStorage.setItem('docservice.next', currentRoute() || DEFAULT_ROUTE);
    ctx.navigate('signin');
  }
});
