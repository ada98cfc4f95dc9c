// End-to-end test of the static first paint (issue 26 item 4): index.html carries the default
// planner's first screen as plain HTML (src/first_paint.rs, checked against the model by
// tests/first_paint.rs), so its largest text paints before the WASM and ECharts arrive. Here:
// what it shows is what the app's first frame shows, in the same places (no layout shift
// when the app replaces it), at 390 and 1440 px; an address with a query never shows it.
// Run with `node --test tests/e2e/first_paint.test.mjs` after `trunk build --release`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { markFirstChart, start } from './browser.mjs';

let env;
before(async () => {
  env = await start();
});
after(async () => {
  await env?.close();
});

// The boxes the first screen is made of, in the first paint (`#first-paint …`) and in the app.
const PARTS = {
  header: ['#first-paint .topbar', 'header.topbar'],
  tabs: ['#first-paint .tabs', '.tabs-nav .tabs'],
  verdict: ['#first-paint .verdict', '#verdict'],
  headline: ['#first-paint .headline', '#verdict .headline'],
  details: ['#first-paint .details', '#verdict .details'],
  warnings: ['#first-paint .warnings', '#panel-planner .warnings'],
  chart: ['#first-paint .chart', '#memory-chart'],
  fix: ['#first-paint .fix', '#cheapest-fix'],
};

/** Text and box of each part, by the selector of column `which` (0: first paint, 1: app). */
function measure(page, which) {
  return page.evaluate(
    ([parts, which]) =>
      Object.fromEntries(
        Object.entries(parts).map(([name, sels]) => {
          const el = document.querySelector(sels[which]);
          if (!el) return [name, null];
          const r = el.getBoundingClientRect();
          return [name, { text: el.innerText.trim(), box: [r.x, r.y, r.width, r.height].map(Math.round) }];
        }),
      ),
    [PARTS, which],
  );
}

for (const width of [390, 1440]) {
  test(`at ${width} px the first paint is the app's first frame: same text, same boxes`, async () => {
    const context = await env.browser.newContext({ viewport: { width, height: 900 } });
    // Without the WASM the app never starts: what stays on screen is the first paint alone.
    const still = await context.newPage();
    await still.route(/\.wasm$/, (route) => route.abort());
    await still.goto(env.url);
    await still.waitForSelector('#first-paint .headline');
    assert.ok(await still.locator('#first-paint .headline').isVisible());
    const copy = await measure(still, 0);
    await still.close();

    const page = await context.newPage();
    await markFirstChart(page);
    // Layout shifts (the Layout Instability API) from the first paint to two frames after the
    // app replaced it: the swap's own. (Later parts, the timeline's card below the chart, may
    // shift things after that; Lighthouse reports those.)
    await page.addInitScript(() => {
      window.__shifts = [];
      new PerformanceObserver((list) => window.__shifts.push(...list.getEntries().map((e) => e.value))).observe({ type: 'layout-shift', buffered: true });
      new MutationObserver((_, obs) => {
        if (!document.getElementById('verdict')) return;
        obs.disconnect();
        requestAnimationFrame(() => requestAnimationFrame(() => setTimeout(() => (window.__swapShift = window.__shifts.reduce((a, b) => a + b, 0)), 0)));
      }).observe(document, { childList: true, subtree: true });
    });
    await page.goto(env.url);
    await page.waitForFunction(() => window.__firstChart !== undefined);
    assert.equal(await page.locator('#first-paint').count(), 0, 'the app removed the first paint');
    const app = await measure(page, 1);
    for (const name of Object.keys(PARTS)) {
      assert.ok(copy[name] && app[name], `${name} in both`);
      // The cheapest fix is worked out in a chunk fetched after the first chart: the copy and the
      // app's first frame say "working it out…", unless the chunk has already answered (a fast
      // load), when the line holds the fix itself.
      if (name === 'fix' && copy.fix.text !== app.fix.text) {
        assert.match(copy.fix.text, /working it out/);
        assert.match(app.fix.text, /^Cheapest fix: \S/);
        continue;
      }
      assert.equal(copy[name].text, app[name].text, `${name}: same text`);
      assert.deepEqual(copy[name].box, app[name].box, `${name}: same box`);
    }
    const shift = await page.evaluate(() => window.__swapShift);
    assert.ok(shift < 0.01, `layout shift of the swap: ${shift}`);
    await context.close();
  });
}

test('an address with a query never shows the first paint', async () => {
  const context = await env.browser.newContext({ viewport: { width: 390, height: 900 } });
  const page = await context.newPage();
  await page.route(/\.wasm$/, (route) => route.abort());
  await page.goto(env.url + '?v=1&m=gpt2');
  await page.waitForSelector('#first-paint', { state: 'attached' });
  assert.equal(await page.locator('#first-paint').isVisible(), false);
  await context.close();
});
