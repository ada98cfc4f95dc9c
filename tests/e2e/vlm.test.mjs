// End-to-end tests of issue 23 on the Planner: a Qwen2.5-VL-7B LoRA plan at 1,024 × 1,024 px
// images (the image-size control beside the text's sequence length, its value kept in the
// link, the vision tower and projector in the breakdown) and a Qwen3-Next-80B-A3B plan (its
// recurrent and conv state beside the KV cache when serving). The configs are the Hub's
// config.json, passed as a pasted config (`hf=`). Screenshots at 1440 and 390 px, light and
// dark, in tests/e2e/artifacts/. Run with `node --test tests/e2e/vlm.test.mjs` after
// `trunk build --release`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, ROOT, openPlanner, shots, start } from './browser.mjs';

const config = (name) => Buffer.from(JSON.stringify(JSON.parse(readFileSync(join(ROOT, 'tests', 'e2e', name), 'utf8')))).toString('base64url');
const LORA = Buffer.from(JSON.stringify({ rank: 16 })).toString('base64url');
const QWEN_VL = `?v=1&hf=${config('qwen2_5_vl_7b.json')}&lora=${LORA}&s=1024&p=bf16-mixed&res=1024x1024`;
const QWEN_NEXT = `?v=1&hf=${config('qwen3_next_80b_a3b.json')}&mode=inference&s=32768&p=bf16&tp=4&d=h100-sxm-80gb`;

let env;
before(async () => {
  env = await start();
  mkdirSync(ARTIFACTS, { recursive: true });
});
after(async () => {
  await env?.close();
});

test('Qwen2.5-VL LoRA at 1024 px: the image size sits beside the sequence length and stays in the link', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + QWEN_VL, { viewport: { width: 1440, height: 1100 } });
  await page.waitForSelector('#memory-chart canvas');
  assert.ok(await page.locator('#vlm-image-size').isVisible(), 'image-size control shown for a VLM');
  assert.ok(await page.locator('#seq-len').isVisible(), 'sequence length still shown');
  assert.equal(await page.locator('#vlm-image-size').inputValue(), '1024');
  const body = await page.locator('body').innerText();
  assert.match(body, /1024 × 1024 px/);
  assert.match(body, /vision-language model/);
  await shots(page, 'vlm-qwen2_5_vl-lora-1024');
  // A new size on the control reaches the link.
  await page.locator('#vlm-image-size').fill('512');
  await page.locator('#vlm-image-size').dispatchEvent('change');
  await page.waitForFunction(() => location.search.includes('res=512x512'));
  assert.deepEqual(problems, []);
  await page.close();
});

test('axe-core: no violation on the VLM plan with its image controls, light and dark', async () => {
  const AXE = readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
  for (const colorScheme of ['light', 'dark']) {
    const { page, problems } = await openPlanner(env.browser, env.url + QWEN_VL, { colorScheme, viewport: { width: 1440, height: 900 } });
    await page.waitForSelector('#vlm-image-size');
    await page.evaluate(AXE);
    const violations = await page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`));
    assert.deepEqual(violations, [], colorScheme);
    assert.deepEqual(problems, []);
    await page.close();
  }
});

test('a text model has no image-size control', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + '?v=1&m=meta-llama%2FLlama-3.1-8B', { viewport: { width: 1440, height: 1100 } });
  await page.waitForSelector('#memory-chart canvas');
  assert.equal(await page.locator('#vlm-image-size').isVisible(), false);
  assert.deepEqual(problems, []);
  await page.close();
});

test('Qwen3-Next serving: the recurrent and conv state is its own term beside the KV cache', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + QWEN_NEXT, { viewport: { width: 1440, height: 1100 } });
  await page.waitForSelector('#memory-chart canvas');
  const body = await page.locator('body').innerText();
  assert.match(body, /recurrent and conv state/);
  assert.match(body, /KV cache/);
  await shots(page, 'hybrid-qwen3-next-80b');
  assert.deepEqual(problems, []);
  await page.close();
});
