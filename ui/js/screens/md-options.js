// The Markdown screen's options, kept per browser tab (sessionStorage): leaving the screen and
// coming back keeps cover, logo, contents, header, footer, CSS, style and file name, so the
// next PDF does not come out plain. Chosen image files are kept too (up to 2 MB each).

const KEY = 'docservice.md-options';
const FILE_LIMIT = 2 * 1024 * 1024;

function read() {
  try { return JSON.parse(sessionStorage.getItem(KEY) || '{}') || {}; } catch { return {}; }
}

function write(data) {
  try { sessionStorage.setItem(KEY, JSON.stringify(data)); } catch { /* quota: keep what fits */ }
}

function fileFromStored(stored) {
  const bin = atob(stored.data);
  const bytes = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i += 1) bytes[i] = bin.charCodeAt(i);
  return new File([bytes], stored.name, { type: stored.type });
}

function readAsBase64(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result).split(',', 2)[1] || '');
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

/**
 * Restore the kept options into the fields, then keep every later change.
 * `texts`: inputs/selects/textareas by name; `checks`: checkboxes; `segments`: segmented
 * controls ({inputs}) whose `onSet(value)` is called after a restore; `files`: file inputs.
 * Returns `applyStyle(select)` for a select whose options arrive later (the themes).
 */
export function keepOptions({ root, texts, checks, segments, files }) {
  const kept = read();
  for (const [name, input] of Object.entries(texts)) {
    if (kept.texts && typeof kept.texts[name] === 'string') input.value = kept.texts[name];
  }
  for (const [name, input] of Object.entries(checks)) {
    if (kept.checks && typeof kept.checks[name] === 'boolean') input.checked = kept.checks[name];
  }
  for (const [name, seg] of Object.entries(segments)) {
    const value = kept.segments && kept.segments[name];
    const input = seg.inputs.find((i) => i.value === value);
    if (input) { input.checked = true; seg.onSet(value); }
  }
  for (const [name, input] of Object.entries(files)) {
    const stored = kept.files && kept.files[name];
    if (!stored) continue;
    try {
      const dt = new DataTransfer();
      dt.items.add(fileFromStored(stored));
      input.files = dt.files;
    } catch { /* an old or broken entry: leave the field empty */ }
  }

  const state = { files: { ...(kept.files || {}) } };
  function save() {
    write({
      texts: Object.fromEntries(Object.entries(texts).map(([n, i]) => [n, i.value])),
      checks: Object.fromEntries(Object.entries(checks).map(([n, i]) => [n, i.checked])),
      segments: Object.fromEntries(Object.entries(segments).map(([n, s]) => [n, (s.inputs.find((i) => i.checked) || {}).value])),
      files: state.files,
    });
  }
  root.addEventListener('input', save);
  root.addEventListener('change', save);
  for (const [name, input] of Object.entries(files)) {
    input.addEventListener('change', async () => {
      const f = input.files[0];
      delete state.files[name];
      if (f && f.size <= FILE_LIMIT) {
        try { state.files[name] = { name: f.name, type: f.type, data: await readAsBase64(f) }; } catch { /* unreadable */ }
      }
      save();
    });
  }
  return { styleWanted: kept.texts ? kept.texts.css_name : undefined, save };
}
