// End-to-end tests of the Compare view's own state: columns that survive tab switches, the
// columns' settings, the columns in the URL (reload, a copied link, back/forward).
// Run after `trunk build --release` (HEADROOM_DIST selects the build).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { ARTIFACTS, openPlanner, setValue, start } from './browser.mjs';

let env;
before(async () => {
  env = await start();
  mkdirSync(ARTIFACTS, { recursive: true });
});
after(async () => {
  await env?.close();
});

/** Waits until ECharts has drawn the compare chart. */
async function waitForCompare(page) {
  await page.waitForFunction(() => {
    const el = document.getElementById('compare-chart');
    return el && window.echarts && window.echarts.getInstanceByDom(el) && el.querySelector('canvas');
  }, null, { timeout: 15000 });
}

/** Opens the Compare tab of a fresh page at `query`. */
async function openCompare(query = '') {
  const opened = await openPlanner(env.browser, env.url + query, { viewport: { width: 1400, height: 1000 } });
  await opened.page.locator('#tab-compare').click();
  await waitForCompare(opened.page);
  return opened;
}

test('compare columns keep their settings across tab switches', async () => {
  const { page, problems } = await openCompare();
  await setValue(page, '#cmp-b-dp', 8);
  await page.waitForFunction(() => document.getElementById('cmp-b-dp').value === '8');
  await page.locator('#tab-planner').click();
  await page.locator('#tab-strategy').click();
  await page.locator('#tab-compare').click();
  await waitForCompare(page);
  assert.equal(await page.locator('.compare-column').count(), 2);
  assert.equal(await page.locator('#cmp-b-dp').inputValue(), '8');
  assert.equal(await page.locator('#panic-panel').count(), 0, 'the panic panel appeared');
  assert.deepEqual(problems, []);
  await page.close();
});
