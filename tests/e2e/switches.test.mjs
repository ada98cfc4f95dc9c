// The switches of issue 28 as a user meets them on the Planner: Adam's implementation (foreach,
// for-loop, fused) and what the framework profiles choose; the LoRA adapters' dtype (PEFT's
// fp32 adapters against torchtune's and LitGPT's 16-bit ones); DDP's gradient_as_bucket_view.
// torch.compile's region (the loss inside it or not). Each changes the plan, travels in the
// link, and disappears where it does not apply.
// Screenshots of the training, parallel and LoRA controls at 1440 and 390 px, light and dark.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { start, openPlanner, setValue, componentSize, ARTIFACTS, gib } from './browser.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env.close(); });

const total = async (page) => gib(await page.locator('#total').innerText());

test('Adam implementation: fused drops the foreach list; profiles choose theirs', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  // The default scenario (Llama-3-8B, bf16-mixed AdamW, plain PyTorch) peaks at the optimizer
  // step, with foreach's fp32 list of every parameter (29.9 GiB).
  assert.equal(await page.locator('#optimizer-impl').inputValue(), 'foreach');
  const foreach = await total(page);
  await page.selectOption('#optimizer-impl', 'fused');
  const fused = await total(page);
  assert.ok(foreach - fused > 9 && foreach - fused < 30, `${foreach} → ${fused}`);
  await page.waitForFunction(() => location.search.includes('oi=fused'));
  await page.selectOption('#optimizer-impl', 'for-loop');
  // for-loop's two copies of the largest tensor (the 2 GiB embedding, in fp32) leave the
  // optimizer step below the forward/backward phase, which is then the peak as with fused.
  const forLoop = await total(page);
  assert.ok(forLoop < foreach && Math.abs(forLoop - fused) < 1, `for-loop ${forLoop}, fused ${fused}`);
  // The profiles: torchtune's recipes and transformers 5's Trainer fuse, LitGPT's finetune keeps foreach.
  await page.selectOption('#framework', 'torchtune');
  assert.equal(await page.locator('#optimizer-impl').inputValue(), 'fused');
  await page.selectOption('#framework', 'litgpt');
  assert.equal(await page.locator('#optimizer-impl').inputValue(), 'foreach');
  await page.selectOption('#framework', 'transformers');
  assert.equal(await page.locator('#optimizer-impl').inputValue(), 'fused');
  // Only torch's Adam and AdamW have the three implementations.
  await page.selectOption('#optimizer', 'sgd');
  assert.equal(await page.locator('#optimizer-impl').isVisible(), false);
  await page.selectOption('#optimizer', 'adam');
  assert.equal(await page.locator('#optimizer-impl').isVisible(), true);
  assert.deepEqual(problems, []);
  await page.close();
});

test('LoRA adapters: PEFT keeps them fp32 on a pure bf16 base, torchtune and LitGPT in bf16', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  await page.selectOption('#precision', 'bf16');
  await page.selectOption('#fine-tuning', 'lora');
  await setValue(page, '#lora-rank', 256);
  assert.equal(await page.locator('#lora-fp32-adapters').isChecked(), true);
  const peftStates = gib(await componentSize(page, 'optimizer_states'));
  await page.locator('#lora-fp32-adapters').uncheck();
  const bf16States = gib(await componentSize(page, 'optimizer_states'));
  // AdamW's two states per adapter element: 8 B in fp32, 4 B in bf16.
  assert.ok(Math.abs(peftStates / bf16States - 2) < 0.01, `${peftStates} vs ${bf16States}`);
  await page.waitForFunction(() => location.search.includes('lora='));
  await page.locator('#lora-fp32-adapters').check();
  await page.selectOption('#framework', 'litgpt');
  assert.equal(await page.locator('#lora-fp32-adapters').isChecked(), false);
  await page.selectOption('#framework', 'transformers');
  assert.equal(await page.locator('#lora-fp32-adapters').isChecked(), true);
  assert.deepEqual(problems, []);
  await page.close();
});

