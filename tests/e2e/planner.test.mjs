// End-to-end tests of the planner page: a release dist/ in headless Chromium.
// Run with `node --test tests/e2e/` after `trunk build --release` (scripts/test.sh does both).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, ROOT, chooseModel, componentSize, modelKey, openPlanner, setValue, shots, start, waitForChart } from './browser.mjs';

let env;
before(async () => {
  env = await start();
  mkdirSync(ARTIFACTS, { recursive: true });
});
after(async () => {
  await env?.close();
});

test('page loads with the default scenario, a chart and no console error', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  assert.equal(await modelKey(page), 'meta-llama/Meta-Llama-3-8B');
  assert.equal(await page.locator('#device').inputValue(), 'h100-sxm-80gb');
  assert.equal(await page.locator('#micro-batch').inputValue(), '1');
  assert.equal(await page.locator('#seq-len').inputValue(), '4096');
  const verdict = await page.locator('#verdict').innerText();
  assert.match(verdict, /^Out of memory: needs .+ GiB, .+ over the .+ it can use \(Linux CUDA: torch\.OutOfMemoryError\)/);
  assert.equal(await page.locator('tr.component').count(), 6);
  // ECharts holds six stacked series and the capacity line.
  const option = await page.evaluate(() => {
    const o = window.echarts.getInstanceByDom(document.getElementById('memory-chart')).getOption();
    return { names: o.series.map((s) => s.name), stacks: o.series.map((s) => s.stack) };
  });
  assert.deepEqual(option.names, ['Parameters', 'Gradients', 'Optimizer states', 'Activations', 'Temporary buffers', 'Framework overhead']);
  assert.ok(option.stacks.every((s) => s === 'memory'));
  await page.screenshot({ path: join(ARTIFACTS, 'default.png'), fullPage: true });
  assert.deepEqual(problems, []);
  assert.equal(await page.locator('#panic-panel').count(), 0, 'the panic panel appeared');
  await page.close();
});

test('moving the micro-batch slider changes the activations and the total', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  const before = { activations: await componentSize(page, 'activations'), total: await page.locator('#total').innerText() };
  // Slider positions are powers of two: position 2 is micro-batch 4.
  await page.locator('#micro-batch-range').focus();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.getElementById('micro-batch').value === '4');
  const after = { activations: await componentSize(page, 'activations'), total: await page.locator('#total').innerText() };
  assert.notEqual(after.activations, before.activations);
  assert.notEqual(after.total, before.total);
  // The number box takes any value, and the chart follows.
  await setValue(page, '#micro-batch', 8);
  await page.waitForFunction((t) => document.getElementById('total').innerText !== t, after.total);
  const bars = await page.evaluate(() => window.echarts.getInstanceByDom(document.getElementById('memory-chart')).getOption().series[3].data[0]);
  assert.ok(Number(bars) > 0);
  await page.screenshot({ path: join(ARTIFACTS, 'spilling-mb8.png'), fullPage: true });
  assert.deepEqual(problems, []);
  assert.equal(await page.locator('#panic-panel').count(), 0, 'the panic panel appeared');
  await page.close();
});

test('a bigger device, or 8 GPUs with ZeRO-3, flips the verdict to fits', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  assert.match(await page.locator('#verdict').innerText(), /^Out of memory/);
  await page.locator('#device').selectOption('b200-192gb');
  await page.waitForFunction(() => document.getElementById('verdict').classList.contains('fits'));
  assert.match(await page.locator('#verdict').innerText(), /^Fits with .+ headroom/);
  await page.screenshot({ path: join(ARTIFACTS, 'fits-b200.png'), fullPage: true });

  await page.locator('#device').selectOption('h100-sxm-80gb');
  await page.waitForFunction(() => document.getElementById('verdict').classList.contains('oom'));
  await setValue(page, '#dp', 8);
  await page.locator('#zero').selectOption('3');
  await page.waitForFunction(() => document.getElementById('verdict').classList.contains('fits'));
  assert.match(await page.locator('#gpu-count').innerText(), /= 8 GPUs/);
  assert.deepEqual(problems, []);
  assert.equal(await page.locator('#panic-panel').count(), 0, 'the panic panel appeared');
  await page.close();
});

