// Time to the first chart for hostile links, beside an ordinary link measured in the same run,
// interleaved (issue 26: each hostile case bounded, under 1 s on this machine):
//   trunk build --release && node scripts/bench-hostile.mjs [ROUNDS]
// Prints the median first chart (ms since navigation, as `markFirstChart` records it) and the
// WASM memory after it, per case, and each case's ratio to the ordinary link.
import { markFirstChart, start, waitForChart } from '../tests/e2e/browser.mjs';

const rounds = Number(process.argv[2] ?? 5);
const CASES = [
  ['ordinary link', '?v=1&m=gpt2&b=2'],
  ['1 MB of `&z`', '?v=1' + '&z'.repeat(500_000)],
  ['200,000 × `zz=1`', '?v=1&m=gpt2&b=2' + '&zz=1'.repeat(200_000)],
  ['10,000 bad values', '?v=1&m=gpt2' + '&b=x'.repeat(10_000)],
];

const env = await start();
const times = Object.fromEntries(CASES.map(([name]) => [name, []]));
const memory = {};
try {
  for (let r = 0; r < rounds; r++) {
    for (const [name, query] of CASES) {
      const page = await env.browser.newPage({ viewport: { width: 1280, height: 900 } });
      await markFirstChart(page);
      await page.addInitScript(() => addEventListener('TrunkApplicationStarted', (e) => { window.__wasm = e.detail.wasm; }));
      await page.goto(env.url + query);
      await waitForChart(page);
      await page.waitForFunction(() => window.__firstChart !== undefined);
      times[name].push(await page.evaluate(() => window.__firstChart));
      memory[name] = await page.evaluate(() => window.__wasm.memory.buffer.byteLength / 2 ** 20);
      await page.close();
    }
  }
} finally {
  await env.close();
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(times['ordinary link']);
for (const [name] of CASES) {
  const m = median(times[name]);
  console.log(`${name}: first chart ${m.toFixed(0)} ms (median of ${rounds}), ${(m / base).toFixed(2)}× the ordinary link, WASM memory ${memory[name].toFixed(0)} MiB`);
}
