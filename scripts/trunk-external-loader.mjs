// Trunk post-build hook: moves the inline module script Trunk injects to load the WASM into
// an external file (adding the import of ECharts after the page's first paint), so index.html's
// Content-Security-Policy can say `script-src 'self'` with no inline script, no hash and no
// nonce (a static host cannot mint nonces).
//
// Reads $TRUNK_STAGING_DIR/index.html, writes the script to loader-<hash>.js beside it and
// replaces the inline script with <script type="module" async src="./loader-<hash>.js">.
// Fails the build when anything inline is left, so the CSP can never silently break the page.
//
// The downloads start once the static first paint (src/first_paint.rs) has been painted
// (`headroomFirstPaint`, public/first-paint.js; at once for an address with a query, which
// has no copy): the `<link rel="preload">` / `<link rel="modulepreload">` tags of <head>
// (Trunk's for the WASM and its JS glue, index.html's for ECharts' first stage) are taken
// out of the HTML and appended by the loader then, with their attributes (integrity
// included), and Trunk's static import of the glue becomes a dynamic one after them. So the
// first paint never shares the link with 600 KB of scripts: on a slow link the copy shows
// after the HTML alone, and the app's downloads follow it by the copy's paint (a blocking
// 1 KB script and a layout). Lighthouse's simulated LCP counts every request that finished
// before the observed paint; with the preloads in <head> a local run counted the WASM and
// ECharts (LCP 4.4 s simulated against an observed paint at 80 ms).
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) {
  console.error('trunk-external-loader: TRUNK_STAGING_DIR is not set (run by `trunk build`)');
  process.exit(1);
}
const file = join(dir, 'index.html');
let html = readFileSync(file, 'utf8');
const inline = /<script type="module"(?: nonce="[^"]*")?>([\s\S]*?)<\/script>/;
const found = html.match(inline);
if (!found) {
  console.error('trunk-external-loader: no inline module script found in index.html');
  process.exit(1);
}
// After Trunk's code (which has run the WASM's start, so the page's first render is done):
// ECharts' first stage, once that render has been painted, so the first download is the
// WASM's alone. The charts wait for the `headroom-echarts` event (src/ui/chart_box.rs);
// `headroomEcharts` says how it went for a chart that asks later. The event is dispatched
// from a task of its own (setTimeout), not from the task that evaluated ECharts' module, so
// evaluating the library and drawing the first chart are two shorter tasks rather than one
// long one that blocks input (Lighthouse's Total Blocking Time counts each task's time over
// 50 ms).
const echarts = `
requestAnimationFrame(() => setTimeout(() => {
  import('./echarts/echarts.js').then(() => true, (e) => { console.warn('ECharts did not load; each chart says so', e); return false; }).then((ok) => setTimeout(() => {
    window.headroomEcharts = ok;
    dispatchEvent(new Event('headroom-echarts'));
  }, 0));
}, 0));
`;
// The preload tags, as attribute maps for the loader to append after the first paint.
const preloads = html.match(/<link rel="(?:module)?preload"[^>]*>/g) ?? [];
for (const link of preloads) html = html.replace(link, '');
const property = { crossorigin: 'crossOrigin' };
const links = preloads.map((link) => Object.fromEntries([...link.matchAll(/([a-z-]+)="([^"]*)"/g)].map(([, name, value]) => [property[name] ?? name, value])));
const trunkImport = /import init, \* as bindings from '([^']+)';/;
if (!trunkImport.test(found[1])) {
  console.error("trunk-external-loader: Trunk's loader no longer imports `init, * as bindings` from its glue; update this hook");
  process.exit(1);
}
const started = found[1]
  .trim()
  .replace(
    trunkImport,
    `await window.headroomFirstPaint;
for (const link of ${JSON.stringify(links)}) document.head.append(Object.assign(document.createElement('link'), link));
const bindings = await import('$1');
const init = bindings.default;`,
  );
const code = started + '\n' + echarts;
const name = `loader-${createHash('sha256').update(code).digest('hex').slice(0, 16)}.js`;
writeFileSync(join(dir, name), code);
// `async`: the loader runs as soon as it has arrived; it imports ECharts after the first
// render has been painted (above).
html = html.replace(inline, `<script type="module" async src="./${name}"></script>`);
const left = html.match(/<script(?![^>]*\bsrc=)[^>]*>\s*\S/);
if (left) {
  console.error(`trunk-external-loader: an inline script is left in index.html: ${left[0]}`);
  process.exit(1);
}
writeFileSync(file, html);
