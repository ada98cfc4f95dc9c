#!/usr/bin/env node
// Builds public/echarts/: an ECharts bundle with only what the page draws, instead of the
// full 5.6.0 build (1,034 KB raw, 335 KB gzip), in two stages so that the first chart waits
// for no more ECharts than it draws:
//   echarts.js        the first stage, a module script in index.html (with a modulepreload of
//                     echarts-core.js beside it): it registers what the planner's memory chart
//                     draws and defines the global `echarts` (init, getInstanceByDom, dispose,
//                     version) and `echarts.more()`.
//   echarts-more.js   the second stage: `echarts.more()` imports it (once; a Promise) and it
//                     registers the rest. A chart whose option needs it waits for it
//                     (ChartBox's `extra`, src/ui/chart_box.rs); so does an export.
//   echarts-core.js   what both stages share (echarts/core, zrender); the only shared chunk
//                     (the build stops if esbuild makes another).
// Trunk copies the folder into dist/ (index.html, `copy-dir`).
//
// What is included, and which code needs it (the Rust side is charming 0.6 → ECharts):
// First stage:
//   core (echarts/core)    init / setOption / resize / dispose (src/ui/chart_box.rs),
//                          getDataURL (the PNG export, src/ui/share_export.rs), getInstanceByDom
//                          / getOption (the e2e tests, scripts/bench-page.mjs); the built-in
//                          'dark' theme (chart_box.rs under prefers-color-scheme: dark) and the
//                          label layout are part of core.
//   BarChart               series::Bar: the stacked component bars of memory_chart
//                          (src/chart/mod.rs: Planner, Strategy, embed, exports) and
//                          compare_chart (src/chart/compare.rs).
//   GridComponent          Grid + xAxis/yAxis (value and category axes) of every chart.
//   LegendPlainComponent   component::Legend (a plain legend; `type: 'scroll'` would need
//                          LegendScrollComponent).
//   TooltipComponent       element::Tooltip, trigger 'item' (brings AxisPointer with it).
//   MarkLineComponent      element::MarkLine: the capacity line and the spill band of
//                          memory_chart; the capacity, peak and phase lines of
//                          timeline_chart (src/chart/timeline.rs).
//   CanvasRenderer         every chart on the page, and the PNG export (getDataURL).
// Second stage (after the first chart):
//   LineChart              series::Line: the dashed "Capacity" line with diamond symbols of
//                          compare_chart and the step timeline (timeline_chart).
//   TitleComponent         component::Title: the PNG/SVG export's title and subtitle
//                          (model × GPUs; layout, precision, verdict, link, date —
//                          report::export_chart).
//   SVGRenderer            the SVG export (share_export.rs: init with renderer 'svg', ssr).
// Left out: every other series type, toolbox, dataZoom, visualMap, markPoint,
// markArea, graphic, dataset/transform, aria, polar/geo/… coordinate systems and the
// UniversalTransition feature; none is in any option the page builds (the escalation
// flowchart of the Strategy tab is plain SVG from Leptos, src/ui/strategy/flow_chart.rs,
// not ECharts). A chart that needs one of them: add it to a stage and rebuild;
// src/chart/tests.rs checks which stage each chart's option needs.
//
// Reproducible: exact versions of echarts and esbuild are pinned in package.json and
// package-lock.json, and this script refuses others; the same inputs give the same bytes.
// The output is committed (a fresh clone builds with Trunk alone); scripts/setup-web.sh runs
// `--check` and rebuilds the files when they differ.
//
// Usage: node scripts/build-echarts.mjs           writes public/echarts/
//        node scripts/build-echarts.mjs --check   exit 1 when public/echarts/ differs
import { build } from 'esbuild';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT = join(ROOT, 'public', 'echarts');

/** The first stage's `echarts.use([...])` list: [name, installer under echarts/lib/]. Each is
 * imported from its own file, not from echarts/charts or echarts/components: those index
 * modules would be shared by both stages and pull every installer into echarts-core.js. */
