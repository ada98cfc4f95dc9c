// End-to-end tests of the Strategy and Compare tabs: the escalation flowchart and its
// animation, the editable ladder, the automatic planner's Apply, and the compare view.
// Run with `HEADROOM_DIST=dist-strategy node --test tests/e2e/strategy.test.mjs` (or plain
// `node --test tests/e2e/` after `trunk build --release`).
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

/** Opens the page and switches to the Strategy tab; waits for the flowchart. */
async function openStrategy() {
  const opened = await openPlanner(env.browser, env.url, { viewport: { width: 1400, height: 1000 } });
  await opened.page.locator('#tab-strategy').click();
  await opened.page.waitForSelector('#flowchart');
  await waitForEcharts(opened.page, 'strategy-chart');
  return opened;
}

async function waitForEcharts(page, id) {
  await page.waitForFunction((id) => {
    const el = document.getElementById(id);
    return el && window.echarts && window.echarts.getInstanceByDom(el) && el.querySelector('canvas');
  }, id, { timeout: 15000 });
}

const current = (page) => page.locator('.playback').getAttribute('data-current').then(Number);
const firstFit = (page) => page.locator('#flowchart').getAttribute('data-first-fit');
/** The visible text lines of a flowchart node (SVG has no innerText). */
const nodeText = (page, id) => page.locator(`[data-node="${id}"]`).evaluate((g) => [...g.querySelectorAll('text')].map((t) => t.textContent).join('\n'));
const nodeState = (page, id) => page.locator(`[data-node="${id}"]`).getAttribute('data-state');
/** Sum of the strategy bar's six stacked values. */
const barTotal = (page) =>
  page.evaluate(() => {
    const o = window.echarts.getInstanceByDom(document.getElementById('strategy-chart')).getOption();
    return o.series.reduce((sum, s) => sum + Number(s.data[0]), 0);
  });

test('the tab bar switches views, by mouse and by keyboard, with aria-selected', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  assert.equal(await page.locator('[role="tab"]').count(), 3);
  assert.equal(await page.locator('#tab-planner').getAttribute('aria-selected'), 'true');
  await page.locator('#tab-strategy').click();
  assert.equal(await page.locator('#tab-strategy').getAttribute('aria-selected'), 'true');
  assert.equal(await page.locator('#tab-planner').getAttribute('aria-selected'), 'false');
  assert.ok(await page.locator('#panel-planner').isHidden());
  await page.waitForSelector('#panel-strategy #flowchart');
  // Arrow keys move between tabs and take the focus along.
  await page.locator('#tab-strategy').focus();
  await page.keyboard.press('ArrowRight');
  assert.equal(await page.locator('#tab-compare').getAttribute('aria-selected'), 'true');
  assert.equal(await page.evaluate(() => document.activeElement.id), 'tab-compare');
  await page.waitForSelector('#panel-compare');
  await page.keyboard.press('Home');
  assert.equal(await page.locator('#tab-planner').getAttribute('aria-selected'), 'true');
  assert.ok(await page.locator('#panel-planner').isVisible());
  assert.equal(await page.locator('#panel-strategy').count(), 0);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the open view travels in the link and survives a reload', async () => {
  const page = await env.browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems = [];
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('console', (m) => { if (m.type() === 'error') problems.push(`console: ${m.text()}`); });
  await page.goto(env.url + '?v=1&m=gpt2&s=1024&view=strategy');
  await page.waitForSelector('#panel-strategy #flowchart');
  assert.equal(await page.locator('#tab-strategy').getAttribute('aria-selected'), 'true');
  await page.locator('#tab-compare').click();
  assert.match(page.url(), /view=compare/);
  assert.match(page.url(), /m=gpt2/);
  await page.reload();
  await page.waitForSelector('#panel-compare');
  assert.equal(await page.locator('#tab-compare').getAttribute('aria-selected'), 'true');
  await page.locator('#tab-planner').click();
  assert.doesNotMatch(page.url(), /view=/);
  assert.match(page.url(), /m=gpt2/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the flowchart renders the default ladder, marks the first fit and greys what follows', async () => {
  const { page, problems } = await openStrategy();
  // Start + five steps: six boxes, six checks, launch, monitor, no-fit.
  assert.equal(await page.locator('#flowchart .node.action').count(), 5);
  assert.equal(await page.locator('#flowchart .node.check').count(), 6);
  assert.equal(await page.locator('#flowchart [data-node="launch"]').count(), 1);
  assert.equal(await page.locator('#flowchart [data-node="monitor"]').count(), 1);
  const ff = await firstFit(page);
  assert.notEqual(ff, 'none', 'Llama-3-8B fits somewhere on 8 × H100');
  const f = Number(ff);
  assert.ok(f >= 1);
  assert.equal(await page.locator('#flowchart .fits-here').count(), 1);
  assert.equal(await page.locator('#flowchart .fits-here').getAttribute('data-node'), `step-${f}`);
  for (let k = f + 1; k <= 5; k++) assert.equal(await nodeState(page, `step-${k}`), 'off');
  assert.equal(await nodeState(page, 'launch'), 'visited');
  assert.equal(await nodeState(page, 'nofit'), 'off');
  // The start box names the model and shows its per-GPU total; later boxes the change and cost.
  assert.match(await nodeText(page, 'step-0'), /Start: .*per GPU of/s);
  assert.match(await nodeText(page, 'step-1'), /already bf16-mixed/);
  // Full checkpointing recomputes the blocks, not the embedding and head: +31% for Llama-3-8B
  // at 4096 tokens (derived in src/plan/escalation.rs).
  assert.match(await nodeText(page, 'step-2'), /−.*recompute \+31%/s);
  assert.deepEqual(problems, []);
  await page.close();
});

