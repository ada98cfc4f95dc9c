// End-to-end tests of "from plan to launch": the whole run on the Planner (data, epochs,
// price in the link; hours and cost on screen), "What to rent" on the Strategy tab (filled,
// ranked cheapest first, Open takes a row's plan to the Planner) and the launch configuration
// (a file for one framework, a refusal naming the setting for another). Screenshots at
// 1440 px and 390 px, light and dark, go to tests/e2e/artifacts/.
// Run with `node --test tests/e2e/launch.test.mjs` after `trunk build --release`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, ROOT, openPlanner, setValue, start } from './browser.mjs';

const AXE = readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

/** axe-core's violations on the page as it is (as a11y.test.mjs runs it). */
async function axeViolations(page) {
  if (!(await page.evaluate(() => Boolean(window.axe)))) await page.evaluate(AXE);
  return page.evaluate(async () => (await window.axe.run(document, { resultTypes: ['violations'] })).violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 3).join(', ')}`));
}

let env;
before(async () => {
  env = await start();
  mkdirSync(ARTIFACTS, { recursive: true });
});
after(async () => {
  await env?.close();
});

/** A 7B LoRA on 2 × A100 80GB: 2 × 10⁸ tokens, 2 epochs (tests/fixtures/launch/lora-7b.json). */
const LORA =
  '?v=1&m=meta-llama%2FLlama-2-7b-hf&b=4&s=2048&ga=4&p=bf16&ck=full&dp=2&z=3&d=a100-80gb&tok=200000000&epo=2' +
  '&lora=' + Buffer.from(JSON.stringify({ rank: 16, targets: ['q', 'k', 'v', 'o'] })).toString('base64url');

test('the whole run: steps, hours and cost on the Planner, the price kept in the link', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + LORA, { viewport: { width: 1440, height: 1000 } });
  const table = page.locator('#run-table');
  await table.waitFor();
  // 2 × 10⁸ × 2 tokens / (4 × 4 × 2 × 2048 tokens per step) = 6,103.5… → 6,104 steps.
  assert.match(await table.innerText(), /Steps\s+6,104/);
  assert.match(await page.locator('#run-price-source').innerText(), /\$1\.49\/GPU-hour, example on-demand price/);
  const cost = async () => (await table.locator('tr', { hasText: 'Cost' }).innerText()).replace(/\s+/g, ' ');
  const before = await cost();
  await setValue(page, '#run-price', '2.98');
  // Twice the price, twice the cost: the link carries it.
  await page.waitForFunction(() => location.search.includes('usd=2.98'));
  const after = await cost();
  const dollars = (t) => Number(t.replace(/[^0-9.]/g, ''));
  assert.ok(Math.abs(dollars(after) / dollars(before) - 2) < 0.01, `${before} → ${after}`);
  await page.locator('#run-panel').screenshot({ path: join(ARTIFACTS, 'run-panel.png') });
  assert.deepEqual(await axeViolations(page), []);
  await setValue(page, '#run-epochs', '-1');
  assert.match(await page.locator('[data-field="run.epochs"]').innerText(), /run\.epochs|must be/);
  assert.deepEqual(problems, []);
  await page.close();
});

for (const [width, colorScheme] of [[1440, 'light'], [1440, 'dark'], [390, 'light'], [390, 'dark']]) {
  test(`what to rent and the launch configuration at ${width} px, ${colorScheme}`, async () => {
    const { page, problems } = await openPlanner(env.browser, env.url + LORA, { colorScheme, viewport: { width, height: 900 } });
    await page.locator('#tab-strategy').click();
    await setValue(page, '#rent-budget', '4');
    await page.locator('#find-rent').click();
    await page.locator('#rent-results tr.rent-row').first().waitFor({ timeout: 60000 });
    const rows = page.locator('#rent-results tr.rent-row');
    // The first row is the cheapest; costs never fall down the table among fitting rows.
    assert.match(await rows.first().innerText(), /cheapest/);
    const costs = await page.$$eval('#rent-results tr.rent-row:not(.unfit) td.cost', (cells) => cells.map((c) => Number(c.textContent.replace(/[^0-9.]/g, ''))).filter((x) => x > 0));
    assert.ok(costs.length > 3, `${costs.length} priced rows`);
    for (let i = 1; i < costs.length; i++) assert.ok(costs[i] >= costs[i - 1] - 0.01, `row ${i}: ${costs[i - 1]} then ${costs[i]}`);
    assert.equal(await page.locator('#rent-results .badge', { hasText: 'fastest' }).count(), 1);
    // Ranked by time: the fastest row comes first, hours never fall down the table.
    await page.locator('#rent-order').selectOption('time');
    assert.match(await rows.first().innerText(), /fastest/);
    await page.locator('#rent-order').selectOption('cost');
    assert.match(await rows.first().innerText(), /cheapest/);
    await page.locator('#launch-target').selectOption('torchtune');
    assert.match(await page.locator('#launch-config').innerText(), /tune run --nproc_per_node 2 lora_finetune_distributed/);
    const shot = `rent-and-launch-${width}-${colorScheme}.png`;
    await page.locator('section.rent').scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(ARTIFACTS, shot), fullPage: false });
    await page.locator('section.launch').screenshot({ path: join(ARTIFACTS, `launch-${width}-${colorScheme}.png`) });
    assert.deepEqual(await axeViolations(page), [], 'the filled table and the launch file');
    await page.locator('#launch-target').selectOption('deepspeed');
    assert.match(await page.locator('#launch-refused').innerText(), /^training\.lora: DeepSpeed/);
    if (width === 1440 && colorScheme === 'light') {
      // Open takes the cheapest row's plan to the Planner.
      const device = await rows.first().getAttribute('data-device');
      await rows.first().locator('button.apply').click();
      await page.waitForFunction(() => !document.getElementById('panel-planner').hidden);
      await page.waitForFunction((d) => location.search.includes(`d=${d}`) || d === 'h100-sxm-80gb', device);
    }
    assert.deepEqual(problems, []);
    await page.close();
  });
}

/** 70B full fine-tune, bf16-mixed, ZeRO-3 on 32 H100s (tests/fixtures/launch/full-70b.json). */
const FULL_70B = '?v=1&m=meta-llama%2FMeta-Llama-3-70B&b=1&s=4096&ga=8&ck=full&dp=32&z=3&tok=2000000000';

test('what to rent for a 70B full fine-tune up to 64 GPUs stays responsive and says how long it took', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + FULL_70B, { viewport: { width: 1440, height: 900 } });
  await page.locator('#tab-strategy').click();
  await setValue(page, '#rent-budget', '64');
  await page.locator('#find-rent').click();
  // The page answers while the table fills (slices of ~12 ms between timers).
  const ping = await page.evaluate(() => new Promise((ok) => { const t = performance.now(); setTimeout(() => ok(performance.now() - t), 0); }));
  assert.ok(ping < 500, `a timer waited ${ping} ms`);
  await page.locator('#rent-results tr.rent-row').first().waitFor({ timeout: 120000 });
  const summary = await page.locator('#rent-summary').innerText();
  console.log(`70B full fine-tune, budget 64: ${summary}`);
  assert.match(summary, /of 210 GPU × count pairs fit/);
  // No single GPU holds 70B with AdamW states.
  assert.equal(await page.locator('#rent-results tr.rent-row:not(.unfit)[data-gpus="1"]').count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});
