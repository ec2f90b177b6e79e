// JSON results of the Convert screen (export=json, chunks): pretty-printed, with token classes
// for colouring. Every piece of the text is escaped before the classes go around it.

const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');

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
