// Interaction to next paint of the micro-batch slider (developer benchmark): real key
// presses (ArrowRight / ArrowLeft on the focused range input) through Chromium's input
// pipeline, and the Event Timing API's `duration` of each keydown: from the key press to the
// next frame painted after its handlers and what they triggered ran (the metric behind INP;
// w3c/event-timing). Prints the median and p90 of 20 presses, per build given.
//   node scripts/bench-inp.mjs dist [dist-new …]
import { join } from 'node:path';
import { serve } from '../tests/e2e/static-server.mjs';
import { launch, ROOT, waitForChart } from '../tests/e2e/browser.mjs';

const PRESSES = 20;
const dists = process.argv.slice(2);
const browser = await launch();
const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * q) - 1];
try {
  for (const dist of dists.length ? dists : ['dist']) {
    const { server, url } = await serve(join(ROOT, dist));
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(url);
    await waitForChart(page);
    await page.waitForTimeout(1500);
    await page.evaluate(() => {
      window.__inp = [];
      new PerformanceObserver((list) => list.getEntries().forEach((e) => e.name === 'keydown' && window.__inp.push(e.duration)))
        .observe({ type: 'event', durationThreshold: 16, buffered: false });
    });
    await page.focus('#micro-batch-range');
    for (let i = 0; i < PRESSES; i++) {
      await page.keyboard.press(i % 2 === 0 ? 'ArrowRight' : 'ArrowLeft');
      await page.waitForTimeout(400);
    }
    await page.waitForTimeout(500);
    const seen = await page.evaluate(() => window.__inp);
    // Presses under the 16 ms threshold are not reported: count them as 16 ms (an upper bound).
    const all = [...seen, ...Array(Math.max(0, PRESSES - seen.length)).fill(16)];
    console.log(`${dist}: keydown → next paint, median ${quantile(all, 0.5)} ms, p90 ${quantile(all, 0.9)} ms (${seen.length} of ${PRESSES} presses ≥ 16 ms: ${seen.join(', ')})`);
    await page.close();
    await new Promise((ok) => server.close(ok));
  }
} finally {
  await browser.close();
}
