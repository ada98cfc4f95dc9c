// End-to-end tests of sharing: the scenario in the URL (reload, copied link, back/forward),
// the embed view inside an iframe of the example documentation page, exports, the clipboard
// and saved scenarios. Run after `trunk build --release` (HEADROOM_DIST selects the build).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, chooseModel, openPlanner, setValue, start, waitForChart } from './browser.mjs';

let env;
before(async () => {
  env = await start();
  mkdirSync(ARTIFACTS, { recursive: true });
});
after(async () => {
  await env?.close();
});

/** The numbers a reader sees: the inputs, the verdict and the total. */
async function numbers(page) {
  return page.evaluate(() => ({
    model: document.getElementById('model').value,
    device: document.getElementById('device').value,
    microBatch: document.getElementById('micro-batch').value,
    seqLen: document.getElementById('seq-len').value,
    verdict: document.getElementById('verdict').innerText,
    total: document.getElementById('total').innerText,
  }));
}

async function noPanic(page) {
  assert.equal(await page.locator('#panic-panel').count(), 0, 'the panic panel appeared');
}

test('the scenario lives in the URL: reload and a copied link reproduce the same numbers', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  await chooseModel(page, 'mistral-7b');
  await setValue(page, '#micro-batch', 4);
  await setValue(page, '#seq-len', 8192);
  await page.locator('#device').selectOption('b200-192gb');
  await page.waitForFunction(() => /m=mistralai%2FMistral-7B-v0\.1/.test(location.search) && /b=4/.test(location.search) && /s=8192/.test(location.search) && /d=b200-192gb/.test(location.search));
  const shown = await numbers(page);
  assert.equal(shown.microBatch, '4');
  const link = page.url();
  assert.ok(link.startsWith(env.url + '?v=1&'), link);

  await page.reload();
  await waitForChart(page);
  assert.deepEqual(await numbers(page), shown);

  const other = await env.browser.newPage();
  await other.goto(link);
  await waitForChart(other);
  assert.deepEqual(await numbers(other), shown);
  assert.equal(await other.locator('#url-notice').count(), 0);
  await noPanic(other);
  await other.close();
  await noPanic(page);
  assert.deepEqual(problems, []);
  await page.close();
});

test('back and forward restore the scenario; a slider drag makes one history entry', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  const first = await numbers(page);
  await page.locator('#device').selectOption('b200-192gb');
  await page.waitForFunction(() => /d=b200/.test(location.search));
  await page.waitForTimeout(600); // the burst ends
  const second = await numbers(page);
  const length = await page.evaluate(() => history.length);
  // A drag: many input events in quick succession, one history entry.
  await page.locator('#micro-batch-range').focus();
  for (let i = 0; i < 4; i++) await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => /b=16/.test(location.search));
  await page.waitForTimeout(600);
  assert.equal(await page.evaluate(() => history.length), length + 1);
  const third = await numbers(page);
  assert.equal(third.microBatch, '16');

  await page.goBack();
  await page.waitForFunction(() => document.getElementById('micro-batch').value === '1');
  assert.deepEqual(await numbers(page), second);
  await page.goBack();
  await page.waitForFunction(() => document.getElementById('device').value === 'h100-sxm-80gb');
  assert.deepEqual(await numbers(page), first);
  await page.goForward();
  await page.waitForFunction(() => document.getElementById('device').value === 'b200-192gb');
  await page.goForward();
  await page.waitForFunction(() => document.getElementById('micro-batch').value === '16');
  assert.deepEqual(await numbers(page), third);
  await noPanic(page);
  assert.deepEqual(problems, []);
  await page.close();
});

