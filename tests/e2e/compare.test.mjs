// End-to-end tests of the Compare view's own state: columns that survive tab switches, the
// columns' settings, the columns in the URL (reload, a copied link, back/forward).
// Run after `trunk build --release` (HEADROOM_DIST selects the build).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { ARTIFACTS, openPlanner, setValue, start } from './browser.mjs';

let env;
before(async () => {
  env = await start();
  mkdirSync(ARTIFACTS, { recursive: true });
});
after(async () => {
  await env?.close();
});

/** Waits until ECharts has drawn the compare chart. */
async function waitForCompare(page) {
  await page.waitForFunction(() => {
    const el = document.getElementById('compare-chart');
    return el && window.echarts && window.echarts.getInstanceByDom(el) && el.querySelector('canvas');
  }, null, { timeout: 15000 });
}

/** Opens the Compare tab of a fresh page at `query`. */
async function openCompare(query = '') {
  const opened = await openPlanner(env.browser, env.url + query, { viewport: { width: 1400, height: 1000 } });
  await opened.page.locator('#tab-compare').click();
  await waitForCompare(opened.page);
  return opened;
}

test('compare columns keep their settings across tab switches', async () => {
  const { page, problems } = await openCompare();
  await setValue(page, '#cmp-b-dp', 8);
  await page.waitForFunction(() => document.getElementById('cmp-b-dp').value === '8');
  await page.locator('#tab-planner').click();
  await page.locator('#tab-strategy').click();
  await page.locator('#tab-compare').click();
  await waitForCompare(page);
  assert.equal(await page.locator('.compare-column').count(), 2);
  assert.equal(await page.locator('#cmp-b-dp').inputValue(), '8');
  assert.equal(await page.locator('#panic-panel').count(), 0, 'the panic panel appeared');
  assert.deepEqual(problems, []);
  await page.close();
});

/** Column `i`'s total in the compare table, in GiB. */
async function columnTotal(page, i) {
  const text = await page.locator(`#compare-table tr.total td:nth-of-type(${i + 1})`).innerText();
  const [, value, unit] = text.match(/^([\d.]+) (GiB|MiB|TiB)$/);
  return Number(value) * { MiB: 1 / 1024, GiB: 1, TiB: 1024 }[unit];
}

test('columns set sequence length, optimizer, checkpointing and LoRA, with readable names', async () => {
  const { page, problems } = await openCompare();
  const shown = (id) => page.locator(`#${id}`).evaluate((el) => el.options[el.selectedIndex].text);
  assert.equal(await shown('cmp-a-precision'), 'bf16 mixed (AMP)');
  assert.equal(await shown('cmp-a-optimizer'), 'AdamW');
  assert.equal(await shown('cmp-a-checkpointing'), 'none');
  assert.equal(await shown('cmp-a-fine-tuning'), 'full (all weights)');
  assert.equal(await page.locator('#cmp-a-seq-len').inputValue(), '4096');
  // Each setting of column B changes B's total and leaves A's alone.
  const a = await columnTotal(page, 0);
  let b = await columnTotal(page, 1);
  const cellB = '#compare-table tr.total td:nth-of-type(2)';
  for (const [sel, value] of [
    ['#cmp-b-seq-len', '1024'],
    ['#cmp-b-optimizer', 'adamw-8bit'],
    ['#cmp-b-checkpointing', 'full'],
    ['#cmp-b-fine-tuning', 'qlora'],
  ]) {
    const before = await page.locator(cellB).innerText();
    if (sel.endsWith('seq-len')) await setValue(page, sel, value);
    else await page.locator(sel).selectOption(value);
    await page.waitForFunction(({ cell, before }) => document.querySelector(cell).innerText !== before, { cell: cellB, before });
    const now = await columnTotal(page, 1);
    assert.ok(now < b, `${sel}=${value}: ${b} → ${now} GiB`);
    b = now;
  }
  assert.equal(await columnTotal(page, 0), a);
  assert.equal(await shown('cmp-b-fine-tuning'), 'QLoRA (4-bit base)');
  assert.deepEqual(problems, []);
  await page.close();
});
