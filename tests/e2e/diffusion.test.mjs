// End-to-end tests of issue 24 on the Planner: diffusion pipelines found by name, planned in
// their own terms (width, height, frames, cached latents and embeddings, generation offload),
// with the spill verdict on a consumer card and the diffusion ladder's fix. Screenshots at
// 1440 and 390 px, light and dark, in tests/e2e/artifacts/: SDXL LoRA at 1024 px on a 12 GB
// card, Flux.1-dev QLoRA on a 24 GB card. Run with `node --test tests/e2e/diffusion.test.mjs`
// after `trunk build --release`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, ROOT, chooseModel, openPlanner, shots, start } from './browser.mjs';

const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');
// diffusers' LoRA scripts: rank 4 on to_q, to_k, to_v, to_out.0, adapters in fp32.
const LORA = b64({ rank: 4, targets: ['q', 'k', 'v', 'o'] });
const QLORA = b64({ rank: 4, targets: ['q', 'k', 'v', 'o'], base: 'nf4' });
// train_dreambooth_lora_sdxl.py at 1024 px, fp16 mixed precision, batch 1, the VAE encoding every step.
const SDXL = `?v=1&m=stabilityai/stable-diffusion-xl-base-1.0&lora=${LORA}&res=1024x1024&p=fp16-mixed&b=1&d=rtx-3060-12gb`;
// The Flux QLoRA blog's run: 512 × 768, 8-bit AdamW, checkpointing, cached latents, 77 T5 tokens.
const FLUX = `?v=1&m=black-forest-labs/FLUX.1-dev&lora=${QLORA}&res=512x768&p=bf16-mixed&o=adamw-8bit&ck=full&b=1&ga=4&cl=true&tt=77&d=rtx-4090-24gb`;

let env;
before(async () => {
  env = await start();
  mkdirSync(ARTIFACTS, { recursive: true });
});
after(async () => {
  await env?.close();
});

test('searching "sdxl" and "flux" finds the pipelines', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + '?v=1', { viewport: { width: 1440, height: 1000 } });
  await chooseModel(page, 'sdxl');
  await page.waitForSelector('#diffusion-width');
  assert.ok(await page.locator('#diffusion-width').isVisible(), 'width control for a pipeline');
  assert.ok(!(await page.locator('#seq-len').isVisible()), 'no sequence length for a pipeline');
  assert.equal(await page.locator('#diffusion-width').inputValue(), '1024');
  await chooseModel(page, 'flux');
  await page.waitForFunction(() => location.search.includes('FLUX.1'));
  assert.deepEqual(problems, []);
  await page.close();
});

test('SDXL LoRA at 1024 px on a 12 GB card: the verdict, its parts and the fix', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + SDXL, { viewport: { width: 1440, height: 1100 } });
  await page.waitForSelector('#memory-chart canvas');
  // A GeForce card: the Windows sysmem fallback spills what does not fit into shared memory.
  assert.match(await page.locator('#verdict').getAttribute('class'), /spills/);
  assert.match(await page.locator('#verdict').innerText(), /into shared GPU memory/);
  const body = await page.locator('body').innerText();
  assert.match(body, /UNet2DConditionModel/);
  // Latents encoded every step: the cheapest fix is a real one, on this one GPU.
  assert.match(body, /Cheapest fix: /);
  await shots(page, 'diffusion-sdxl-lora-1024-12gb');
  // Caching the latents takes the VAE off the GPU: the link carries it.
  await page.locator('#cache-latents').check();
  await page.waitForFunction(() => location.search.includes('cl=true'));
  assert.deepEqual(problems, []);
  await page.close();
});

test('Flux.1-dev QLoRA on a 24 GB card fits as the blog ran it', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + FLUX, { viewport: { width: 1440, height: 1100 } });
  await page.waitForSelector('#memory-chart canvas');
  assert.match(await page.locator('#verdict').getAttribute('class'), /fits/);
  assert.equal(await page.locator('#diffusion-width').inputValue(), '512');
  assert.equal(await page.locator('#diffusion-height').inputValue(), '768');
  await shots(page, 'diffusion-flux-qlora-24gb');
  assert.deepEqual(problems, []);
  await page.close();
});

test('generation: offload and tiling controls replace the training ones', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + '?v=1&m=black-forest-labs/FLUX.1-dev&mode=inference&p=bf16&d=rtx-4090-24gb', { viewport: { width: 1440, height: 1000 } });
  await page.waitForSelector('#generation-offload');
  assert.ok(!(await page.locator('#cache-latents').isVisible()));
  await page.locator('#generation-offload').selectOption('model');
  await page.waitForFunction(() => location.search.includes('goff=model'));
  assert.deepEqual(problems, []);
  await page.close();
});

test('axe-core: no violation on a pipeline plan, light and dark', async () => {
  const AXE = readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  for (const colorScheme of ['light', 'dark']) {
    const { page, problems } = await openPlanner(env.browser, env.url + SDXL, { colorScheme, viewport: { width: 1440, height: 900 } });
    await page.waitForSelector('#diffusion-width');
    await page.evaluate(AXE);
    const violations = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`));
    assert.deepEqual(violations, []);
    assert.deepEqual(problems, []);
    await page.close();
  }
});
