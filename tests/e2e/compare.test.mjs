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

/** What a reader sees of the columns: every control's value, the verdicts and the totals. */
async function columns(page) {
  return page.evaluate(() => ({
    controls: [...document.querySelectorAll('.compare-column')].map((c) => [...c.querySelectorAll('input, select')].map((el) => `${el.id}=${el.value}`)),
    verdicts: [...document.querySelectorAll('.column-verdict')].map((el) => el.innerText),
    totals: [...document.querySelectorAll('#compare-table tr.total td')].map((el) => el.innerText),
  }));
}

const cmpCount = (page) => page.evaluate(() => new URLSearchParams(location.search).getAll('cmp').length);

test('the compare columns live in the URL: reload and a copied link open the same columns', async () => {
  const { page, problems } = await openCompare('?v=1&m=gpt2');
  await setValue(page, '#cmp-b-dp', 8);
  await page.locator('#cmp-b-zero').selectOption('3');
  await setValue(page, '#cmp-b-seq-len', 2048);
  await page.locator('#cmp-b-fine-tuning').selectOption('lora');
  await page.locator('#compare-add').click();
  await page.locator('#cmp-c-model').selectOption('mistralai/Mistral-7B-v0.1');
  await page.locator('#cmp-c-device').selectOption('b200-192gb');
  await page.waitForFunction(() => {
    const cmp = new URLSearchParams(location.search).getAll('cmp');
    return cmp.length === 3 && /dp=8/.test(cmp[1]) && /lora=/.test(cmp[1]) && /d=b200-192gb/.test(cmp[2]);
  });
  const shown = await columns(page);
  assert.equal(shown.controls.length, 3);
  const link = page.url();
  assert.match(link, /view=compare/);

  await page.reload();
  await waitForCompare(page);
  assert.deepEqual(await columns(page), shown);

  const other = await env.browser.newPage({ viewport: { width: 1400, height: 1000 } });
  await other.goto(link);
  await waitForCompare(other);
  assert.deepEqual(await columns(other), shown);
  assert.equal(await other.locator('#compare-notice').count(), 0);
  assert.equal(await other.locator('#url-notice').count(), 0, 'the planner ignores the cmp keys');
  await other.close();

  // Removing a column removes its pair.
  await page.locator('[aria-label="Remove scenario C"]').click();
  await page.waitForFunction(() => new URLSearchParams(location.search).getAll('cmp').length === 2);
  assert.equal(await page.locator('#panic-panel').count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a damaged compare link names the column and parameter and opens the rest', async () => {
  const { page, problems } = await openCompare('?v=1&view=compare&cmp=v%3D1%26m%3Dgpt2%26b%3D-3%26tp%3D2&cmp=v%3D1%26d%3Dh900');
  await page.locator('#compare-notice').waitFor();
  const text = await page.locator('#compare-notice').innerText();
  assert.match(text, /cmp\.A\.b/);
  assert.match(text, /cmp\.B\.device\.preset/);
  assert.equal(await page.locator('#cmp-a-model').inputValue(), 'openai-community/gpt2');
  assert.equal(await page.locator('#cmp-a-tp').inputValue(), '2');
  assert.equal(await page.locator('#cmp-b-device').inputValue(), 'h100-sxm-80gb');
  // The address is rewritten from what was opened.
  await page.waitForFunction(() => !/h900/.test(location.search) && !/b%253D-3|b%3D-3/.test(location.search));
  await page.locator('#compare-notice .notice-dismiss').click();
  assert.equal(await page.locator('#compare-notice').count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test('back and forward bring back the columns of each history entry', async () => {
  const { page, problems } = await openCompare('?v=1&m=gpt2');
  await setValue(page, '#cmp-b-dp', 8);
  await page.waitForFunction(() => /dp%3D8/.test(location.search));
  // A planner edit makes a new history entry that carries the columns along.
  await page.locator('#tab-planner').click();
  await setValue(page, '#micro-batch', 4);
  await page.waitForFunction(() => /[?&]b=4/.test(location.search) && /dp%3D8/.test(location.search));
  await page.waitForTimeout(600); // the burst ends
  await page.locator('#tab-compare').click();
  await waitForCompare(page);
  await setValue(page, '#cmp-b-dp', 2);
  await page.waitForFunction(() => /dp%3D2/.test(location.search));
  await page.goBack();
  await page.waitForFunction(() => document.getElementById('cmp-b-dp')?.value === '8');
  assert.equal(await cmpCount(page), 2);
  await page.goForward();
  await page.waitForFunction(() => document.getElementById('cmp-b-dp')?.value === '2');
  assert.equal(await page.locator('#panic-panel').count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});
