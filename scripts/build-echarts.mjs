#!/usr/bin/env node
// Builds public/echarts.min.js: an ECharts bundle with only what the page draws, instead of
// the full 5.6.0 build (1,034 KB raw, 335 KB gzip). Trunk copies the file into dist/
// (index.html, `copy-file`) and the page loads it with a plain <script>, before the app;
// it defines the same global `echarts` as the full build (`echarts/core`'s whole API:
// init, getInstanceByDom, dispose, use, registerTheme, graphic, …), so nothing else changes.
//
// What is included, and which code needs it (the Rust side is charming 0.6 → ECharts):
//   core (echarts/core)    init / setOption / resize / dispose (charming's WasmRenderer and
//                          src/ui/chart_box.rs), getDataURL and renderToSVGString
//                          (src/ui/share_export.rs), getInstanceByDom / getOption (the e2e
//                          tests, scripts/bench-page.mjs); the built-in 'dark' theme
//                          (chart_box.rs under prefers-color-scheme: dark) and the label
//                          layout are part of core.
//   BarChart               series::Bar: the stacked component bars of memory_chart
//                          (src/chart/mod.rs: Planner, Strategy, embed, exports) and
//                          compare_chart (src/chart/compare.rs).
//   LineChart              series::Line: the dashed "Capacity" line with diamond symbols of
//                          compare_chart.
//   GridComponent          Grid + xAxis/yAxis (value and category axes) of both charts.
//   LegendPlainComponent   component::Legend (a plain legend; `type: 'scroll'` would need
//                          LegendScrollComponent).
//   TooltipComponent       element::Tooltip, trigger 'item' (brings AxisPointer with it).
//   MarkLineComponent      element::MarkLine: the capacity line and the spill band of
//                          memory_chart; the capacity, peak and phase lines of
//                          timeline_chart (src/chart/timeline.rs).
//   TitleComponent         component::Title: the PNG/SVG export's title and subtitle
//                          (model × GPUs; layout, precision, verdict, link, date —
//                          report::export_chart).
//   CanvasRenderer         every chart on the page, and the PNG export (getDataURL).
//   SVGRenderer            the SVG export (share_export.rs: init with renderer 'svg', ssr).
// Left out: every other series type, toolbox, dataZoom, visualMap, markPoint,
// markArea, graphic, dataset/transform, aria, polar/geo/… coordinate systems and the
// UniversalTransition feature; none is in any option the page builds (the escalation
// flowchart of the Strategy tab is plain SVG from Leptos, src/ui/strategy/flow_chart.rs,
// not ECharts). A chart that needs one of them: add it to MODULES and rebuild.
//
// Reproducible: exact versions of echarts and esbuild are pinned in package.json and
// package-lock.json, and this script refuses others; the same inputs give the same bytes.
// The output is committed (a fresh clone builds with Trunk alone); scripts/setup-web.sh runs
// `--check` and rebuilds the file when it differs.
//
// Usage: node scripts/build-echarts.mjs           writes public/echarts.min.js
//        node scripts/build-echarts.mjs --check   exit 1 when public/echarts.min.js differs
import { build } from 'esbuild';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'public', 'echarts.min.js');

/** `echarts.use([...])` list: [module path under echarts/, export name]. */
const MODULES = [
  ['charts', 'BarChart'],
  ['charts', 'LineChart'],
  ['components', 'GridComponent'],
  ['components', 'LegendPlainComponent'],
  ['components', 'TooltipComponent'],
  ['components', 'MarkLineComponent'],
  ['components', 'TitleComponent'],
  ['renderers', 'CanvasRenderer'],
  ['renderers', 'SVGRenderer'],
];

const json = (path) => JSON.parse(readFileSync(join(ROOT, path), 'utf8'));
const pinned = json('package.json').devDependencies;
const installed = {
  echarts: json('node_modules/echarts/package.json').version,
  zrender: json('node_modules/zrender/package.json').version,
  esbuild: json('node_modules/esbuild/package.json').version,
};
for (const name of ['echarts', 'esbuild']) {
  if (installed[name] !== pinned[name]) {
    console.error(`build-echarts: node_modules has ${name} ${installed[name]}, package.json pins ${pinned[name]}: run npm ci`);
    process.exit(2);
  }
}

const names = MODULES.map(([, name]) => name);
const entry = [
  ...MODULES.map(([from, name]) => `import { ${name} } from 'echarts/${from}';`),
  `import { use } from 'echarts/core';`,
  `use([${names.join(', ')}]);`,
  `export * from 'echarts/core';`,
  '',
].join('\n');

const banner = `/*! Apache ECharts ${installed.echarts} (with ZRender ${installed.zrender}), custom build for Headroom:
 * echarts/core + ${names.join(', ')}.
 * Built by scripts/build-echarts.mjs with esbuild ${installed.esbuild} (minified IIFE, global \`echarts\`);
 * do not edit, rebuild. Licensed under the Apache License 2.0: https://www.apache.org/licenses/LICENSE-2.0
 * (NOTICE: Apache ECharts, Copyright 2017-2025 The Apache Software Foundation.) */`;

const result = await build({
  stdin: { contents: entry, resolveDir: ROOT, sourcefile: 'headroom-echarts-entry.js', loader: 'js' },
  bundle: true,
  format: 'iife',
  globalName: 'echarts',
  platform: 'browser',
  target: 'es2020',
  minify: true,
  legalComments: 'none', // the banner carries the licence
  banner: { js: banner },
  define: { 'process.env.NODE_ENV': '"production"', __DEV__: 'false' },
  charset: 'utf8',
  write: false,
  logLevel: 'warning',
});
const bytes = Buffer.from(result.outputFiles[0].contents);
const size = `${bytes.length} B raw, ${gzipSync(bytes, { level: 9 }).length} B gzip -9`;

if (process.argv.includes('--check')) {
  let current = null;
  try {
    current = readFileSync(OUT);
  } catch {}
  if (!current || !current.equals(bytes)) {
    console.error(`build-echarts: public/echarts.min.js differs from a fresh build (${size}): run node scripts/build-echarts.mjs`);
    process.exit(1);
  }
  console.error(`build-echarts: public/echarts.min.js is up to date (${size})`);
} else {
  writeFileSync(OUT, bytes);
  console.error(`build-echarts: wrote public/echarts.min.js (${size}): echarts/core + ${names.join(', ')}`);
}
