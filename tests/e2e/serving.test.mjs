// End-to-end tests of serving engines (issue 21): the engine and its flags on the Planner, the
// engine's startup report beside the chart, the verdict in the engine's terms, and the
// engine's settings kept in the link. Run with `node --test tests/e2e/serving.test.mjs` after
// `trunk build --release`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, openPlanner, start } from './browser.mjs';

let env;
before(async () => {
  env = await start();
  mkdirSync(ARTIFACTS, { recursive: true });
});
after(async () => {
  await env?.close();
});

// The case: Llama-3.1-70B in FP8 on 2 × H100, 32 sequences of 8k tokens, under vLLM.
const SEVENTY_B = '?v=1&m=meta-llama%2FLlama-3.1-70B&b=32&s=8192&mode=inference&tp=2&wq=fp8&eng=vllm&d=h100-sxm-80gb';
// Llama-3.1-8B on one L4 under vLLM.
const L4 = '?v=1&m=meta-llama%2FLlama-3.1-8B&b=8&s=8192&mode=inference&eng=vllm&d=l4-24gb';

test('vLLM starts for 70B FP8 on 2 × H100 and says how many requests fit at once', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + SEVENTY_B, { viewport: { width: 1440, height: 1100 } });
  await page.waitForSelector('.serving-panel');
  const verdict = await page.locator('#verdict').innerText();
  assert.match(verdict, /vLLM starts: its KV cache holds [\d,]+ tokens/);
  assert.match(verdict, /of the 32 sequences asked run together/);
  const panel = await page.locator('.serving-panel').textContent();
  assert.match(panel, /GPU KV cache size: [\d,]+ tokens/);
  assert.match(panel, /Requests at once/);
  assert.equal(await page.locator('#engine').inputValue(), 'vllm');
  for (const [scheme, width] of [['light', 1440], ['dark', 1440], ['light', 390], ['dark', 390]]) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width, height: 1100 });
    await page.locator('.serving-panel').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(ARTIFACTS, `serving-70b-${width}-${scheme}.png`) });
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test('choosing an engine and a flag on the page keeps them in the link', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + L4, { viewport: { width: 1440, height: 1100 } });
  await page.waitForSelector('.serving-panel');
  await page.locator('#engine').selectOption('sglang');
  await page.waitForFunction(() => /SGLang at startup/.test(document.querySelector('.serving-panel h2')?.textContent ?? ''));
  await page.locator('#engine-max-model-len').fill('4096');
  await page.locator('#engine-max-model-len').dispatchEvent('change');
  await page.waitForFunction(() => location.search.includes('eng=sglang') && location.search.includes('mml=4096'));
  await page.screenshot({ path: join(ARTIFACTS, 'serving-l4-sglang-1440-light.png') });
  // Back to transformers: the engine panel goes, the whole-batch plan returns.
  await page.locator('#engine').selectOption('transformers');
  await page.waitForFunction(() => !document.querySelector('.serving-panel'));
  assert.deepEqual(problems, []);
  await page.close();
});
