// End-to-end robustness tests: tampered links and pasted configs never kill the page, the
// panic panel appears only on a real panic, nothing is fetched from another host and the
// Content-Security-Policy is never violated. Run after `trunk build --release`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, modelKey, setValue, start, waitForChart, watchedPage as watched } from './browser.mjs';

const watchedPage = (context = env.browser) => watched(context);

let env;
before(async () => {
  env = await start();
  mkdirSync(ARTIFACTS, { recursive: true });
});
after(async () => {
  await env?.close();
});

const TAMPERED = [
  // [query, what must be kept]
  ['v=1&m=llama-3-8b&b=', { model: 'meta-llama/Meta-Llama-3-8B', mb: '1' }],
  ['v=1&m=gpt', { model: 'meta-llama/Meta-Llama-3-8B' }],
  ['v=99&m=gpt2&b=2', { model: 'openai-community/gpt2', mb: '2' }],
  ['%%%garbage&&==&=&%zz', {}],
  ['v=1&m=gpt2&b=1e30', { model: 'openai-community/gpt2', mb: '1' }],
  ['v=1&s=99999999999999999999', { seq: '4096' }],
  ['v=1&m=<script>alert(1)</script>', { model: 'meta-llama/Meta-Llama-3-8B' }],
  ['v=1&m=%3Cscript%3Ealert(1)%3C%2Fscript%3E&b=2', { model: 'meta-llama/Meta-Llama-3-8B', mb: '2' }],
  ['v=1&m=gpt2&p=<img src=x onerror=alert(2)>', { model: 'openai-community/gpt2' }],
  ['v=one&m=gpt2', { model: 'openai-community/gpt2' }],
  ['v=1&hf=!!!notbase64', {}],
  ['v=1&hf=eyJtb2RlbF90eXBlIjoibm90LWEtbW9kZWwifQ', {}],
  ['v=1&arch=e30', {}],
  ['v=1&lora=bm90IGpzb24', {}],
  ['v=1&fz=-3', {}],
  ['v=1&cap=-5&d=custom', {}],
  ['v=1&tp=NaN&dp=1e400', {}],
  ['v=1&z=7&o=sgd-with-extra-momentum', {}],
  ['v=1&' + 'x'.repeat(5000) + '=1', {}],
  ['v=1&b=' + '9'.repeat(6000), {}],
];