test('an invalid setting (tp = 3) shows its message by the control, keeps the value and does not panic', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  await setValue(page, '#tp', 3);
  const message = page.locator('.field-error[data-field="parallel.tp"]');
  await message.waitFor();
  assert.match(await message.innerText(), /tp = 3 must divide the 32 attention heads/);
  // The message sits inside the tp control, the typed value stays, the page keeps working.
  assert.equal(await page.locator('#tp').inputValue(), '3');
  assert.equal(await page.locator('#tp').locator('xpath=ancestor::div[contains(@class,"control")]').locator('.field-error').count(), 1);
  await page.locator('.stale').waitFor();
  await setValue(page, '#micro-batch', 2);
  assert.equal(await page.locator('#micro-batch').inputValue(), '2');
  await setValue(page, '#tp', 4);
  await message.waitFor({ state: 'detached' });
  await page.waitForFunction(() => !document.querySelector('.stale'));
  await waitForChart(page);
  // A broken config.json shows its message and keeps the model.
  await page.locator('details.paste summary').click();
  await page.locator('#hf-config').fill('{"model_type": "llama", "hidden_size": 0}');
  await page.locator('#hf-config-error').waitFor({ state: 'visible' });
  assert.match(await page.locator('#hf-config-error').innerText(), /hidden_size/);
  assert.equal(await modelKey(page), 'meta-llama/Meta-Llama-3-8B');
  assert.match(await page.locator('#hf-config-error').innerText(), /previous model/);
  assert.deepEqual(problems, []);
  assert.equal(await page.locator('#panic-panel').count(), 0, 'the panic panel appeared');
  await page.close();
});

test('a pasted config.json becomes the model', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  const before = await page.locator('#total').innerText();
  await page.locator('details.paste summary').click();
  await page.locator('#hf-config').fill(JSON.stringify({
    model_type: 'gpt2', n_embd: 768, n_layer: 12, n_head: 12, n_positions: 1024, vocab_size: 50257,
  }));
  await page.waitForFunction((t) => document.getElementById('total').innerText !== t, before);
  assert.equal(await modelKey(page), 'custom');
  assert.match(await page.locator('#model').inputValue(), /^gpt2 124\.4 M \(config\.json\)$/);
  assert.equal(await page.locator('#hf-config-error').isVisible(), false);
  assert.deepEqual(problems, []);
  assert.equal(await page.locator('#panic-panel').count(), 0, 'the panic panel appeared');
  await page.close();
});

