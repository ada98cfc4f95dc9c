// The load phase (issue 28, item 4) as a user meets it in the table's phase switch: FSDP1
// (`parallel.fsdp_version` 1, link key `fv`) unshards each unit at load; on 64 ranks the
// Llama-3-8B root unit's two fp32 copies make the load the peak, on 8 it is one more phase to
// look at. Screenshots of the table at 1440 and 390 px, light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { start, openPlanner, ARTIFACTS, gib } from './browser.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env.close(); });

test('FSDP1 on 64 ranks: the load is the peak, and the step is one click away', async () => {
  for (const [colorScheme, width] of [['light', 1440], ['dark', 1440], ['light', 390], ['dark', 390]]) {
    const { page, problems } = await openPlanner(env.browser, env.url + '?v=1&m=llama-3-8b&b=1&s=1024&ck=full&dp=64&z=3&fv=1',
      { colorScheme, viewport: { width, height: 1000 } });
    assert.match(await page.locator('#phase-peak').innerText(), /loading the model/);
    assert.equal(await page.locator('#phase-load').count(), 0, 'the load is the peak, not an extra button');
    const peak = gib(await page.locator('#total').innerText());
    await page.locator('#phase-peak').scrollIntoViewIfNeeded();
    await page.locator('section.table-card').screenshot({ path: join(ARTIFACTS, `load-phase-peak-${width}-${colorScheme}.png`) });
    await page.click('#phase-other');
    const step = gib(await page.locator('#phase-total').innerText());
    assert.ok(step > 0 && step < peak, `step ${step} GiB, load ${peak} GiB`);
    assert.deepEqual(problems, []);
    await page.close();
  }
});

test('FSDP1 on 8 ranks: the load is a phase of its own with its term; FSDP2 moves one unit whole; a sharded checkpoint has none', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + '?v=1&m=llama-3-8b&dp=8&z=3&fv=1', { viewport: { width: 1440, height: 1000 } });
  assert.doesNotMatch(await page.locator('#phase-peak').innerText(), /loading/);
  const peak = gib(await page.locator('#total').innerText());
  await page.click('#phase-load');
  assert.equal(await page.locator('#phase-load').getAttribute('aria-pressed'), 'true');
  const load = gib(await page.locator('#phase-total').innerText());
  assert.ok(load > 8 && load < peak, `load ${load} GiB, peak ${peak} GiB`);
  assert.ok(await page.getByText('FSDP1 unit unsharded at load').count() > 0);
  await page.locator('section.table-card').screenshot({ path: join(ARTIFACTS, 'load-phase-shown-1440-light.png') });
  await page.goto(env.url + '?v=1&m=llama-3-8b&dp=8&z=3&fv=2');
  await page.waitForSelector('#phase-peak');
  await page.click('#phase-load');
  assert.ok(gib(await page.locator('#phase-total').innerText()) < load, 'one unit, not two');
  assert.ok(await page.getByText('FSDP2 unit unsharded at load').count() > 0);
  await page.goto(env.url + '?v=1&m=llama-3-8b&dp=8&z=3&fv=2&fl=sharded');
  await page.waitForSelector('#phase-peak');
  assert.equal(await page.locator('#phase-load').count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});