test('20 tampered links open the readable part with a visible message, never the panic panel', async () => {
  const { page, problems, requests } = await watchedPage();
  for (const [query, keep] of TAMPERED) {
    await page.goto(env.url + '?' + query);
    await waitForChart(page);
    const notice = page.locator('#url-notice');
    await notice.waitFor({ state: 'visible', timeout: 5000 }).catch(() => assert.fail(`no message for ?${query.slice(0, 80)}`));
    assert.ok((await notice.locator('li').count()) >= 1);
    assert.equal(await notice.locator('script, img').count(), 0, 'values are shown as text');
    assert.equal(await page.locator('#panic-panel').count(), 0, `panic for ?${query.slice(0, 80)}`);
    assert.match(await page.locator('#verdict').innerText(), /^(Fits|Spills|Out of memory)/);
    if (keep.model) assert.equal(await modelKey(page), keep.model, query);
    if (keep.mb) assert.equal(await page.locator('#micro-batch').inputValue(), keep.mb, query);
    if (keep.seq) assert.equal(await page.locator('#seq-len').inputValue(), keep.seq, query);
  }
  // The script tag is shown as text in the message.
  await page.goto(env.url + '?v=1&m=<script>alert(1)</script>');
  await waitForChart(page);
  assert.match(await page.locator('#url-notice').innerText(), /<script>alert\(1\)<\/script>/);
  await page.screenshot({ path: join(ARTIFACTS, 'tampered-link.png') });
  // The message can be dismissed, and the page keeps working.
  await page.locator('#url-notice-dismiss').click();
  await page.locator('#url-notice').waitFor({ state: 'detached' });
  await setValue(page, '#micro-batch', 2);
  await page.waitForFunction(() => /b=2/.test(location.search));
  assert.deepEqual(await page.evaluate(() => window.__csp), []);
  const origin = new URL(env.url).origin;
  assert.deepEqual(requests.filter((u) => !u.startsWith(origin + '/') && !u.startsWith('data:')), []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('chunks that cannot be fetched (offline after the first download): a shared link opens the default scenario with a message and keeps its address', async () => {
  const { page, problems } = await watchedPage();
  // Every WASM chunk fails; the main module and ECharts arrive.
  await page.route(/-(chunk_\d+|split_[a-z_]+)-[0-9a-f]+\.wasm$/, (route) => route.abort());
  await page.goto(env.url + '?v=1&m=gpt2&b=2');
  await waitForChart(page);
  const notice = page.locator('#url-notice');
  await notice.waitFor({ state: 'visible', timeout: 5000 });
  assert.match(await notice.innerText(), /link code did not load/);
  assert.equal(await modelKey(page), 'meta-llama/Meta-Llama-3-8B', 'the default scenario is shown');
  assert.match(page.url(), /m=gpt2&b=2/, 'the address the user opened is kept');
  // The timeline says it could not be loaded; the rest of the planner works.
  await page.locator('.timeline-card .field-error').waitFor({ timeout: 5000 });
  assert.match(await page.locator('.timeline-card .field-error').innerText(), /Reload the page to retry/);
  assert.match(await page.locator('#cheapest-fix').innerText(), /could not be loaded/);
  assert.match(await page.locator('#verdict').innerText(), /^(Fits|Spills|Out of memory)/);
  assert.equal(await page.locator('#panic-panel').count(), 0);
  assert.deepEqual(problems.filter((p) => !/Failed to load resource|ERR_FAILED|Failed to fetch/.test(p)), []);
  await page.close();
});

test("ECharts' two stages: the timeline draws its lines with the second; without it the memory chart still draws and the timeline and PNG export say why", async () => {
  // Both stages arrive: the step timeline's line series is drawn once the second stage is in.
  {
    const { page, problems } = await watchedPage();
    await page.goto(env.url);
    await waitForChart(page);
    await page.locator('#timeline-chart').scrollIntoViewIfNeeded();
    await page.waitForFunction(() => {
      const el = document.getElementById('timeline-chart');
      return el && window.echarts.getInstanceByDom(el)?.getOption().series.some((s) => s.type === 'line') && el.querySelector('canvas');
    }, null, { timeout: 10000 });
    assert.deepEqual(problems, []);
    await page.close();
  }
  // The second stage fails: the first chart is unaffected; what needs the second says so.
  const { page, problems } = await watchedPage();
  await page.route(/\/echarts\/echarts-more\.js$/, (route) => route.abort());
  await page.goto(env.url);
  await waitForChart(page);
  const timelineError = page.locator('.timeline-card .field-error');
  await timelineError.waitFor({ timeout: 10000 });
  assert.match(await timelineError.innerText(), /could not be drawn \(the chart library did not load\)/);
  assert.equal(await page.locator('#memory-chart + .field-error').count(), 0, 'the memory chart has no error');
  await page.locator('#export-png').click();
  await page.waitForFunction(() => /PNG not exported/.test(document.getElementById('share-status').innerText));
  assert.match(await page.locator('#share-status').innerText(), /^PNG not exported: part of the chart library did not load \(are you offline\?\)$/);
  assert.equal(await page.locator('#panic-panel').count(), 0);
  assert.deepEqual(problems.filter((p) => !/Failed to load resource|ERR_FAILED|dynamically imported module|chart not drawn/.test(p)), []);
  await page.close();
});

test('ECharts that cannot be fetched at all: every chart says so and the numbers are still there', async () => {
  const { page, problems } = await watchedPage();
  await page.route(/\/echarts\/echarts(-core)?\.js$/, (route) => route.abort());
  await page.goto(env.url);
  const error = page.locator('#memory-chart + .field-error');
  await error.waitFor({ timeout: 10000 });
  assert.match(await error.innerText(), /could not be drawn \(the chart library did not load\)\. Reload the page to retry/);
  assert.match(await page.locator('#verdict').innerText(), /^(Fits|Spills|Out of memory)/);
  assert.ok(Number((await page.locator('#total').innerText()).replace(/[^0-9.]/g, '')) > 0);
  await page.locator('#export-svg').click();
  await page.waitForFunction(() => /SVG not exported/.test(document.getElementById('share-status').innerText));
  assert.match(await page.locator('#share-status').innerText(), /the chart library did not load/);
  assert.equal(await page.locator('#panic-panel').count(), 0);
  assert.deepEqual(problems.filter((p) => !/Failed to load resource|ERR_FAILED|chart not drawn/.test(p)), []);
  await page.close();
});

test('10 malformed config.json pastes each show a message and keep the last valid model', async () => {
  const { page, problems } = await watchedPage();
  await page.goto(env.url + '?v=1&m=gpt2');
  await waitForChart(page);
  const total = await page.locator('#total').innerText();
  await page.locator('details.paste summary').click();
  const configs = [
    '{',
    'null',
    '[]',
    '"llama"',
    '{"model_type": "not-a-model", "hidden_size": 64}',
    '{"model_type": "llama", "hidden_size": 0, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 8, "vocab_size": 10}',
    '{"model_type": "llama", "hidden_size": 1e300, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 8, "vocab_size": 10}',
    '{"model_type": "<script>alert(1)</script>", "hidden_size": 64}',
    '{"model_type": "gpt2", "n_embd": -1, "n_layer": 12, "n_head": 12, "vocab_size": 50257}',
    '{"model_type": "llama", "hidden_size": 4096, "num_hidden_layers": 99999999999999999999, "num_attention_heads": 32, "intermediate_size": 14336, "vocab_size": 128256}',
  ];
  for (const text of configs) {
    await page.locator('#hf-config').fill(text);
    await page.locator('#hf-config-error').waitFor({ state: 'visible', timeout: 3000 }).catch(() => assert.fail(`no message for ${text}`));
    assert.ok((await page.locator('#hf-config-error').innerText()).length > 5, text);
    assert.equal(await page.locator('#hf-config-error script').count(), 0);
    assert.equal(await modelKey(page), 'openai-community/gpt2', text);
    assert.equal(await page.locator('#total').innerText(), total, text);
    assert.equal(await page.locator('#panic-panel').count(), 0, text);
  }
  assert.deepEqual(await page.evaluate(() => window.__csp), []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a real panic shows the panic panel with the message and a working copy button', async () => {
  const context = await env.browser.newContext();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(env.url).origin });
  const { page, problems } = await watchedPage(context);
  await page.goto(env.url + '?v=1&m=gpt2&b=2');
  await waitForChart(page);
  assert.equal(await page.locator('#panic-panel').count(), 0);
  // The test hook panics inside the WASM; the call itself then throws (the module stops).
  await page.evaluate(() => { try { window.wasmBindings.headroomSelfTestPanic(); } catch (e) { return String(e); } return 'no throw'; });
  await page.locator('#panic-panel').waitFor({ state: 'visible' });
  assert.match(await page.locator('#panic-message').innerText(), /self-test panic/);
  const report = await page.locator('#panic-report').inputValue();
  assert.ok(report.includes(page.url()), report);
  await page.locator('#panic-copy').click();
  await page.waitForFunction(() => document.getElementById('panic-copy-status').textContent === 'Copied.');
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), report);
  await page.screenshot({ path: join(ARTIFACTS, 'panic-panel.png') });
  // console_error_panic_hook still logs the panic to the console.
  assert.ok(problems.some((p) => /self-test panic/.test(p)), problems.join('\n'));
  assert.deepEqual(await page.evaluate(() => window.__csp), []);
  await context.close();
});

