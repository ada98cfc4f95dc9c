// End-to-end tests of the field table's error placement (src/fields.rs, `fields::anchor`):
// a validation error shows once, under the control the table names, and not again above the
// chart or under a parent control. Run after `trunk build --release`.
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

const lora = (json) => Buffer.from(JSON.stringify(json)).toString('base64url');

/** The messages on the page that name `text`, and the control each one sits in. */
async function placements(page, text) {
  return page.locator('.field-error').evaluateAll(
    (els, t) =>
      els
        .filter((e) => e.textContent.includes(t))
        .map((e) => ({ field: e.dataset.field, control: e.closest('.control')?.querySelector('label')?.htmlFor ?? null })),
    text,
  );
}

test('a LoRA rank error shows once, under the rank, not under the fine-tuning menu or above the chart', async () => {
  for (const [colorScheme, width] of [['light', 1440], ['dark', 390]]) {
    const { page, problems } = await openPlanner(env.browser, `${env.url}?v=1&lora=${lora({ rank: 0 })}`, { colorScheme, viewport: { width, height: 900 } });
    await page.locator('.field-error[data-field="training.lora.rank"]').first().waitFor();
    assert.deepEqual(await placements(page, 'got 0'), [{ field: 'training.lora.rank', control: 'lora-rank' }]);
    await page.locator('#lora-rank').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(ARTIFACTS, `fields-lora-rank-${width}-${colorScheme}.png`) });
    assert.deepEqual(problems, []);
    await page.close();
  }
});

test('an error on system RAM shows once, under its box', async () => {
  const { page, problems } = await openPlanner(env.browser, `${env.url}?v=1&hm=1`);
  await page.locator('.field-error[data-field="runtime.host_memory_bytes"]').first().waitFor();
  assert.deepEqual(await placements(page, 'system RAM must be between'), [{ field: 'runtime.host_memory_bytes', control: 'host-memory' }]);
  assert.deepEqual(problems, []);
  await page.close();
});

test('an error on a field without a control is listed above the chart, once', async () => {
  const { page, problems } = await openPlanner(env.browser, `${env.url}?v=1&vs=0`);
  await page.locator('.field-error[data-field="parallel.virtual_stages"]').first().waitFor();
  assert.deepEqual(await placements(page, 'must be between 1 and 1024'), [{ field: 'parallel.virtual_stages', control: null }]);
  assert.deepEqual(problems, []);
  await page.close();
});