test('units travel in the link', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + '?v=1&m=gpt2&units=gb');
  assert.match(await page.locator('#total').innerText(), / (GB|MB)$/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the embed view in an iframe of the documentation example shows the verdicts and sizes itself', async () => {
  const page = await env.browser.newPage({ viewport: { width: 900, height: 1100 } });
  const problems = [];
  const requests = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(e.message));
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(env.url + 'docs-example.html');
  // The iframes start at 360px (CSS); the script sets each from the reported height.
  await page.waitForFunction(() => [...document.querySelectorAll('iframe.headroom')].every((f) => f.getAttribute('height') && f.style.height), null, { timeout: 15000 });
  for (const [id, verdict] of [['#embed-fits', /^Fits with/], ['#embed-spills', /^Out of memory/]]) {
    const frame = page.frameLocator(id);
    await frame.locator('#verdict').waitFor();
    assert.match(await frame.locator('#verdict .headline').innerText(), verdict);
    // The title names the model, the GPUs and the outcome, in words.
    assert.match(await frame.locator('#embed-title').innerText(), /^(GPT-2|Llama 3)[^·]* · 1 × H100 SXM 80GB · (fits|out of memory) \([\d.]+( \w+)? of [\d.]+ GiB\)$/);
    await frame.locator('#memory-chart canvas').waitFor();
    const link = frame.locator('#open-full');
    assert.equal(await link.getAttribute('target'), '_blank');
    const href = await link.getAttribute('href');
    assert.ok(href.startsWith('?v=1&m=') && !/embed/.test(href), href);
    assert.equal(await frame.locator('#panic-panel').count(), 0);
    // The iframe's height is what the embed measured, so nothing inside scrolls.
    const { attr, inner } = await page.evaluate((sel) => {
      const f = document.querySelector(sel);
      return { attr: Number(f.getAttribute('height')), inner: f.contentDocument.getElementById('embed').offsetHeight };
    }, id);
    assert.ok(Math.abs(attr - inner) <= 2 && attr > 150 && attr < 600, `iframe ${attr}px, content ${inner}px`);
  }
  await page.waitForTimeout(500);
  await page.screenshot({ path: join(ARTIFACTS, 'docs-example.png'), fullPage: true });
  const origin = new URL(env.url).origin;
  assert.deepEqual(requests.filter((u) => !u.startsWith(origin + '/') && !u.startsWith('data:')), []);
  assert.deepEqual(problems, []);
  await page.close();

  // The embed on its own, at a typical iframe width.
  const embed = await env.browser.newPage({ viewport: { width: 640, height: 420 } });
  await embed.goto(env.url + '?embed=1&v=1&m=llama-3-8b&b=8');
  await waitForChart(embed);
  await embed.waitForTimeout(1500); // the opening animation
  assert.equal(await embed.locator('#copy-link').count(), 0, 'the embed is read-only');
  assert.match(await embed.locator('#embed-title').innerText(), /^Llama 3 8B · 1 × H100 SXM 80GB · out of memory \([\d.]+ of 79\.6 GiB\)$/);
  assert.match(await embed.title(), /^Llama 3 8B · 1 × H100 SXM 80GB · out of memory .* — Headroom$/);
  assert.match(await embed.locator('#verdict .details').innerText(), /^dp 1 · tp 1 · pp 1 · no ZeRO · bf16 mixed \(AMP\) · 8\.03 B parameters$/);
  await embed.screenshot({ path: join(ARTIFACTS, 'embed.png') });
  await embed.close();
});

test('exports download the chart (PNG, SVG) and the breakdown (Markdown, JSON), each with its context', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + '?v=1&m=gpt2&dp=4&z=2&d=a100-80gb');
  const grab = async (button) => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator(button).click()]);
    return { name: download.suggestedFilename(), body: readFileSync(await download.path()) };
  };
  const link = page.url();
  const today = new Date().toISOString().slice(0, 10);
  const title = 'GPT-2 (124M) · 4 × A100 80GB SXM';
  const md = await grab('#export-md');
  assert.equal(md.name, 'headroom-gpt2.md');
  const markdown = md.body.toString();
  assert.ok(markdown.startsWith(`## ${title}: fits\n`), markdown.slice(0, 80));
  assert.match(markdown, /\| \*\*total\*\* \|/);
  assert.match(markdown, /· dp 4 · tp 1 · pp 1 · ZeRO-2 · .* · bf16 mixed \(AMP\) ·/);
  assert.ok(markdown.includes(`(<${link}>) · exported ${today}`), markdown.slice(-200));
  const json = await grab('#export-json');
  assert.equal(json.name, 'headroom-gpt2.json');
  const parsed = JSON.parse(json.body.toString());
  assert.deepEqual(Object.keys(parsed).sort(), ['breakdown', 'cheapest_fix', 'date', 'limits', 'link', 'scenario', 'summary', 'units', 'units_note', 'verdict']);
  assert.ok(Number(parsed.breakdown.total) > 0 && 'capacity' in parsed.breakdown);
  assert.equal(parsed.scenario.model.preset, 'gpt2');
  assert.equal(parsed.scenario.parallel.dp, 4);
  assert.equal(parsed.scenario.device.preset, 'a100-80gb');
  assert.ok(parsed.summary.title.startsWith(`${title}`) && parsed.summary.outcome === 'fits', parsed.summary.title);
  assert.equal(parsed.link, link);
  assert.equal(parsed.date, today);
  const png = await grab('#export-png');
  assert.deepEqual([...png.body.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  // IHDR: 960 × (300 + the title's 72) CSS pixels at twice the resolution.
  assert.deepEqual([png.body.readUInt32BE(16), png.body.readUInt32BE(20)], [1920, 744]);
  const svg = await grab('#export-svg');
  const text = svg.body.toString();
  assert.ok(text.startsWith('<svg') || text.startsWith('<?xml'), text.slice(0, 40));
  assert.match(text, /Parameters/);
  assert.ok(text.includes(title), 'the SVG names the model and GPUs');
  assert.match(text, /ZeRO-2 · bf16 mixed \(AMP\) · fits \(/);
  assert.ok(text.includes(today));
  assert.match(await page.locator('#share-status').innerText(), /SVG exported/);
  await noPanic(page);
  assert.deepEqual(problems, []);
  await page.close();
});

test('copy link and copy iframe snippet', async () => {
  const context = await env.browser.newContext();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: new URL(env.url).origin });
  const page = await context.newPage();
  await page.goto(env.url + '?v=1&m=gpt2&b=2');
  await waitForChart(page);
  await page.locator('#copy-link').click();
  await page.waitForFunction(() => /Link copied/.test(document.getElementById('share-status').innerText));
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()), page.url());
  assert.equal(await page.locator('#share-text').inputValue(), page.url());
  await page.locator('#copy-iframe').click();
  await page.waitForFunction(() => /Iframe snippet copied/.test(document.getElementById('share-status').innerText));
  const snippet = await page.evaluate(() => navigator.clipboard.readText());
  assert.match(snippet, /^<iframe src="http:\/\/127\.0\.0\.1:\d+\/\?embed=1&amp;v=1&amp;m=gpt2&amp;b=2" title="Headroom: GPU memory plan for GPT-2 \(124M\) · 1 × H100 SXM 80GB" width="100%" height="420"/);
  // The snippet works: its src opens the embed view.
  const src = snippet.match(/src="([^"]+)"/)[1].replaceAll('&amp;', '&');
  await page.goto(src);
  await waitForChart(page);
  assert.equal(await page.locator('#embed').count(), 1);
  await context.close();
});

