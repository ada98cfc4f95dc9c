// End-to-end tests of issue 20's advice, as a user meets it: the cheapest fix that states
// every change it makes (the batch trade above all), a fix for one micro-batch too many on
// one GPU, the limits on the Planner with their "Use this", one GPU budget for the Strategy
// flowchart and the layout search (kept in the link), Apply saying what it changed, the
// catalogue's instruct ids, "Fetch config.json from the Hugging Face Hub" against a local
// stand-in for the Hub (Playwright route interception: the real network is never used), and
// the exports (verdict, fix, limits, one unit system). Screenshots at 1440 and 390 px, light
// and dark, go to tests/e2e/artifacts/advice-*.png.
// Run with `node --test tests/e2e/advice.test.mjs` after `trunk build --release`.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, openPlanner, setValue, start, waitForChart } from './browser.mjs';

let env;
before(async () => {
  env = await start();
  mkdirSync(ARTIFACTS, { recursive: true });
});
after(async () => {
  await env?.close();
});

/** Issue 20's first task: Llama 3.1 8B, micro-batch 4 × 2048 on 8 × A100 80GB. */
const STUDY = '?v=1&m=meta-llama%2FLlama-3.1-8B&b=4&s=2048&dp=8&d=a100-80gb';
/** GPT-2 at 950 tokens on one RTX 4090 under Linux: 16 sequences fit, 17 do not. */
const ONE_GPU = (b) => `?v=1&m=gpt2&s=950&b=${b}&d=rtx-4090-24gb&pf=linux`;

const fixText = async (page) => {
  await page.waitForSelector('#cheapest-fix:not(.pending)', { timeout: 20000 });
  return page.locator('#cheapest-fix').innerText();
};
const limitsReady = (page) => page.waitForSelector('#limits .limit-list li', { timeout: 20000 });
const query = (page) => new URL(page.url()).searchParams;

test('the cheapest fix states each change it makes, the batch trade included', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + STUDY, { viewport: { width: 1440, height: 1000 } });
  assert.match(await page.locator('#verdict').innerText(), /^Out of memory/);
  const fix = await fixText(page);
  assert.match(fix, /^Cheapest fix: Smaller micro-batch \+ ZeRO-2 on 8 GPUs — micro-batch 4 → 1, accumulation 1 → 4, global batch kept at 32, ZeRO off → 2;/);
  await limitsReady(page);
  for (const scheme of ['light', 'dark']) {
    for (const width of [1440, 390]) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width, height: width > 400 ? 1000 : 900 });
      await page.locator('#limits').scrollIntoViewIfNeeded();
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: join(ARTIFACTS, `advice-planner-fix-limits-${width}-${scheme}.png`), fullPage: width < 400 ? false : true });
      if (width === 390) assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 390), 'nothing overflows a phone');
    }
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test('one micro-batch past the largest that fits gets a fix on one GPU, and the limit names the largest', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + ONE_GPU(16));
  assert.match(await page.locator('#verdict').innerText(), /^Fits/);
  await limitsReady(page);
  assert.equal(await page.locator('#limit-micro-batch').getAttribute('data-value'), '16');
  assert.match(await page.locator('#limit-micro-batch').innerText(), /^Largest micro-batch: 16 · .* left per GPU/);
  await page.close();

  const seventeen = await openPlanner(env.browser, env.url + ONE_GPU(17));
  assert.match(await seventeen.page.locator('#verdict').innerText(), /^Out of memory/);
  const fix = await fixText(seventeen.page);
  assert.match(fix, /^Cheapest fix: Smaller micro-batch on 1 GPU — micro-batch 17 → 1, accumulation 1 → 17, global batch kept at 17;/);
  // "Use this" on the largest micro-batch: 16, and it fits; the change is stated.
  await limitsReady(seventeen.page);
  await seventeen.page.locator('#limit-micro-batch .use-limit').click();
  await seventeen.page.waitForFunction(() => document.getElementById('verdict').classList.contains('fits'));
  assert.equal(query(seventeen.page).get('b'), '16');
  assert.match(await seventeen.page.locator('#applied-changes').innerText(), /largest micro-batch \(16\): micro-batch 17 → 16, global batch 17 → 16/);
  assert.deepEqual([...problems, ...seventeen.problems], []);
  await seventeen.page.close();
});

