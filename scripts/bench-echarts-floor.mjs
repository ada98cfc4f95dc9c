#!/usr/bin/env node
// ECharts' own floor on this machine (developer benchmark): how fast the page's first chart
// and a slider's chart update could be if everything but ECharts took no time.
//   1. Opens the page in dist/, records the memory chart's option as ECharts receives it
//      (the JSON text our code hands to JSON.parse) at load and after one slider move, and
//      the chart's size.
//   2. Writes a page with nothing but ECharts' first stage (dist/echarts/), the page's CSS
//      and a module that draws that option in a box of that size, to a temporary folder.
//   3. Loads that page and the real one in turn, each in a fresh context, and prints each
//      one's median time to the first chart (the frame after the chart's canvas appears, as
//      bench-page.mjs measures it).
//   4. On the ECharts-only page, alternates `setOption` between the two options and prints
//      the median and p90 of the call alone (ECharts' share of bench-page's slider → chart).
// Usage: trunk build --release && node scripts/bench-echarts-floor.mjs [loads=15]
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve } from '../tests/e2e/static-server.mjs';
import { DIST, launch, markFirstChart, waitForChart } from '../tests/e2e/browser.mjs';

const LOADS = Number(process.argv[2] ?? 15);
const MOVES = 40;
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.9) - 1];

const browser = await launch();
const page = await serve(DIST);
const floorDir = mkdtempSync(join(tmpdir(), 'headroom-echarts-floor-'));
let floor;
try {
  // 1: the options the page hands to ECharts.
  const capture = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await capture.addInitScript(() => {
    const parse = JSON.parse;
    window.__options = [];
    JSON.parse = function (text, reviver) {
      if (typeof text === 'string' && text.includes('"series"') && text.includes('"Parameters"')) window.__options.push(text);
      return parse.call(this, text, reviver);
    };
  });
  await capture.goto(page.url);
  await waitForChart(capture);
  const box = await capture.evaluate(() => {
    const r = document.getElementById('memory-chart').getBoundingClientRect();
    return { width: r.width, height: r.height };
  });
  const first = await capture.evaluate(() => window.__options[0]);
  await capture.evaluate(() => {
    const slider = document.getElementById('micro-batch-range');
    slider.value = '3';
    slider.dispatchEvent(new Event('input', { bubbles: true }));
  });
  await capture.waitForFunction(() => window.__options.length > 1);
  const second = await capture.evaluate(() => window.__options.at(-1));
  await capture.close();

  // 2: the ECharts-only page.
  mkdirSync(join(floorDir, 'echarts'));
  for (const f of readdirSync(join(DIST, 'echarts'))) copyFileSync(join(DIST, 'echarts', f), join(floorDir, 'echarts', f));
  const css = readdirSync(DIST).filter((f) => f.startsWith('main-') && f.endsWith('.css'));
  for (const f of css) copyFileSync(join(DIST, f), join(floorDir, f));
  writeFileSync(join(floorDir, 'draw.js'), [
    `const options = [${JSON.stringify(first)}, ${JSON.stringify(second)}];`,
    `const box = document.createElement('div');`,
    `box.id = 'memory-chart';`,
    `box.style.width = '${box.width}px';`,
    `box.style.height = '${box.height}px';`,
    `document.body.appendChild(box);`,
    `window.__chart = echarts.init(box);`,
    `window.__chart.setOption(JSON.parse(options[0]));`,
    `window.__options = options;`,
    '',
  ].join('\n'));
  writeFileSync(join(floorDir, 'index.html'), `<!doctype html>
<html lang="en"><head><meta charset="utf-8" /><meta name="viewport" content="width=device-width, initial-scale=1" />
<link rel="icon" href="data:," />${css.map((f) => `<link rel="stylesheet" href="${f}" />`).join('')}
<link rel="modulepreload" href="echarts/echarts-core.js" />
<script type="module" src="echarts/echarts.js"></script><script type="module" src="draw.js"></script>
</head><body></body></html>
`);
  floor = await serve(floorDir);

  // 3: first chart, interleaved.
  const sites = [['ECharts alone', floor.url], ['the page', page.url]];
  const times = sites.map(() => []);
  for (let i = 0; i < LOADS; i++) {
    for (let k = 0; k < sites.length; k++) {
      const j = i % 2 === 0 ? k : sites.length - 1 - k;
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      const p = await context.newPage();
      await markFirstChart(p);
      await p.goto(sites[j][1]);
      await p.waitForFunction(() => window.__firstChart !== undefined, null, { timeout: 15000 });
      times[j].push(await p.evaluate(() => window.__firstChart));
      await context.close();
    }
  }
  sites.forEach(([name], j) => console.log(`first chart, ${name.padEnd(13)} median ${median(times[j]).toFixed(0)} ms of ${LOADS} (${times[j].map((t) => t.toFixed(0)).join(' ')})`));

  // 4: ECharts' setOption alone, as after a slider move (the 250 ms animation let finish).
  const p = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await p.goto(floor.url);
  await p.waitForFunction(() => window.__chart);
  const calls = await p.evaluate(async (n) => {
    const ms = [];
    for (let i = 0; i < n; i++) {
      const option = JSON.parse(window.__options[(i + 1) % 2]);
      const t = performance.now();
      window.__chart.setOption(option);
      ms.push(performance.now() - t);
      await new Promise((r) => setTimeout(r, 300));
    }
    return ms;
  }, MOVES);
  console.log(`ECharts' setOption alone (${MOVES} moves between micro-batch 1 and 8): median ${median(calls).toFixed(2)} ms, p90 ${p90(calls).toFixed(2)} ms`);
  await p.close();
} finally {
  await browser.close();
  page.server.close();
  floor?.server.close();
  rmSync(floorDir, { recursive: true, force: true });
}
