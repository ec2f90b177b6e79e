// A small, safe Markdown renderer for previews (CommonMark core + GFM tables, strikethrough,
// task lists, footnotes). All text is escaped; links keep only http(s)/mailto/relative/#
// targets, images also data:image/. Raw HTML is shown as text, except a few plain tags.

const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

const LIST_RE = /^( {0,12})([-*+]|\d{1,9}[.)])(\s+|$)/;
const FENCE_RE = /^ {0,3}(`{3,}|~{3,})\s*([^`\s]*)[^`]*$/;
const HEADING_RE = /^ {0,3}(#{1,6})(?:\s+(.*?))?\s*#*\s*$/;
const HR_RE = /^ {0,3}([-*_])(?:\s*\1){2,}\s*$/;
const QUOTE_RE = /^ {0,3}> ?/;
const TABLE_SEP_RE = /^\s*\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?\s*$/;
const FOOTDEF_RE = /^\[\^([^\]]+)\]:\s?(.*)$/;
const SAFE_TAGS = /&lt;(\/?)(br|sup|sub|u|mark|kbd|ins|del|small)\s*\/?&gt;/gi;

const blank = (l) => /^\s*$/.test(l);
const indentOf = (l) => l.match(/^ */)[0].length;

function safeUrl(url, image = false) {
  const u = url.trim().replace(/^<|>$/g, '');
  if (/^(https?:|mailto:|#|\/|\.\/|\.\.\/)/i.test(u) || !/^[a-z][a-z0-9+.-]*:/i.test(u)) return u;
  if (image && /^data:image\/(png|jpe?g|gif|webp|bmp|svg\+xml);/i.test(u)) return u;
  if (image && /^blob:/i.test(u)) return u;
  return '';
}

const HTML_BLOCK_RE = /^ {0,3}<(\/?)([a-zA-Z][a-zA-Z0-9-]*)(\s[^>]*)?\/?>|^ {0,3}<!--/;

/**
 * Markdown text -> HTML string. Without `html`, raw HTML is shown as text and the output is
 * safe for innerHTML. With `{html: true}` raw HTML passes through: the caller MUST sanitise
 * the result (see sanitize.js) before inserting it.
 */
export function renderMarkdown(src, { html = false } = {}) {
  const ctx = { footnotes: new Map(), order: [], html };
  const lines = String(src || '').replace(/\r\n?/g, '\n').replace(/\t/g, '    ').split('\n');
  let out = blocks(lines, ctx);
  if (ctx.order.length) {
    out += '<section class="footnotes" aria-label="Footnotes"><ol>';
    for (const key of ctx.order) {
      out += `<li id="fn-${esc(key)}">${ctx.footnotes.get(key) || ''}</li>`;
    }
    out += '</ol></section>';
  }
  return out;
}

function startsBlock(line) {
  return FENCE_RE.test(line) || HEADING_RE.test(line) || HR_RE.test(line) || QUOTE_RE.test(line)
    || /^ {0,3}([-*+]|1[.)])\s+\S/.test(line);
}

function blocks(lines, ctx) {
  const out = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (blank(line)) { i += 1; continue; }
    let m = line.match(FENCE_RE);
    if (m) {
      const fence = m[1];
      const lang = m[2];
      const body = [];
      i += 1;
      while (i < lines.length && !new RegExp(`^ {0,3}${fence[0] === '`' ? '`' : '~'}{${fence.length},}\\s*$`).test(lines[i])) {
        body.push(lines[i]);
        i += 1;
      }
      i += 1;
      out.push(`<pre><code${lang ? ` class="language-${esc(lang)}"` : ''}>${esc(body.join('\n'))}</code></pre>`);
      continue;
    }
    if (indentOf(line) >= 4 && !LIST_RE.test(line)) {
      const body = [];
      while (i < lines.length && (indentOf(lines[i]) >= 4 || blank(lines[i]))) { body.push(lines[i].slice(4)); i += 1; }
      while (body.length && blank(body[body.length - 1])) body.pop();
      out.push(`<pre><code>${esc(body.join('\n'))}</code></pre>`);
      continue;
    }
    if (ctx.html && HTML_BLOCK_RE.test(line)) {
      const body = [];
      while (i < lines.length && !blank(lines[i])) { body.push(lines[i]); i += 1; }
      out.push(body.join('\n'));
      continue;
    }
    m = line.match(HEADING_RE);
    if (m) {
      const level = m[1].length;
      out.push(`<h${level}>${inline(m[2] || '', ctx)}</h${level}>`);
      i += 1;
      continue;
    }
    if (HR_RE.test(line)) { out.push('<hr>'); i += 1; continue; }
    if (QUOTE_RE.test(line)) {
      const body = [];
      while (i < lines.length && !blank(lines[i]) && (QUOTE_RE.test(lines[i]) || !startsBlock(lines[i]))) {
        body.push(lines[i].replace(QUOTE_RE, ''));
        i += 1;
      }
      out.push(`<blockquote>${blocks(body, ctx)}</blockquote>`);
      continue;
    }
    if (line.includes('|') && i + 1 < lines.length && TABLE_SEP_RE.test(lines[i + 1]) && lines[i + 1].includes('-')) {
      const head = cells(line);
      const aligns = cells(lines[i + 1]).map((c) => (c.startsWith(':') && c.endsWith(':') ? 'c' : c.endsWith(':') ? 'r' : ''));
      i += 2;
      const rows = [];
      while (i < lines.length && !blank(lines[i]) && lines[i].includes('|')) { rows.push(cells(lines[i])); i += 1; }
      const cell = (tag, text, k) => `<${tag}${aligns[k] ? ` class="al-${aligns[k]}"` : ''}>${inline(text || '', ctx)}</${tag}>`;
      out.push(`<div class="table-wrap"><table><thead><tr>${head.map((c, k) => cell('th', c, k)).join('')}</tr></thead><tbody>${
        rows.map((r) => `<tr>${head.map((_, k) => cell('td', r[k], k)).join('')}</tr>`).join('')}</tbody></table></div>`);
      continue;
    }
    m = line.match(FOOTDEF_RE);
    if (m) {
      const body = [m[2]];
      i += 1;
      while (i < lines.length && (indentOf(lines[i]) >= 2 || (blank(lines[i]) && i + 1 < lines.length && indentOf(lines[i + 1]) >= 4))) {
        body.push(lines[i].trim());
        i += 1;
      }
      const key = m[1];
      if (!ctx.order.includes(key)) ctx.order.push(key);
      const back = ` <a href="#fnref-${esc(key)}" class="fn-back" aria-label="Back to text">↩</a>`;
      const inner = blocks(body, ctx);
      ctx.footnotes.set(key, inner.endsWith('</p>') ? `${inner.slice(0, -4)}${back}</p>` : inner + back);
      continue;
    }
    if (LIST_RE.test(line) && !(line.match(LIST_RE)[3] === '' && !LIST_RE.test(lines[i + 1] || ''))) {
      i = list(lines, i, ctx, out);
      continue;
    }
    // paragraph (with setext headings)
    const para = [line];
    i += 1;
    let setext = 0;
    while (i < lines.length && !blank(lines[i])) {
      if (/^ {0,3}=+\s*$/.test(lines[i])) { setext = 1; i += 1; break; }
      if (/^ {0,3}-+\s*$/.test(lines[i]) && para.length) { setext = 2; i += 1; break; }
      if (startsBlock(lines[i]) || (lines[i].includes('|') && TABLE_SEP_RE.test(lines[i + 1] || '') && (lines[i + 1] || '').includes('-'))) break;
      para.push(lines[i]);
      i += 1;
    }
    const text = para.map((l) => l.trim()).join('\n');
    out.push(setext ? `<h${setext}>${inline(text, ctx)}</h${setext}>` : `<p>${inline(text, ctx)}</p>`);
  }
  return out.join('\n');
}

function cells(row) {
  let r = row.trim();
  if (r.startsWith('|')) r = r.slice(1);
  if (r.endsWith('|') && !r.endsWith('\\|')) r = r.slice(0, -1);
  return r.split(/(?<!\\)\|/).map((c) => c.trim().replace(/\\\|/g, '|'));
}

function list(lines, start, ctx, out) {
  const first = lines[start].match(LIST_RE);
  const indent = first[1].length;
  const ordered = /\d/.test(first[2]);
  const startNum = ordered ? parseInt(first[2], 10) : 1;
  const items = [];
  let loose = false;
  let i = start;
  while (i < lines.length) {
    const m = lines[i].match(LIST_RE);
    if (!m || m[1].length !== indent || /\d/.test(m[2]) !== ordered) break;
    const contentIndent = m[0].length;
    const item = [lines[i].slice(contentIndent)];
    i += 1;
    while (i < lines.length) {
      const l = lines[i];
      if (blank(l)) {
        let j = i;
        while (j < lines.length && blank(lines[j])) j += 1;
        if (j < lines.length && indentOf(lines[j]) > indent) {
          for (let k = i; k < j; k += 1) item.push('');
          loose = true;
          i = j;
          continue;
        }
        break;
      }
      const ls = indentOf(l);
      if (ls > indent) { item.push(l.slice(Math.min(ls, contentIndent))); i += 1; continue; }
      if (LIST_RE.test(l) || startsBlock(l)) break;
      item.push(l.trim());
      i += 1;
    }
    items.push(item);
    // blank lines followed by a sibling item: the list continues (and is loose)
    let j = i;
    while (j < lines.length && blank(lines[j])) j += 1;
    if (j > i && j < lines.length) {
      const n = lines[j].match(LIST_RE);
      if (n && n[1].length === indent && /\d/.test(n[2]) === ordered) { loose = true; i = j; }
    }
  }
  const tag = ordered ? 'ol' : 'ul';
  const startAttr = ordered && startNum !== 1 ? ` start="${startNum}"` : '';
  let hasTask = false;
  const lis = items.map((item) => {
    let task = '';
    const t = item[0].match(/^\[([ xX])\]\s+/);
    if (t) {
      hasTask = true;
      task = `<input type="checkbox" disabled${t[1] !== ' ' ? ' checked' : ''} aria-label="${t[1] !== ' ' ? 'done' : 'not done'}"> `;
      item[0] = item[0].slice(t[0].length);
    }
    let body = blocks(item, ctx);
    if (!loose) body = body.replace(/^<p>([\s\S]*?)<\/p>/, '$1');
    if (task) body = body.startsWith('<p>') ? body.replace('<p>', `<p>${task}`) : task + body;
    return `<li${task ? ' class="task"' : ''}>${body}</li>`;
  });
  out.push(`<${tag}${startAttr}${hasTask ? ' class="tasks"' : ''}>${lis.join('')}</${tag}>`);
  return i;
}

function inline(text, ctx) {
  const slots = [];
  const keep = (html) => { slots.push(html); return `\u0000${slots.length - 1}\u0000`; };
  let s = text;
  // code spans and backslash escapes first: nothing inside them is Markdown
  s = s.replace(/(`+)([\s\S]*?[^`])\1(?!`)/g, (_, __, code) => keep(`<code>${esc(code.trim() || code)}</code>`));
  s = s.replace(/\\([\\`*_{}[\]()#+\-.!|~<>])/g, (_, ch) => keep(esc(ch)));
  // images and links (before escaping, so URLs are taken verbatim, then escaped)
  s = s.replace(/!\[([^\]]*)\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+"([^"]*)")?\s*\)/g, (_, alt, url, title) => {
    const u = safeUrl(url, true);
    return u ? keep(`<img src="${esc(u)}" alt="${esc(alt)}"${title ? ` title="${esc(title)}"` : ''} loading="lazy">`) : keep(esc(alt));
  });
  s = s.replace(/\[\^([^\]]+)\]/g, (_, key) => {
    if (!ctx.order.includes(key)) ctx.order.push(key);
    const n = ctx.order.indexOf(key) + 1;
    return keep(`<sup class="fnref"><a href="#fn-${esc(key)}" id="fnref-${esc(key)}">${n}</a></sup>`);
  });
  s = s.replace(/\[((?:[^\]\\]|\\.)*)\]\(\s*(<[^>]*>|[^\s)]+)(?:\s+"([^"]*)")?\s*\)/g, (_, label, url, title) => {
    const u = safeUrl(url);
    const inner = inline(label, ctx);
    return u ? keep(`<a href="${esc(u)}"${title ? ` title="${esc(title)}"` : ''} target="_blank" rel="noopener noreferrer">${inner}</a>`) : keep(inner);
  });
  s = s.replace(/<((?:https?:\/\/|mailto:)[^\s>]+)>/g, (_, url) => keep(`<a href="${esc(url)}" target="_blank" rel="noopener noreferrer">${esc(url)}</a>`));
  if (ctx.html) s = s.replace(/<\/?[a-zA-Z][a-zA-Z0-9-]*(?:\s[^<>]*)?\/?>|<!--[\s\S]*?-->/g, (tag) => keep(tag));
  s = esc(s);
  s = s.replace(SAFE_TAGS, (_, slash, tag) => `<${slash}${tag.toLowerCase()}>`);
  s = s.replace(/(\*\*|__)(?=\S)([\s\S]*?\S)\1/g, '<strong>$2</strong>');
  s = s.replace(/(^|[^*\w])\*(?=\S)([\s\S]*?\S)\*(?!\*)/g, '$1<em>$2</em>');
  s = s.replace(/(^|[^_\w])_(?=\S)([\s\S]*?\S)_(?![_\w])/g, '$1<em>$2</em>');
  s = s.replace(/~~(?=\S)([\s\S]*?\S)~~/g, '<del>$1</del>');
  s = s.replace(/(?: {2,}|\\)\n/g, '<br>\n');
  // restore the kept pieces (nested ones too)
  let prev;
  do {
    prev = s;
    s = s.replace(/\u0000(\d+)\u0000/g, (_, k) => slots[Number(k)]);
  } while (s !== prev && s.includes('\u0000'));
  return s;
}

/** Pretty-print JSON text with token classes for colouring; falls back to plain text. */
export function highlightJson(text) {
  let pretty;
  try { pretty = JSON.stringify(JSON.parse(text), null, 2); } catch { return esc(text); }
  return esc(pretty).replace(
    /(&quot;(?:\\.|[^&\\]|&(?!quot;))*&quot;)(\s*:)?|\b(true|false|null)\b|(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g,
    (m, str, colon, lit, num) => {
      if (str) return colon ? `<span class="j-key">${str}</span>${colon}` : `<span class="j-str">${str}</span>`;
      if (lit) return `<span class="j-lit">${lit}</span>`;
      if (num) return `<span class="j-num">${num}</span>`;
      return m;
    });
}

/** Pretty-printed JSON text (for copy/download), or the input when it is not JSON. */
export function prettyJson(text) {
  try { return JSON.stringify(JSON.parse(text), null, 2); } catch { return text; }
}