test('the limits refresh as the user edits, and each "Use this" fits', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + '?v=1&m=gpt2&s=1024&d=rtx-4090-24gb&pf=linux');
  await limitsReady(page);
  const longest = Number(await page.locator('#limit-extent').getAttribute('data-value'));
  assert.ok(longest > 1024, `${longest}`);
  // A larger micro-batch, typed in: the longest sequence that fits gets shorter.
  await setValue(page, '#micro-batch', 8);
  await page.waitForFunction((n) => Number(document.getElementById('limit-extent')?.dataset.value) < n, longest, { timeout: 20000 });
  const shorter = Number(await page.locator('#limit-extent').getAttribute('data-value'));
  assert.ok(shorter < longest, `${shorter} < ${longest}`);
  await page.locator('#limit-extent .use-limit').click();
  await page.waitForFunction((n) => new URL(location.href).searchParams.get('s') === String(n), shorter);
  assert.match(await page.locator('#verdict').innerText(), /^Fits/);
  // The fewest GPUs of a run that needs several: the ladder's plan on them, applied.
  await page.goto(env.url + '?v=1&m=meta-llama%2FMeta-Llama-3-70B&s=8192&d=h100-sxm-80gb');
  await waitForChart(page);
  await limitsReady(page);
  const gpus = Number(await page.locator('#limit-gpus').getAttribute('data-value'));
  assert.ok(gpus > 1, `${gpus}`);
  assert.match(await page.locator('#limit-gpus').innerText(), new RegExp(`^Fewest H100 SXM 80GB: ${gpus} · `));
  await page.locator('#limit-gpus .use-limit').click();
  await page.waitForFunction(() => document.getElementById('verdict').classList.contains('fits'));
  assert.match(await page.locator('#gpu-count').innerText(), new RegExp(`= ${gpus} GPUs`));
  assert.match(await page.locator('#applied-changes').innerText(), /fewest h100 sxm 80gb .*dp 1 → /i);
  assert.deepEqual(problems, []);
  await page.close();
});

test('one GPU budget for the flowchart and the layout search, kept in the link; Apply states its changes', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + '?v=1&m=meta-llama%2FMeta-Llama-3-8B&s=2048&b=2&ga=32&d=a100-80gb', {
    viewport: { width: 1440, height: 1000 },
  });
  await page.locator('#tab-strategy').click();
  await page.waitForSelector('#flowchart');
  assert.equal(await page.locator('#ladder-gpus').inputValue(), '1');
  assert.equal(await page.locator('#search-gpus').inputValue(), '1');
  await setValue(page, '#ladder-gpus', 64);
  await page.waitForFunction(() => document.getElementById('search-gpus').value === '64');
  await page.waitForFunction(() => /[?&]gpus=64(&|$)/.test(location.search));
  // The plan says what it changes: the 64 sequences per step are kept over 64 GPUs.
  await page.waitForSelector('#plan-changes');
  assert.match(await page.locator('#plan-changes').innerText(), /global batch kept at 64/);
  await page.locator('#find-layouts').click();
  await page.waitForSelector('#search-results tr.search-result', { timeout: 30000 });
  assert.match(await page.locator('#search-summary').innerText(), /on 64 GPUs: .* at the global batch of 64 sequences/);
  for (const scheme of ['light', 'dark']) {
    for (const width of [1440, 390]) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width, height: 1000 });
      await page.evaluate(() => window.scrollTo(0, 0));
      await page.screenshot({ path: join(ARTIFACTS, `advice-strategy-budget-${width}-${scheme}.png`) });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  await page.setViewportSize({ width: 1440, height: 1000 });
  // Reopening the link keeps the one budget.
  await page.reload();
  await page.waitForSelector('#flowchart');
  assert.equal(await page.locator('#ladder-gpus').inputValue(), '64');
  assert.equal(await page.locator('#search-gpus').inputValue(), '64');
  await page.locator('#find-layouts').click();
  await page.waitForSelector('#search-results tr.search-result', { timeout: 30000 });
  await page.locator('#search-results tr.search-result').first().locator('button.apply').click();
  await page.waitForSelector('#applied-changes');
  const applied = await page.locator('#applied-changes').innerText();
  assert.match(applied, /^Applied layout 1 of the automatic planner: .*dp 1 → /, applied);
  assert.match(applied, /global batch kept at 64/, applied);
  assert.deepEqual(problems, []);
  await page.close();
});

