// End-to-end tests of shared memory with a ceiling (issue 22): a GeForce card's verdict with
// every platform side by side, why the spill costs what it costs, and the system RAM control
// moving the ceiling. Run with `node --test tests/e2e/spill.test.mjs` after `trunk build --release`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, openPlanner, setValue, start } from './browser.mjs';

let env;
before(async () => {
  env = await start();
  mkdirSync(ARTIFACTS, { recursive: true });
});
after(async () => {
  await env?.close();
});

// Llama-3.2-1B full fine-tuning, 4 × 1024 tokens, on an RTX 4090: 7.7 GiB of Adam states over.
const CONSUMER = '?v=1&m=llama-3.2-1b&b=4&s=1024&d=rtx-4090-24gb';

async function platformRows(page) {
  return page.locator('#platform-outcomes li').evaluateAll((lis) => lis.map((li) => [li.className, li.innerText]));
}

test('a GeForce card shows Linux and Windows side by side, and why the spill costs what it costs', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + CONSUMER, { viewport: { width: 1440, height: 1100 } });
  assert.match(await page.locator('#verdict').getAttribute('class'), /spills/);
  const rows = await platformRows(page);
  assert.deepEqual(rows.map(([kind]) => kind), ['oom', 'spills', 'oom']);
  assert.equal(rows[0][1], 'Linux: out of memory, 7.68 GiB over the GPU (torch.OutOfMemoryError)');
  assert.match(rows[1][1], /^Windows, sysmem fallback on: spills 7\.68 GiB into shared GPU memory — [\d.]+–[\d.]+× slower per step$/);
  assert.equal(rows[2][1], 'Windows, sysmem fallback off: out of memory, 7.68 GiB over the GPU (torch.OutOfMemoryError)');
  // The price, opened like a user would.
  await page.locator('#spill-why summary').click();
  const why = await page.locator('#spill-why').innerText();
  assert.match(why, /Room for it: 32\.0 GiB of shared GPU memory \(half of the system RAM\), 64\.0 GiB of system RAM/);
  assert.match(why, /cold \(optimizer states, read once per step\): 7\.68 GiB/);
  assert.match(why, /Optimizer states 7\.68 GiB: optimizer states read and written by the update — 15\.4 GiB per step over the link at 32 GB\/s \(memory-bound: nothing hides it\): \+516 ms/);
  assert.match(await page.locator('#host-memory').getAttribute('placeholder'), /^64 \(usual for this GPU\)/);
  assert.match(await page.locator('#platform-advice').innerText(), /Room in shared GPU memory \(half of the RAM\): 32\.0 GiB/);
  for (const [scheme, width] of [['light', 1440], ['dark', 1440], ['light', 390], ['dark', 390]]) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width, height: width === 390 ? 900 : 1100 });
    await page.locator('#verdict').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(ARTIFACTS, `spill-consumer-${width}-${scheme}.png`) });
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test('system RAM sets the ceiling: past it, out of memory with the ceiling named; the link keeps it', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + CONSUMER);
  // 8 GiB of RAM: 4 GiB of shared GPU memory, less than the 7.7 GiB that would spill.
  await setValue(page, '#host-memory', 8);
  await page.waitForFunction(() => document.getElementById('verdict').classList.contains('oom'));
  assert.match(await page.locator('#verdict .headline').innerText(), /^Out of memory: 7\.7 GiB would spill, past the ceiling of shared GPU memory, which Windows caps at half of the system RAM: 4\.0 GiB of 8\.0 GiB/);
  await page.waitForFunction(() => /[?&]hm=8589934592\b/.test(location.search));
  const rows = await platformRows(page);
  assert.deepEqual(rows.map(([kind]) => kind), ['oom', 'oom', 'oom']);
  assert.equal(await page.locator('#spill-why').count(), 0);
  // A reload of the link keeps the RAM.
  await page.reload();
  await page.waitForFunction(() => document.getElementById('verdict')?.classList.contains('oom'));
  assert.equal(await page.locator('#host-memory').inputValue(), '8');
  // Below 1 GiB is refused, by the field.
  await setValue(page, '#host-memory', 0.5);
  await page.waitForFunction(() => /system RAM must be between 1 GiB and 64 TiB/.test(document.body.innerText));
  // Cleared: back to the usual 64 GiB.
  await setValue(page, '#host-memory', '');
  await page.waitForFunction(() => document.getElementById('verdict').classList.contains('spills'));
  assert.doesNotMatch(await page.evaluate(() => location.search), /hm=/);
  assert.deepEqual(problems, []);
  await page.close();
});