test('saved scenarios: save, survive a reload, open, rename, delete; a damaged entry is skipped', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + '?v=1&m=gpt2&b=4');
  const name = 'Mine <b>bold</b> <img src=x onerror=alert(1)>';
  page.on('dialog', (d) => { problems.push(`dialog: ${d.message()}`); d.dismiss(); });
  await page.locator('#save-name').fill(name);
  await page.locator('#save-scenario').click();
  await page.locator('li.saved').waitFor();
  await page.evaluate(() => localStorage.setItem('headroom.saved.0000-damaged', '{not json'));
  await page.goto(env.url + '?v=1&m=llama-3-8b');
  await waitForChart(page);
  await page.locator('#saved-problems').waitFor({ state: 'visible' });
  assert.match(await page.locator('#saved-problems').innerText(), /headroom\.saved\.0000-damaged.*skipped/);
  assert.equal(await page.locator('li.saved').count(), 1);
  assert.equal(await page.locator('li.saved .saved-name').inputValue(), name);
  assert.equal(await page.locator('#saved-list img, #saved-list b').count(), 0, 'names are text');
  // Open it: the scenario and the URL follow.
  await page.locator('li.saved .saved-open').click();
  await page.waitForFunction(() => document.getElementById('model').dataset.key === 'openai-community/gpt2' && document.getElementById('micro-batch').value === '4');
  await page.waitForFunction(() => /m=gpt2/.test(location.search) && /b=4/.test(location.search));
  // Rename, reload, delete.
  await page.locator('li.saved .saved-name').fill('GPT-2, batch 4');
  await page.locator('li.saved .saved-name').press('Enter');
  await page.locator('li.saved .saved-name').blur();
  await page.waitForFunction(() => /Renamed/.test(document.getElementById('saved-status').innerText));
  await page.reload();
  await waitForChart(page);
  assert.equal(await page.locator('li.saved .saved-name').inputValue(), 'GPT-2, batch 4');
  await page.locator('li.saved .saved-delete').click();
  await page.waitForFunction(() => document.querySelectorAll('li.saved').length === 0);
  assert.deepEqual(await page.evaluate(() => Object.keys(localStorage).filter((k) => k.startsWith('headroom.saved.'))), ['headroom.saved.0000-damaged']);
  await page.evaluate(() => localStorage.clear());
  await noPanic(page);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a family outside the catalogue (OLMoE) opens from a link and from a paste: its reader comes with the link and paste code, not the first download', async () => {
  // Link: the codec chunk and the full importer are preloaded and read before the first chart.
  const { page, problems, requests } = await openPlanner(env.browser, env.url + '?v=1&hf=eyJpbnRlcm1lZGlhdGVfc2l6ZSI6MTAyNCwibW9kZWxfdHlwZSI6Im9sbW9lIn0');
  assert.match(await page.locator('#model-summary').innerText(), /6\.92 B params/);
  // Paste: from the default page, the config reader chunk is fetched at the first paste.
  await page.goto(env.url);
  await waitForChart(page);
  assert.match(await page.locator('#model-summary').innerText(), /8\.03 B params/);
  assert.equal(requests.filter((u) => u.includes('split_config_reader')).length, 0, 'nothing fetched the config reader before a paste');
  await page.locator('details.paste summary').click();
  await page.locator('details.paste textarea').fill('{"model_type": "olmoe", "intermediate_size": 1024}');
  await page.waitForFunction(() => /6\.92 B params/.test(document.getElementById('model-summary').innerText));
  assert.ok(requests.some((u) => u.includes('split_config_reader')), 'the paste fetched the config reader');
  assert.deepEqual(problems, []);
  await page.close();
});