test('instruct ids are in the catalogue', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  for (const [typed, key] of [
    ['Qwen/Qwen2.5-7B-Instruct', 'Qwen/Qwen2.5-7B-Instruct'],
    ['Llama 3.3 70B', 'meta-llama/Llama-3.3-70B-Instruct'],
    ['gemma-3-27b-it', 'google/gemma-3-27b-it'],
  ]) {
    await page.locator('#model').fill(typed);
    const first = page.locator('#model-list [role=option]').first();
    await first.waitFor();
    assert.match(await first.innerText(), new RegExp(key.replace(/[.]/g, '\\.')));
    await page.locator('#model').press('Enter');
    await page.waitForFunction((k) => document.getElementById('model').dataset.key === k, key);
  }
  assert.deepEqual(problems, []);
  await page.close();
});

/** A Llama-shaped config.json, as the Hub would serve it. */
const LLAMA_CONFIG = JSON.stringify({
  architectures: ['LlamaForCausalLM'],
  model_type: 'llama',
  hidden_size: 2048,
  intermediate_size: 5632,
  num_attention_heads: 32,
  num_hidden_layers: 22,
  num_key_value_heads: 4,
  vocab_size: 32000,
  max_position_embeddings: 2048,
  rms_norm_eps: 1e-5,
  tie_word_embeddings: false,
});

