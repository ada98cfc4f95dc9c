#!/usr/bin/env node
// Search benchmark (not a test): candidate evaluations per second of the automatic planner
// in WASM, in headless Chromium, on the release build.   target ≥ 100,000 estimates/s
//   1. raw: `window.headroomBench(gpus, repeats)` runs `model::search::search` on the
//      default scenario (Llama-3-8B) back to back, no yielding; median of 5 runs of ≥ 0.5 s.
//   2. page: the "Find layouts" button on the Strategy tab (chunks of 50 layouts with a
//      zero-delay timer between them), as its summary line reports it; median of 5 clicks.
// Usage: trunk build --release && node scripts/bench-search.mjs [--gpus 8] [--json]
// (HEADROOM_DIST=dist-strategy selects another build.)
import { openPlanner, start } from '../tests/e2e/browser.mjs';

const args = process.argv.slice(2);
const json = args.includes('--json');
const gpusAt = args.indexOf('--gpus');
const gpus = gpusAt >= 0 ? Number(args[gpusAt + 1]) : 8;
const TARGET = 100_000;
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

const env = await start();
try {
  const { page } = await openPlanner(env.browser, env.url);
  await page.waitForFunction(() => typeof window.headroomBench === 'function');
  // Warm up, then size the repeats so each timed run lasts at least half a second.
  const once = await page.evaluate((g) => window.headroomBench(g, 1), gpus);
  const repeats = Math.max(1, Math.ceil(500 / Math.max(once.millis, 1)));
  const raw = [];
  let perRun = once;
  for (let i = 0; i < 5; i++) {
    const r = await page.evaluate(([g, n]) => window.headroomBench(g, n), [gpus, repeats]);
    raw.push(r.evaluations / (r.millis / 1000));
    perRun = { layouts: r.layouts / repeats, evaluations: r.evaluations / repeats, millis: r.millis / repeats };
  }

  await page.locator('#tab-strategy').click();
  await page.locator('#search-gpus').fill(String(gpus));
  await page.locator('#search-gpus').dispatchEvent('change');
  const ui = [];
  for (let i = 0; i < 5; i++) {
    const before = await page.locator('#search-summary').getAttribute('data-run');
    await page.locator('#find-layouts').click();
    await page.waitForFunction((b) => document.getElementById('search-summary').dataset.run !== b, before, { timeout: 60000 });
    const text = await page.locator('#search-summary').innerText();
    const m = text.match(/(\d+) estimates in (\d+) ms/);
    if (m) ui.push({ evaluations: Number(m[1]), millis: Number(m[2]) });
  }
  const uiRate = median(ui.map((u) => u.evaluations / (u.millis / 1000)));
  const result = {
    gpus,
    layouts: perRun.layouts,
    evaluations_per_search: perRun.evaluations,
    search_ms: Number(perRun.millis.toFixed(2)),
    raw_evaluations_per_second: Math.round(median(raw)),
    page_search_ms: median(ui.map((u) => u.millis)),
    page_evaluations_per_second: Math.round(uiRate),
    target_evaluations_per_second: TARGET,
    meets_target: median(raw) >= TARGET,
  };
  if (json) {
    console.log(JSON.stringify(result));
  } else {
    console.log(`search on ${gpus} GPUs (Llama-3-8B): ${result.layouts} layouts, ${result.evaluations_per_search} estimates, ${result.search_ms} ms`);
    console.log(`raw WASM throughput      ${result.raw_evaluations_per_second.toLocaleString('en')} estimates/s (target ≥ ${TARGET.toLocaleString('en')}) ${result.meets_target ? 'OK' : 'BELOW TARGET'}`);
    console.log(`"Find layouts" (chunked) ${result.page_evaluations_per_second.toLocaleString('en')} estimates/s, ${result.page_search_ms} ms per search`);
  }
  await page.close();
} finally {
  await env.close();
}
