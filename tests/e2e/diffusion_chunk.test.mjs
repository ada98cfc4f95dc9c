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
  assert.equal(await page.locator('.field-error').count(), 0, 'no message left under a control');
  assert.deepEqual(problems, []);
  await page.close();
});