test('a Hub id not in the catalogue is fetched from the Hub only when asked; gated and unreachable repositories offer the paste', async () => {
  const { page, problems, requests } = await openPlanner(env.browser, env.url, { viewport: { width: 1440, height: 1000 } });
  const asked = [];
  await page.route('https://huggingface.co/**', (route) => {
    const url = route.request().url();
    asked.push(url);
    if (url.includes('/some-lab/tiny-llama-1b/')) {
      return route.fulfill({ status: 200, contentType: 'application/json', headers: { 'access-control-allow-origin': '*' }, body: LLAMA_CONFIG });
    }
    if (url.includes('/gated-org/')) {
      return route.fulfill({ status: 401, contentType: 'text/plain', headers: { 'access-control-allow-origin': '*' }, body: 'Access to model gated-org/secret is restricted.' });
    }
    return route.abort('internetdisconnected');
  });
  await page.locator('#model').fill('some-lab/tiny-llama-1b');
  await page.locator('#hub-fetch').waitFor();
  assert.deepEqual(asked, [], 'typing fetches nothing');
  await page.locator('#model').press('Escape');
  await page.locator('#hub-fetch').click();
  await page.waitForFunction(() => document.getElementById('model').dataset.key === 'custom');
  assert.deepEqual(asked, ['https://huggingface.co/some-lab/tiny-llama-1b/resolve/main/config.json']);
  assert.match(await page.locator('#hub-fetch-status').innerText(), /Read some-lab\/tiny-llama-1b's config.json from the Hub/);
  assert.match(await page.locator('#model-summary').innerText(), /22 layers · h 2048/);
  assert.ok(query(page).get('hf'), 'the fetched config travels in the link');
  for (const scheme of ['light', 'dark']) {
    for (const width of [1440, 390]) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.setViewportSize({ width, height: 1000 });
      await page.locator('#hub-fetch-status').scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(ARTIFACTS, `advice-hub-fetch-${width}-${scheme}.png`) });
    }
  }
  await page.emulateMedia({ colorScheme: 'light' });
  // Gated: say so, open the paste.
  await page.locator('#model').fill('gated-org/secret');
  await page.locator('#model').press('Escape');
  await page.locator('#hub-fetch').click();
  // "gated-org" is in the "Fetching …" line too: wait for the answer itself.
  await page.waitForFunction(() => /is gated on the Hub/.test(document.getElementById('hub-fetch-status').textContent));
  assert.match(await page.locator('#hub-fetch-status').innerText(), /gated-org\/secret is gated on the Hub: .*paste its config.json below instead/);
  assert.equal(await page.locator('#paste-details').getAttribute('open'), '');
  // Unreachable.
  await page.locator('#model').fill('nowhere/model');
  await page.locator('#model').press('Escape');
  await page.locator('#hub-fetch').click();
  await page.waitForFunction(() => /Could not reach/.test(document.getElementById('hub-fetch-status').textContent));
  // A catalogue id offers no fetch; nothing but the three asked-for files went to the Hub.
  await page.locator('#model').fill('Qwen/Qwen3-8B');
  assert.equal(await page.locator('#hub-fetch').count(), 0);
  assert.equal(requests.filter((u) => u.startsWith('https://huggingface.co')).length, 3, requests.join('\n'));
  // The aborted request logs a console error in Chromium (net::ERR_INTERNET_DISCONNECTED);
  // the gated one a 401. Nothing else.
  assert.deepEqual(problems.filter((p) => !/ERR_INTERNET_DISCONNECTED|401/.test(p)), []);
  await page.close();
});

test('the exports carry the verdict, the fix and its changes, the limits and one unit system', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + STUDY + '&units=gb');
  await fixText(page);
  const grab = async (button) => {
    const [download] = await Promise.all([page.waitForEvent('download'), page.locator(button).click()]);
    return readFileSync(await download.path()).toString();
  };
  const md = await grab('#export-md');
  assert.match(md, /\*\*Verdict:\*\* Out of memory/);
  assert.match(md, /\*\*Cheapest fix:\*\* Smaller micro-batch \+ ZeRO-2 on 8 GPUs — micro-batch 4 → 1, accumulation 1 → 4, global batch kept at 32, ZeRO off → 2;/);
  assert.match(md, /\*\*Limits\*\*/);
  assert.match(md, /- Fewest A100 80GB SXM: \d+/);
  assert.match(md, /The “80GB” in “A100 80GB SXM” is binary: 80 GiB = 85\.9 GB\./);
  const [body] = md.split('Sizes in GB');
  assert.doesNotMatch(body, / GiB| MiB/, 'GB throughout');
  assert.ok(md.includes(page.url()));
  const json = JSON.parse(await grab('#export-json'));
  assert.equal(json.cheapest_fix.changes, 'micro-batch 4 → 1, accumulation 1 → 4, global batch kept at 32, ZeRO off → 2');
  assert.ok('max_micro_batch' in json.limits && 'max_seq_len' in json.limits && 'min_gpus' in json.limits, JSON.stringify(json.limits));
  assert.equal(json.units, 'GB');
  const svg = await grab('#export-svg');
  assert.ok(svg.includes('Llama 3.1 8B · 8 × A100 80GB SXM · micro-batch 4 × 2,048 tokens'), 'the image title has the batch × sequence');
  assert.match(svg, /bf16 mixed \(AMP\) · out of memory/);
  assert.deepEqual(problems, []);
  await page.close();
});