test('normal use of every view: no foreign request, no CSP violation, no panic panel', async () => {
  const { page, problems, requests } = await watchedPage();
  await page.goto(env.url);
  await waitForChart(page);
  assert.equal(await page.evaluate(() => document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.content.includes("script-src 'self' 'wasm-unsafe-eval'")), true);
  assert.equal(await page.locator('script:not([src])').count(), 0, 'no inline script');
  await setValue(page, '#micro-batch', 4);
  // Hover the bars (the tooltip), export everything, open the docs example.
  const box = await page.locator('#memory-chart').boundingBox();
  await page.mouse.move(box.x + box.width * 0.3, box.y + box.height * 0.6);
  await page.waitForTimeout(300);
  for (const id of ['#export-png', '#export-svg', '#export-md', '#export-json']) {
    await Promise.all([page.waitForEvent('download'), page.locator(id).click()]);
  }
  await page.locator('#save-name').fill('x');
  await page.locator('#save-scenario').click();
  await page.locator('li.saved .saved-delete').click();
  await page.goto(env.url + 'docs-example.html');
  await page.frameLocator('#embed-spills').locator('#memory-chart canvas').waitFor();
  await page.goto(env.url + '?embed=1&v=1&m=gpt2');
  await waitForChart(page);
  assert.deepEqual(await page.evaluate(() => window.__csp), []);
  assert.equal(await page.locator('#panic-panel').count(), 0);
  const origin = new URL(env.url).origin;
  assert.deepEqual(requests.filter((u) => !u.startsWith(origin + '/') && !u.startsWith('data:') && !u.startsWith('blob:' + origin)), []);
  assert.deepEqual(problems, []);
  await page.close();
});