test('play advances the highlight one step at a time and the bar shrinks with it', async () => {
  const { page, problems } = await openStrategy();
  const f = Number(await firstFit(page));
  await page.locator('#flow-reset').click();
  assert.equal(await current(page), 0);
  assert.equal(await nodeState(page, 'step-0'), 'current');
  await page.waitForTimeout(400);
  const startTotal = await barTotal(page);
  await page.locator('#flow-play').click();
  assert.equal(await page.locator('.playback').getAttribute('data-playing'), 'true');
  await page.waitForFunction(() => document.querySelector('.playback').dataset.current === '2', null, { timeout: 5000 });
  assert.equal(await nodeState(page, 'step-2'), 'current');
  assert.equal(await nodeState(page, 'step-1'), 'visited');
  assert.equal(await page.locator('[data-edge="edge-no-1"]').getAttribute('data-state'), 'visited');
  await page.waitForTimeout(450);
  assert.ok((await barTotal(page)) < startTotal, 'checkpointing shrank the bar');
  await page.screenshot({ path: join(ARTIFACTS, 'strategy-mid-animation.png'), fullPage: true });
  // It stops by itself at the first fit.
  await page.waitForFunction(() => document.querySelector('.playback').dataset.playing === 'false', null, { timeout: 10000 });
  assert.equal(await current(page), f);
  assert.match(await page.locator('#step-caption').innerText(), /fits$/);
  assert.equal(await page.locator('[data-edge="edge-yes-' + f + '"]').getAttribute('data-state'), 'visited');
  // Step back / forward.
  await page.locator('#flow-back').click();
  assert.equal(await current(page), f - 1);
  await page.locator('#flow-forward').click();
  assert.equal(await current(page), f);
  // Step boxes are keyboard buttons: focus one and press Enter to jump there.
  await page.locator('[data-node="step-1"]').focus();
  await page.keyboard.press('Enter');
  assert.equal(await current(page), 1);
  await page.locator('[data-node="step-' + f + '"]').focus();
  await page.keyboard.press(' ');
  assert.equal(await current(page), f);
  await page.screenshot({ path: join(ARTIFACTS, 'strategy-fits.png'), fullPage: true });
  assert.deepEqual(problems, []);
  await page.close();
});

