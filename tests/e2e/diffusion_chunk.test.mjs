// End-to-end test of issue 25 item 6: the diffusion pipelines' parts (the denoisers' and
// VAEs' walks, src/model/diffusion/parts.rs) are a WASM chunk of their own, `diffusion`,
// which the first load never fetches. Choosing a pipeline (or opening a link to one, see
// diffusion.test.mjs) fetches it and the plan follows, with no error left on the page.
// Run with `node --test tests/e2e/diffusion_chunk.test.mjs` after `trunk build --release`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chooseModel, openPlanner, start } from './browser.mjs';

let env;
before(async () => {
  env = await start();
});
after(async () => {
  await env?.close();
});

const isChunk = (url) => /split_diffusion-[0-9a-f]+\.wasm$/.test(url);

test('the first load does not fetch the diffusion chunk; choosing SDXL does, and plans it', async () => {
  const { page, problems, requests } = await openPlanner(env.browser, env.url, { viewport: { width: 1440, height: 1000 } });
  await page.waitForTimeout(1500);
  assert.deepEqual(requests.filter(isChunk), [], 'no diffusion chunk on the first load');
  const before = await page.locator('#verdict .headline').innerText();
  await chooseModel(page, 'sdxl');
  await page.waitForFunction(() => location.search.includes('stable-diffusion-xl'));
  // The plan is SDXL's once the chunk has arrived: not the last valid (Llama) plan any more.
  await page.waitForFunction(() => !document.querySelector('#verdict').classList.contains('outdated'), null, { timeout: 15000 });
  assert.equal(requests.filter(isChunk).length, 1, 'the diffusion chunk, once');
  assert.notEqual(await page.locator('#verdict .headline').innerText(), before);
  assert.match(await page.locator('#verdict .details').innerText(), /B parameters/);
  assert.deepEqual((await page.locator('.field-error').allInnerTexts()).filter((t) => t.trim()), [], 'no message left under a control');
  assert.deepEqual(problems, []);
  await page.close();
});

test('while the chunk is on its way the last plan stays, marked, with a message; then the pipeline is planned', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url, { viewport: { width: 1440, height: 1000 } });
  let release;
  const held = new Promise((ok) => (release = ok));
  await page.route(/split_diffusion-[0-9a-f]+\.wasm$/, async (route) => {
    await held;
    await route.continue();
  });
  const before = await page.locator('#verdict .headline').innerText();
  await chooseModel(page, 'sdxl');
  await page.waitForFunction(() => document.querySelector('#verdict').classList.contains('outdated'));
  assert.equal(await page.locator('#verdict .headline').innerText(), before, 'the last valid plan meanwhile');
  assert.match((await page.locator('.field-error').allInnerTexts()).join(' '), /diffusion pipeline code is loading/);
  release();
  await page.waitForFunction(() => !document.querySelector('#verdict').classList.contains('outdated'), null, { timeout: 15000 });
  assert.notEqual(await page.locator('#verdict .headline').innerText(), before);
  assert.deepEqual((await page.locator('.field-error').allInnerTexts()).filter((t) => t.trim()), []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('offline, the message says the chunk could not be loaded; the page keeps working', async () => {
  const { page } = await openPlanner(env.browser, env.url, { viewport: { width: 1440, height: 1000 } });
  await page.route(/split_diffusion-[0-9a-f]+\.wasm$/, (route) => route.abort());
  await chooseModel(page, 'sdxl');
  await page.waitForFunction(() => [...document.querySelectorAll('.field-error')].some((e) => /could not be loaded/.test(e.textContent)), null, { timeout: 15000 });
  assert.match(await page.locator('#verdict').getAttribute('class'), /outdated/);
  // Another model plans at once.
  await chooseModel(page, 'qwen3-8b');
  await page.waitForFunction(() => !document.querySelector('#verdict').classList.contains('outdated'), null, { timeout: 15000 });
  await page.close();
});
