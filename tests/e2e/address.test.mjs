// End-to-end tests of the address bar's one writer (src/ui/address_bar.rs): every part of the
// page's state in one query, each written without touching the others, in one key order; a
// scenario edit is the only thing that makes a history entry; back/forward hand the scenario
// and the Compare columns back; another site's parameters survive an edit.
// Run after `trunk build --release` (HEADROOM_DIST selects the build).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { openPlanner, setValue, start } from './browser.mjs';

let env;
before(async () => {
  env = await start();
});
after(async () => {
  await env?.close();
});

/** The query's keys in order, each once. */
const keys = (page) => page.evaluate(() => [...new Set([...new URLSearchParams(location.search).keys()])]);
const param = (page, key) => page.evaluate((key) => new URLSearchParams(location.search).get(key), key);

test('every part of the page in one query: each written alone, one key order, one history entry per scenario burst', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + '?v=1&m=gpt2&utm_source=newsletter', { viewport: { width: 1400, height: 1000 } });
  // Another site's tag is reported as today, and kept.
  assert.match(await page.locator('#url-notice').innerText(), /utm_source.*unknown parameter ignored/s);
  const length = await page.evaluate(() => history.length);
  await page.locator('#tab-compare').click();
  await page.locator('#cmp-b-dp').waitFor();
  await page.waitForFunction(() => new URLSearchParams(location.search).getAll('cmp').length === 2);
  await setValue(page, '#cmp-b-dp', 4);
  await page.waitForFunction(() => /dp%3D4/.test(location.search));
  await page.locator('#tab-strategy').click();
  await page.locator('#ladder-gpus').waitFor();
  await setValue(page, '#ladder-gpus', 16);
  await page.waitForFunction(() => /[?&]gpus=16(&|$)/.test(location.search));
  assert.equal(await page.evaluate(() => history.length), length, 'tabs, columns and the budget replace the entry');
  await page.locator('#tab-planner').click();
  await page.waitForFunction(() => !/[?&]view=/.test(location.search));
  await setValue(page, '#micro-batch', 4);
  await page.waitForFunction(() => /[?&]b=4(&|$)/.test(location.search));
  assert.equal(await page.evaluate(() => history.length), length + 1, 'a scenario edit pushes one entry');
  assert.deepEqual(await keys(page), ['v', 'm', 'b', 'gpus', 'cmp', 'utm_source']);
  assert.equal(await param(page, 'utm_source'), 'newsletter');
  assert.equal(await param(page, 'gpus'), '16');
  await page.locator('#tab-compare').click();
  await page.waitForFunction(() => /[?&]view=compare(&|$)/.test(location.search));
  assert.deepEqual(await keys(page), ['v', 'm', 'b', 'view', 'gpus', 'cmp', 'utm_source']);

  // Back: the scenario and the columns of the first entry; the tab and the budget stay, and the
  // entry now says so.
  await page.goBack();
  await page.waitForFunction(() => document.getElementById('micro-batch').value === '1');
  await page.waitForFunction(() => document.getElementById('cmp-b-dp').value === '4');
  await page.waitForFunction(() => /[?&]view=compare(&|$)/.test(location.search));
  assert.equal(await param(page, 'b'), null);
  assert.equal(await param(page, 'gpus'), '16');
  assert.equal(await param(page, 'utm_source'), 'newsletter');
  await page.goForward();
  await page.waitForFunction(() => document.getElementById('micro-batch').value === '4');
  assert.equal(await param(page, 'b'), '4');
  assert.equal(await page.locator('#panic-panel').count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});