test('editing the ladder re-runs the escalation and changes the path', async () => {
  const { page, problems } = await openStrategy();
  const f = Number(await firstFit(page));
  const fitName = await page.locator(`[data-node="step-${f}"] .node-title`).textContent();
  // Untick the step where it first fits: the path now fits later (or not at all).
  const rung = page.locator('#ladder li').nth(f - 1);
  assert.match(await rung.innerText(), new RegExp(fitName.replace(/[()/]/g, '.')));
  await rung.locator('input[type="checkbox"]').uncheck();
  await page.waitForFunction(() => document.querySelectorAll('#flowchart .node.action').length === 4);
  assert.notEqual(await page.locator(`[data-node="step-${f}"] .node-title`).textContent(), fitName);
  // Add QLoRA and move it to the top: it fits at once.
  await page.locator('#add-step').selectOption('qlora');
  await page.waitForFunction(() => document.querySelectorAll('#flowchart .node.action').length === 5);
  for (let i = 0; i < 5; i++) {
    const up = page.locator('#rung-qlora-up');
    if (await up.isDisabled()) break;
    await up.click();
  }
  assert.equal(await page.locator('#ladder li').first().getAttribute('data-step'), 'qlora');
  await page.waitForFunction(() => document.querySelector('[data-node="step-1"] .node-title').textContent === 'QLoRA');
  assert.equal(await firstFit(page), '1');
  assert.equal(await nodeState(page, 'step-2'), 'off');
  await page.screenshot({ path: join(ARTIFACTS, 'strategy-edited-ladder.png'), fullPage: true });
  // A GPU budget of 1 leaves the distributed steps with nothing to do.
  await page.locator('#ladder-reset').click();
  await setValue(page, '#ladder-gpus', 1);
  await page.waitForFunction(() => document.getElementById('flowchart').dataset.firstFit === 'none');
  assert.equal(await nodeState(page, 'nofit'), 'visited');
  assert.match(await nodeText(page, 'step-3'), /skipped: needs more than one data-parallel GPU/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the automatic planner lists fitting layouts, and Apply puts the best one in the planner', async () => {
  const { page, problems } = await openStrategy();
  await page.locator('#find-layouts').click();
  await page.waitForSelector('#search-results tr.search-result', { timeout: 30000 });
  const rows = await page.locator('#search-results tr.search-result').count();
  assert.ok(rows >= 1 && rows <= 10, `${rows} rows`);
  assert.match(await page.locator('#search-summary').innerText(), /layouts on 8 GPUs, \d+ estimates in \d+ ms/);
  await page.locator('#search-results').scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(ARTIFACTS, 'search-results.png'), fullPage: true });
  await page.locator('#search-results tr.search-result').first().locator('button.apply').click();
  assert.equal(await page.locator('#tab-planner').getAttribute('aria-selected'), 'true');
  await page.waitForFunction(() => document.getElementById('verdict').classList.contains('fits'));
  assert.match(await page.locator('#verdict').innerText(), /^Fits/);
  assert.match(await page.locator('#gpu-count').innerText(), /= 8 GPUs/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a long search shows its progress and keeps the page responsive', async () => {
  const { page, problems } = await openStrategy();
  await setValue(page, '#search-gpus', 512);
  await page.locator('#find-layouts').click();
  await page.waitForSelector('#search-progress', { timeout: 10000 });
  // The page answers while the search runs: the animation controls still work.
  await page.locator('#flow-reset').click();
  assert.equal(await current(page), 0);
  await page.waitForSelector('#search-results tr.search-result', { timeout: 60000 });
  assert.equal(await page.locator('#search-progress').count(), 0);
  assert.match(await page.locator('#search-summary').innerText(), /layouts on 512 GPUs/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('compare shows two scenarios side by side, a stacked bar each and the strategy table', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url, { viewport: { width: 1400, height: 1000 } });
  await page.locator('#tab-compare').click();
  await waitForEcharts(page, 'compare-chart');
  assert.equal(await page.locator('.compare-column').count(), 2);
  // Scenario B: 8 GPUs with ZeRO-3 fits.
  await setValue(page, '#cmp-b-dp', 8);
  await page.locator('#cmp-b-zero').selectOption('3');
  await page.waitForFunction(() => document.getElementById('cmp-b-verdict').classList.contains('fits'));
  assert.match(await page.locator('#cmp-a-verdict').innerText(), /^Out of memory/);
  // A third column, then its removal.
  await page.locator('#compare-add').click();
  assert.equal(await page.locator('.compare-column').count(), 3);
  await page.locator('#cmp-c-model').selectOption('openai-community/gpt2');
  await page.waitForFunction(() => document.getElementById('cmp-c-verdict').classList.contains('fits'));
  const option = await page.evaluate(() => {
    const o = window.echarts.getInstanceByDom(document.getElementById('compare-chart')).getOption();
    return { categories: o.xAxis[0].data, series: o.series.map((s) => s.name) };
  });
  assert.deepEqual(option.categories, ['A', 'B', 'C']);
  assert.equal(option.series.length, 7);
  assert.equal(await page.locator('#compare-table tr.component').count(), 6);
  assert.equal(await page.locator('#compare-table thead th').count(), 4);
  // The strategy table: seven strategies, with numbers.
  const strategies = await page.locator('#strategy-table tr.strategy-row').count();
  assert.equal(strategies, 7);
  assert.match(await page.locator('#strategy-table tr[data-strategy="ZeRO-3 / FSDP"]').innerText(), /GiB.*\+.*GB/s);
  await page.waitForTimeout(400);
  await page.screenshot({ path: join(ARTIFACTS, 'compare.png'), fullPage: true });
  await page.locator('[aria-label="Remove scenario C"]').click();
  assert.equal(await page.locator('.compare-column').count(), 2);
  // "Use current planner scenario" copies the planner's scenario into a column.
  await page.locator('#cmp-b-use-current').click();
  await page.waitForFunction(() => document.getElementById('cmp-b-verdict').classList.contains('oom'));
  assert.deepEqual(problems, []);
  await page.close();
});