test('DDP gradient_as_bucket_view: one allocation for gradients and buckets', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  assert.equal(await page.locator('#gradient-as-bucket-view').isVisible(), false);
  await setValue(page, '#dp', 8);
  const box = page.locator('#gradient-as-bucket-view');
  assert.equal(await box.isVisible(), true);
  assert.equal(await box.isChecked(), false);
  const buckets = await total(page);
  await box.check();
  const views = await total(page);
  // Llama-3-8B's gradients in fp32: 29.9 GiB fewer at the optimizer step, the peak with DDP's
  // buckets (188 GiB); with bucket views the forward/backward phase (177 GiB) is the peak.
  assert.ok(buckets - views > 10 && buckets - views < 29.9, `${buckets} → ${views}`);
  await page.waitForFunction(() => location.search.includes('gbv=true'));
  // ZeRO shards instead: the setting no longer applies.
  await page.selectOption('#zero', '1');
  assert.equal(await box.isVisible(), false);
  assert.deepEqual(problems, []);
  await page.close();
});

test('torch.compile: the loss inside the compiled region or eager', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  await page.selectOption('#optimizer-impl', 'fused'); // the forward/backward phase is then the peak
  assert.equal(await page.locator('#compile-loss').isVisible(), false);
  await page.locator('#torch-compile').check();
  assert.equal(await page.locator('#compile-loss').isChecked(), true);
  const compiled = await total(page);
  await page.locator('#compile-loss').uncheck();
  // The eager loss saves the fp32 log-softmax (4 B per logit, not the compiled loss's 2 B of
  // bf16 logits) and starts backward with two fp32 logit gradients (8 B, not 2 B): 8 B × 4096
  // × 128,256 = 3.9 GiB more at the peak.
  const eagerLoss = await total(page);
  assert.ok(eagerLoss - compiled > 3.5 && eagerLoss - compiled < 4.5, `${compiled} → ${eagerLoss}`);
  await page.waitForFunction(() => location.search.includes('cmpl_loss=false'));
  // The whole model compiled (the loss with it): backward starts with two bf16 logits-sized
  // buffers, the logits' gradient and the zero gradient of the returned logits (2 × 2 B × 4096
  // × 128,256 = 1.96 GiB), where the compiled loss alone has one.
  await page.locator('#compile-model').check();
  await page.waitForFunction(() => location.search.includes('cmpl_model=true'));
  const whole = await total(page);
  assert.ok(whole - compiled > 0.8 && whole - compiled < 1.2, `${compiled} → ${whole}`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('screenshots: the training controls with a profile, 1440 and 390 px, light and dark', async () => {
  for (const [width, height] of [[1440, 900], [390, 844]]) {
    for (const colorScheme of ['light', 'dark']) {
      const { page, problems } = await openPlanner(env.browser, env.url, { colorScheme, viewport: { width, height } });
      await page.selectOption('#framework', 'torchtune');
      const group = page.locator('#optimizer-impl').locator('xpath=ancestor::fieldset[1]');
      await group.scrollIntoViewIfNeeded();
      await group.screenshot({ path: join(ARTIFACTS, `switches-training-${width}-${colorScheme}.png`) });
      await setValue(page, '#dp', 4);
      const parallel = page.locator('#gradient-as-bucket-view').locator('xpath=ancestor::fieldset[1]');
      await parallel.scrollIntoViewIfNeeded();
      await parallel.screenshot({ path: join(ARTIFACTS, `switches-parallel-${width}-${colorScheme}.png`) });
      await page.selectOption('#fine-tuning', 'lora');
      const task = page.locator('#lora-fp32-adapters').locator('xpath=ancestor::fieldset[1]');
      await task.scrollIntoViewIfNeeded();
      await task.screenshot({ path: join(ARTIFACTS, `switches-lora-${width}-${colorScheme}.png`) });
      assert.deepEqual(problems, []);
      await page.close();
    }
  }
});
