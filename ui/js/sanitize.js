// An allow-list HTML sanitiser for rendered Markdown that may carry raw HTML (tables with
// spans, anchors, <sup>...). Parsing happens in an inert document (no scripts run, nothing
// loads); only known-harmless elements and attributes are copied into the page.

const ID_PREFIX = 'doc-';
const GLOBAL_ATTRS = ['id', 'class', 'title', 'lang', 'dir', 'aria-label', 'aria-hidden'];
const ALLOWED = {
  a: ['href', 'name'], img: ['src', 'alt', 'width', 'height', 'loading'],
  table: [], thead: [], tbody: [], tfoot: [], tr: [], caption: [], colgroup: ['span'], col: ['span'],
  th: ['colspan', 'rowspan', 'scope', 'align'], td: ['colspan', 'rowspan', 'align'],
  p: [], br: [], hr: [], div: [], span: [], section: [], article: [], figure: [], figcaption: [],
  em: [], strong: [], b: [], i: [], u: [], s: [], del: [], ins: [], mark: [], sup: [], sub: [], small: [],
  kbd: [], code: [], pre: [], samp: [], var: [], abbr: [], cite: [], q: [], blockquote: [],
  ul: [], ol: ['start', 'type', 'reversed'], li: ['value'], dl: [], dt: [], dd: [],
  h1: [], h2: [], h3: [], h4: [], h5: [], h6: [], details: ['open'], summary: [],
  input: ['type', 'checked', 'disabled'],
};
const DROP_WITH_CONTENT = new Set(['script', 'style', 'iframe', 'object', 'embed', 'template', 'noscript', 'svg', 'math', 'form', 'textarea', 'select', 'button', 'link', 'meta', 'base', 'title', 'head', 'frame', 'frameset', 'audio', 'video', 'canvas']);

const LINK_SCHEMES = new Set(['http', 'https', 'mailto']);
const IMAGE_DATA = /^data:image\/(png|jpe?g|gif|webp|bmp);/i;

/**
 * The address if it is allowed, else ''. Allow-list: http, https, mailto, relative paths and
 * `#fragments` (images also raster data: URIs and blob:). Browsers drop tabs and newlines
 * anywhere in a URL and control characters and spaces at its ends ("java\tscript:" runs as
 * javascript:), so they are removed before the scheme is read; any other control character
 * refuses the address.
 */
export function safeHref(url, image = false) {
  const u = String(url || '').replace(/[\t\n\r]/g, '').replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '');
  if (!u || /[\u0000-\u001f\u007f-\u009f]/.test(u)) return '';
  if (u.startsWith('#')) return u;
  const scheme = u.match(/^([^:/?#]*):/);
  if (!scheme) return u;                                   // relative (path, ?query, //host)
  const name = scheme[1].toLowerCase();
  if (LINK_SCHEMES.has(name)) return u;
  if (image && (IMAGE_DATA.test(u) || name === 'blob')) return u;
  return '';
}

function copy(node, doc) {
  if (node.nodeType === Node.TEXT_NODE) return doc.createTextNode(node.nodeValue);
  if (node.nodeType !== Node.ELEMENT_NODE) return null;
  const tag = node.localName;
  if (DROP_WITH_CONTENT.has(tag)) return null;
  const allowed = ALLOWED[tag];
  if (!allowed) {                                          // unknown: keep the children only
    const frag = doc.createDocumentFragment();
    for (const child of node.childNodes) { const c = copy(child, doc); if (c) frag.append(c); }
    return frag;
  }
  if (tag === 'input' && node.getAttribute('type') !== 'checkbox') return null;
  const el = doc.createElement(tag);
  for (const name of [...GLOBAL_ATTRS, ...allowed]) {
    if (!node.hasAttribute(name)) continue;
    let value = node.getAttribute(name);
    // ids of the document live in their own namespace, so they never clash with the app's
    if (name === 'id' || name === 'name') value = `${ID_PREFIX}${value}`;
    if (name === 'href' && value.startsWith('#')) value = `#${ID_PREFIX}${value.slice(1)}`;
    if (name === 'href') value = safeHref(value, false);
    if (name === 'src') value = safeHref(value, true);
    if ((name === 'href' || name === 'src') && !value) continue;
    el.setAttribute(name, value);
  }
  if (tag === 'input') el.setAttribute('disabled', '');
  if (tag === 'a' && el.hasAttribute('href') && !el.getAttribute('href').startsWith('#')) {
    el.setAttribute('target', '_blank');
    el.setAttribute('rel', 'noopener noreferrer');
  }
  for (const child of node.childNodes) { const c = copy(child, doc); if (c) el.append(c); }
  return el;
}

/** A DocumentFragment with the allowed part of `html`, ready to insert. */
export function sanitize(html) {
  const parsed = new DOMParser().parseFromString(`<!doctype html><body>${html}`, 'text/html');
  const frag = document.createDocumentFragment();
  for (const child of parsed.body.childNodes) { const c = copy(child, document); if (c) frag.append(c); }
  return frag;
}

/**
 * Put sanitised `html` into `container` and keep in-document links (#footnote) inside it:
 * they scroll to their target instead of changing the app's route.
 */
export function mountHtml(container, html) {
  container.replaceChildren(sanitize(html));
  if (!container.dataset.linksWired) {
    container.dataset.linksWired = '1';
    container.addEventListener('click', (e) => {
      const a = e.target.closest('a[href^="#"]');
      if (!a || !container.contains(a)) return;
      e.preventDefault();
      const target = container.querySelector(`[id="${CSS.escape(a.getAttribute('href').slice(1))}"]`);
      if (target) {
        target.scrollIntoView({ block: 'center' });
        if (!target.hasAttribute('tabindex')) target.setAttribute('tabindex', '-1');
        target.focus({ preventScroll: true });
      }
    });
  }
}
