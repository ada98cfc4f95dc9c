// The panic panel's "Copy scenario and report" button (see src/ui/panic_panel.rs).
// Plain JavaScript on purpose: it must work after the WASM has stopped.
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