test('no request goes to any other host, and the page works on a phone in dark mode', async () => {
  const { page, problems, requests } = await openPlanner(env.browser, env.url, {
    colorScheme: 'dark',
    viewport: { width: 390, height: 844 },
  });
  await setValue(page, '#seq-len', 8192);
  await page.waitForTimeout(500);
  const origin = new URL(env.url).origin;
  const foreign = requests.filter((u) => !u.startsWith(origin + '/') && !u.startsWith('data:'));
  assert.deepEqual(foreign, []);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow}px wider than the phone`);
  await page.screenshot({ path: join(ARTIFACTS, 'phone-dark.png'), fullPage: true });
  assert.deepEqual(problems, []);
  assert.equal(await page.locator('#panic-panel').count(), 0, 'the panic panel appeared');
  await page.close();
});

test('extreme and out-of-range values never kill the page', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  const cases = [
    ['#micro-batch', 1024], ['#seq-len', 1048576], ['#grad-accum', 1024], ['#dp', 0], ['#dp', 1024],
    ['#pp', 1000], ['#pp', 32], ['#cp', 64], ['#ep', 8], ['#tp', 0], ['#tp', 64], ['#micro-batch', 0],
    ['#seq-len', 99999999999], ['#micro-batch', 'abc'],
  ];
  for (const [selector, value] of cases) {
    await setValue(page, selector, value);
    await page.waitForTimeout(30);
  }
  await chooseModel(page, 'mixtral-8x7b');
  await page.locator('#device').selectOption('a100-80gb-mig-3g.40gb');
  await page.waitForTimeout(300);
  // Still alive: fixing the values brings a fresh plan back.
  for (const [selector, value] of [['#micro-batch', 1], ['#seq-len', 4096], ['#dp', 8], ['#tp', 1], ['#pp', 1], ['#cp', 1], ['#ep', 8]]) {
    await setValue(page, selector, value);
  }
  await page.waitForFunction(() => !document.querySelector('.stale'));
  assert.match(await page.locator('#verdict').innerText(), /^(Fits|Spills|Out of memory)/);
  assert.deepEqual(problems, []);
  assert.equal(await page.locator('#panic-panel').count(), 0, 'the panic panel appeared');
  await page.close();
});

test('the model search finds catalogue models by Hub id or name, by keyboard', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  await page.locator('#model').click();
  await page.keyboard.type('qwen3 8b');
  await page.locator('#model-list [role=option]').first().waitFor();
  assert.match(await page.locator('#model-list [role=option]').first().innerText(), /Qwen\/Qwen3-8B/);
  await page.screenshot({ path: join(ARTIFACTS, 'model-search.png') });
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('model').dataset.key === 'Qwen/Qwen3-8B');
  assert.match(await page.locator('#model-summary').innerText(), /decoder · 8\.19 B params · GQA/);
  await page.waitForFunction(() => /m=Qwen%2FQwen3-8B/.test(location.search));
  // Arrow keys move through the matches; Escape restores the current model.
  await page.locator('#model').click();
  await page.keyboard.type('deepseek');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.locator('#model-option-1').getAttribute('aria-selected'), 'true');
  await page.keyboard.press('Escape');
  assert.equal(await page.locator('#model').inputValue(), 'Qwen3 8B');
  // A multimodal wrapper's config imports its text model and says what it left out.
  await page.locator('details.paste summary').click();
  await page.locator('#hf-config').fill(JSON.stringify({
    model_type: 'gemma3', text_config: { hidden_size: 3840, num_hidden_layers: 48, num_attention_heads: 16, num_key_value_heads: 8, intermediate_size: 15360, head_dim: 256 },
  }));
  await page.waitForFunction(() => document.getElementById('model').dataset.key === 'custom');
  assert.match(await page.locator('.warnings').innerText(), /vision tower is not/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the model search finds the hybrid, state-space and vision-language models of the catalogue', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  const first = async (query) => {
    await page.locator('#model').fill('');
    await page.locator('#model').click();
    await page.keyboard.type(query);
    await page.locator('#model-list [role=option]').first().waitFor();
    return page.locator('#model-list [role=option]').first().innerText();
  };
  for (const [query, id] of [
    ['qwen3-next', 'Qwen/Qwen3-Next-80B-A3B-Instruct'],
    ['jamba', 'ai21labs/AI21-Jamba-1.5-Mini'],
    ['nemotron-h', 'nvidia/Nemotron-H-8B-Base-8K'],
    ['mamba', 'state-spaces/mamba-2.8b-hf'],
    ['qwen2.5-vl', 'Qwen/Qwen2.5-VL-3B-Instruct'],
  ]) {
    assert.match(await first(query), new RegExp(id.replace(/[.]/g, '\\.')), query);
    await page.keyboard.press('Escape');
  }
  assert.match(await first('vl'), /Qwen\/Qwen2\.5-VL-3B-Instruct/);
  await page.screenshot({ path: join(ARTIFACTS, 'model-search-vl.png') });
  await page.keyboard.press('Escape');
  // Picked from the list, a hybrid is read by the first download's families and planned.
  await first('qwen3-next');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('model').dataset.key === 'Qwen/Qwen3-Next-80B-A3B-Instruct');
  await page.waitForFunction(() => !document.querySelector('.stale'));
  assert.match(await page.locator('#model-summary').innerText(), /79\.67 B params/);
  assert.match(await page.locator('#verdict').innerText(), /^(Fits|Spills|Out of memory)/);
  await shots(page, 'catalogue-qwen3-next');
  // A vision-language model from the list shows the image size beside the sequence length.
  await first('qwen2.5-vl 7b');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.getElementById('model').dataset.key === 'Qwen/Qwen2.5-VL-7B-Instruct');
  await page.locator('#vlm-image-size').waitFor();
  assert.match(await page.locator('#model-summary').innerText(), /8\.29 B params/);
  await shots(page, 'catalogue-qwen2_5_vl_7b');
  assert.deepEqual(problems, []);
  assert.equal(await page.locator('#panic-panel').count(), 0, 'the panic panel appeared');
  await page.close();
});

test('the verdict names what happens beyond memory: Windows spill, Linux OOM, C2C, a shared GPU', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  // A GeForce card is assumed to be on Windows with the sysmem fallback: 131.5 GiB would
  // spill, past the 32 GiB of shared GPU memory a 64 GiB desktop has; with 512 GiB of RAM
  // it spills, as a range.
  await page.locator('#device').selectOption('rtx-4090-24gb');
  await page.waitForFunction(() => document.getElementById('verdict').classList.contains('oom'));
  assert.match(await page.locator('#verdict .headline').innerText(), /past the ceiling of shared GPU memory/);
  await setValue(page, '#host-memory', 512);
  await page.waitForFunction(() => document.getElementById('verdict').classList.contains('spills'));
  const windows = await page.locator('#verdict .headline').innerText();
  assert.match(windows, /^Spills .+ into shared GPU memory \(Windows sysmem fallback\) — [\d.]+–[\d.]+× slower per step \(optimizer states/);
  assert.match(await page.locator('#platform-advice').innerText(), /Assumed: Windows, sysmem fallback on/);
  await page.screenshot({ path: join(ARTIFACTS, 'verdict-windows-spill.png') });
  // The same card on Linux: out of memory.
  await page.locator('#platform').selectOption('linux');
  await page.waitForFunction(() => document.getElementById('verdict').classList.contains('oom'));
  await page.waitForFunction(() => /pf=linux/.test(location.search));
  // A data-centre GPU is assumed to be Linux.
  await page.locator('#platform').selectOption('auto');
  await setValue(page, '#host-memory', '');
  await page.locator('#device').selectOption('h100-sxm-80gb');
  await page.waitForFunction(() => document.getElementById('verdict').classList.contains('oom'));
  assert.match(await page.locator('#verdict .headline').innerText(), /torch\.OutOfMemoryError/);
  await page.screenshot({ path: join(ARTIFACTS, 'verdict-datacenter-oom.png') });
  // GH200 reaches CPU memory over NVLink-C2C.
  await page.locator('#device').selectOption('gh200-96gb');
  await page.waitForFunction(() => document.getElementById('verdict').classList.contains('spills'));
  assert.match(await page.locator('#verdict .headline').innerText(), /into CPU memory over NVLink-C2C/);
  await page.screenshot({ path: join(ARTIFACTS, 'verdict-gh200-c2c.png') });
  // Two jobs share a B200: each gets half, and the page says which fraction to set.
  await page.locator('#device').selectOption('b200-192gb');
  await setValue(page, '#jobs', 2);
  await page.waitForFunction(() => /set_per_process_memory_fraction\(0\.5\d?\)/.test(document.getElementById('platform-advice').innerText));
  await page.screenshot({ path: join(ARTIFACTS, 'verdict-shared-gpu.png') });
  assert.deepEqual(problems, []);
  assert.equal(await page.locator('#panic-panel').count(), 0, 'the panic panel appeared');
  await page.close();
});

test('a measured run pasted beside the plan: memory_summary, and a malformed paste', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + '?v=1&m=llama-3.2-1b&p=bf16&s=2048');
  const summary = readFileSync(join(ROOT, 'tests', 'fixtures', 'measured_runs', 'llama-1b-bf16-h100.txt'), 'utf8');
  await page.locator('#measured-panel > summary').click();
  await page.locator('#measured-input').fill(summary);
  await page.locator('#measured-table').waitFor();
  const text = await page.locator('#measured-table').innerText();
  assert.match(text, /allocated/);
  assert.match(text, /allocator cache and fragmentation/);
  await page.locator('#measured-panel').screenshot({ path: join(ARTIFACTS, 'measured-run.png') });
  // A truncated nvidia-smi line names its line; the plan stays.
  await page.locator('#measured-input').fill('memory.used [MiB], memory.total [MiB]\n10240 MiB');
  await page.locator('#measured-error').waitFor();
  assert.match(await page.locator('#measured-error').innerText(), /^line 2: /);
  assert.match(await page.locator('#verdict').innerText(), /^(Fits|Spills|Out of memory)/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('framework techniques: chunked cross-entropy and the optimizer step in backward lower the peak', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + '?v=1&m=llama-3.2-3b&p=bf16&b=2');
  const total = async () => page.locator('#total').innerText();
  const plain = await total();
  await page.locator('#loss').selectOption('chunked');
  await page.waitForFunction((t) => document.getElementById('total').innerText !== t, plain);
  await page.waitForFunction(() => /loss=chunked/.test(location.search));
  const chunked = await total();
  await page.locator('#optimizer-in-backward').check();
  await page.waitForFunction(() => /oib=true/.test(location.search));
  assert.notEqual(chunked, plain);
  // With accumulation the fused step is refused, with the reason by the switch.
  await setValue(page, '#grad-accum', 4);
  await page.waitForFunction(() => document.querySelector('.stale'));
  assert.match(await page.locator('body').innerText(), /cannot accumulate gradients/);
  assert.deepEqual(problems, []);
  await page.close();
});
