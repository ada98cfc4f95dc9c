// The panic panel (see src/ui/panic_panel.rs): when the WASM stops, the page says so instead
// of going dead, shows the message and offers the link plus the message for a bug report.
// Plain JavaScript on purpose: it must work after the WASM has stopped. Two ways in:
// - a Rust panic: the panic hook calls `headroomPanicPanel(message)` (or leaves the message
//   in `headroomPendingPanic` when it runs before this script);
// - a trap (`unreachable`, e.g. the WASM memory exhausted, which aborts without a panic):
//   an uncaught WebAssembly.RuntimeError, from an event handler or a promise.
// The page below keeps the last plan it drew. Every text goes in with textContent.
(() => {
  const el = (tag, id, text) => {
    const e = document.createElement(tag);
    if (id) e.id = id;
    if (text !== undefined) e.textContent = text;
    return e;
  };
  const show = (message) => {
    if (document.getElementById('panic-panel') || !document.body) return;
    const href = location.href;
    const panel = el('section', 'panic-panel');
    panel.setAttribute('role', 'alert');
    panel.className = 'panic-panel';
    panel.append(el('h2', null, 'Headroom stopped with an internal error'));
    panel.append(el('p', null, 'This is a bug, not your input. The plan below is the last one drawn; reload the page to continue (your scenario is in the link). Please report it with the text below.'));
    panel.append(el('pre', 'panic-message', message));
    const area = el('textarea', 'panic-report', `Headroom stopped with an internal error.\nLink: ${href}\nMessage: ${message}\n`);
    area.readOnly = true;
    area.rows = 4;
    area.setAttribute('aria-label', 'Report to copy');
    panel.append(area);
    const row = el('p');
    const button = el('button', 'panic-copy', 'Copy scenario and report');
    button.type = 'button';
    const reload = el('a', 'panic-reload', 'Reload');
    reload.href = href;
    row.append(button, reload, el('span', 'panic-copy-status'));
    panel.append(row);
    document.body.insertBefore(panel, document.body.firstChild);
  };
  window.headroomPanicPanel = show;
  if (typeof window.headroomPendingPanic === 'string') show(window.headroomPendingPanic);
  const trapped = (error) => {
    if (typeof WebAssembly !== 'undefined' && error instanceof WebAssembly.RuntimeError) show(`WebAssembly trap: ${error.message}`);
  };
  window.addEventListener('error', (event) => trapped(event.error));
  window.addEventListener('unhandledrejection', (event) => trapped(event.reason));
  document.addEventListener('click', (event) => {
    const button = event.target instanceof Element ? event.target.closest('#panic-copy') : null;
    if (!button) return;
    const report = document.getElementById('panic-report');
    const status = document.getElementById('panic-copy-status');
    const text = report ? report.value : location.href;
    const say = (message) => { if (status) status.textContent = message; };
    const copy = navigator.clipboard ? navigator.clipboard.writeText(text) : Promise.reject(new Error('no clipboard'));
    copy.then(() => say('Copied.'), () => {
      if (report) report.select();
      say('Copy the selected text (Ctrl+C).');
    });
  });
})();