const FIRST = [
  ['BarChart', 'chart/bar/install.js'],
  ['GridComponent', 'component/grid/install.js'],
  ['LegendPlainComponent', 'component/legend/installLegendPlain.js'],
  ['TooltipComponent', 'component/tooltip/install.js'],
  ['MarkLineComponent', 'component/marker/installMarkLine.js'],
  ['CanvasRenderer', 'renderer/installCanvasRenderer.js'],
];
/** The second stage's. */
const MORE = [
  ['LineChart', 'chart/line/install.js'],
  ['TitleComponent', 'component/title/install.js'],
  ['SVGRenderer', 'renderer/installSVGRenderer.js'],
];
/** What the global `echarts` offers the page (and the tests): as little of echarts/core as
 * it uses, so that esbuild can leave the rest out. */
const API = ['init', 'getInstanceByDom', 'dispose', 'version'];

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

const register = (modules) => [
  ...modules.map(([name, file]) => `import { install as ${name} } from 'echarts/lib/${file}';`),
  `import { use } from 'echarts/core';`,
  `use([${modules.map(([name]) => name).join(', ')}]);`,
];
const ENTRIES = {
  echarts: [
    ...register(FIRST),
    `import { ${API.join(', ')} } from 'echarts/core';`,
    `let more;`,
    `globalThis.echarts = { ${API.join(', ')}, more: () => (more ??= import('./echarts-more.js')) };`,
    '',
  ].join('\n'),
  'echarts-more': [...register(MORE), ''].join('\n'),
};

const list = (modules) => modules.map(([name]) => name).join(', ');
const banner = `/*! Apache ECharts ${installed.echarts} (with ZRender ${installed.zrender}), custom build for Headroom:
 * echarts/core + ${list(FIRST)}; later ${list(MORE)}.
 * Built by scripts/build-echarts.mjs with esbuild ${installed.esbuild} (minified ES modules, global \`echarts\`);
 * do not edit, rebuild. Licensed under the Apache License 2.0: https://www.apache.org/licenses/LICENSE-2.0
 * (NOTICE: Apache ECharts, Copyright 2017-2025 The Apache Software Foundation.) */`;

/** Serves the two entries' text to esbuild from memory. */
const entries = {
  name: 'headroom-echarts-entries',
  setup(b) {
    b.onResolve({ filter: /^entry:/ }, (args) => ({ path: args.path.slice('entry:'.length), namespace: 'entry' }));
    // The second stage is its own entry: the first one's dynamic import of it stays as written.
    b.onResolve({ filter: /^\.\/echarts-more\.js$/ }, () => ({ path: './echarts-more.js', external: true }));
    b.onLoad({ filter: /.*/, namespace: 'entry' }, (args) => ({ contents: ENTRIES[args.path], resolveDir: ROOT, loader: 'js' }));
  },
};

const result = await build({
  entryPoints: Object.keys(ENTRIES).map((name) => ({ in: `entry:${name}`, out: name })),
  plugins: [entries],
  bundle: true,
  splitting: true,
  format: 'esm',
  chunkNames: 'echarts-core',
  outdir: OUT,
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
const files = new Map(result.outputFiles.map((f) => [f.path.slice(OUT.length + 1), Buffer.from(f.contents)]));
const expected = ['echarts.js', 'echarts-core.js', 'echarts-more.js'];
if (files.size !== expected.length || !expected.every((name) => files.has(name))) {
  console.error(`build-echarts: esbuild made ${[...files.keys()].join(', ')}, expected ${expected.join(', ')}`);
  process.exit(2);
}
const kb = (n) => `${(n / 1000).toFixed(1)} KB`;
const size = expected.map((name) => `${name} ${kb(files.get(name).length)} raw, ${kb(gzipSync(files.get(name), { level: 9 }).length)} gzip -9`).join('; ');

if (process.argv.includes('--check')) {
  const stale = expected.filter((name) => {
    const path = join(OUT, name);
    return !existsSync(path) || !readFileSync(path).equals(files.get(name));
  });
  const extra = existsSync(OUT) ? readdirSync(OUT).filter((name) => !files.has(name)) : [];
  if (stale.length || extra.length) {
    console.error(`build-echarts: public/echarts/ differs from a fresh build (${[...stale, ...extra].join(', ')}): run node scripts/build-echarts.mjs`);
    process.exit(1);
  }
  console.error(`build-echarts: public/echarts/ is up to date (${size})`);
} else {
  rmSync(OUT, { recursive: true, force: true });
  mkdirSync(OUT, { recursive: true });
  for (const [name, bytes] of files) writeFileSync(join(OUT, name), bytes);
  console.error(`build-echarts: wrote public/echarts/ (${size})`);
}
