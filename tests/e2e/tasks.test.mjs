// Everyday tasks done as a user does them on the Planner: sizing inference, QLoRA on one
// consumer GPU, vision models at a chosen resolution, a custom device, a rejected paste.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { start, openPlanner, setValue, componentSize, chooseModel, modelKey, gib } from './browser.mjs';

let env;
before(async () => { env = await start(); });
after(async () => { await env.close(); });

test('inference: Llama-3-70B bf16, 8 × 32k tokens on 8 × H100 with TP 8', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  await chooseModel(page, 'Meta-Llama-3-70B');
  assert.equal(await modelKey(page), 'meta-llama/Meta-Llama-3-70B');
  await page.selectOption('#mode', 'inference');
  // Training-only controls disappear.
  assert.equal(await page.locator('#grad-accum').isVisible(), false);
  assert.equal(await page.locator('#optimizer').isVisible(), false);
  assert.equal(await page.locator('#zero').isVisible(), false);
  await setValue(page, '#micro-batch', 8);
  await setValue(page, '#seq-len', 32768);
  await setValue(page, '#tp', 8);
  await page.selectOption('#weights', 'bf16');
  // 70.55 B × 2 B / 8 GPUs = 16.4 GiB of weights; KV cache 80 × 1 KV head × 128 × 2 × 2 B × 262,144 tokens = 10.0 GiB.
  assert.equal(gib(await componentSize(page, 'parameters')), 16.4);
  assert.equal(gib(await componentSize(page, 'activations')), 10.0);
  const verdict = await page.locator('#verdict').innerText();
  assert.match(verdict, /Fits/);
  assert.match(verdict, /first token after/);
  assert.match(verdict, /tokens\/s for the batch of 8/);
  // FP8 KV cache halves the cache; int4 weights shrink them about 3.9×.
  await page.selectOption('#kv-cache', 'fp8');
  assert.equal(gib(await componentSize(page, 'activations')), 5.0);
  await page.selectOption('#weights', 'int4');
  assert.ok(gib(await componentSize(page, 'parameters')) < 5.5);
  assert.match(page.url(), /mode=inference/);
  assert.match(page.url(), /wq=int4/);
  assert.match(page.url(), /kvq=fp8/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('QLoRA r = 64 of Llama-3-8B on one RTX 4090', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  await page.selectOption('#fine-tuning', 'qlora');
  await setValue(page, '#lora-rank', 64);
  await page.selectOption('#device', 'rtx-4090-24gb');
  await page.selectOption('#checkpointing', 'full');
  // r·(d_in + d_out) over the seven projections of 32 blocks: 167,772,160 trainable.
  assert.match(await page.locator('#trainable').innerText(), /Trains 167\.8 M of 8\.03 B parameters/);
  assert.match(await page.locator('#verdict').innerText(), /167\.8 M trainable/);
  assert.match(await page.locator('#verdict').getAttribute('class'), /fits/);
  await page.selectOption('#lora-targets', 'attention');
  // q, k, v, o only: 64 × 32 × (2·(4096+4096) + 2·(4096+1024)) = 54,525,952.
  assert.match(await page.locator('#trainable').innerText(), /Trains 54\.5 M/);
  // Adapter dropout (PEFT lora_dropout) saves a mask and a dropped input copy per adapted
  // linear — outside checkpointed blocks only: with full checkpointing nothing changes.
  const checkpointed = await page.locator('#total').innerText();
  await page.selectOption('#lora-dropout', '0.05');
  assert.equal(await page.locator('#total').innerText(), checkpointed);
  await page.selectOption('#lora-dropout', '0');
  await page.selectOption('#checkpointing', 'none');
  const before = await page.locator('#total').innerText();
  await page.selectOption('#lora-dropout', '0.05');
  assert.notEqual(await page.locator('#total').innerText(), before);
  // PEFT casts the unquantised weights (embeddings, head, norms: 1.05 B of Llama-3-8B's
  // parameters) to fp32; unchecked, as torchtune, they stay in bf16: 2 B each fewer.
  assert.equal(await page.locator('#lora-fp32-unquantised').isChecked(), true);
  const peft = gib(await componentSize(page, 'parameters'));
  const link = page.url();
  await page.locator('#lora-fp32-unquantised').uncheck();
  const bf16 = gib(await componentSize(page, 'parameters'));
  assert.ok(Math.abs(peft - bf16 - 1.96) < 0.05, `${peft} → ${bf16}`);
  await page.waitForFunction((old) => location.href !== old, link); // the switch travels in the link
  assert.deepEqual(problems, []);
  await page.close();
});

for (const [query, key] of [['resnet-50', 'microsoft/resnet-50'], ['vit-base-patch16', 'google/vit-base-patch16-224']]) {
  test(`${key} at 512 px: a resolution control instead of the sequence length`, async () => {
    const { page, problems } = await openPlanner(env.browser, env.url);
    await chooseModel(page, query);
    assert.equal(await modelKey(page), key);
    assert.equal(await page.locator('#seq-len').isVisible(), false);
    assert.equal(await page.locator('#image-size').inputValue(), '224');
    // A batch large enough that the peak is in backward, where the activations live.
    await setValue(page, '#micro-batch', 32);
    const before = gib(await componentSize(page, 'activations'));
    await setValue(page, '#image-size', 512);
    assert.match(page.url(), /img=512/);
    const after = gib(await componentSize(page, 'activations'));
    // (512/224)² ≈ 5.2× the pixels: activations grow at least 4× (ViT: 1025 vs 197 tokens, plus the s² of eager attention).
    assert.ok(after > 4 * before, `${before} → ${after}`);
    const details = await page.locator('#verdict .details').innerText();
    assert.doesNotMatch(details, /step ≈ 0 ms/);
    assert.match(details, /step ≈ [\d.]+ (µs|ms|s)/);
    assert.deepEqual(problems, []);
    await page.close();
  });
}

test('a custom 20 GB device', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + '?m=gpt2');
  await page.selectOption('#device', 'custom');
  await setValue(page, '#custom-capacity', 20);
  // 20 GB = 18.6 GiB.
  assert.equal(await page.locator('#capacity').innerText(), '18.6 GiB');
  assert.match(page.url(), /d=custom/);
  assert.match(page.url(), /cap=20000000000/);
  // A nonsense figure is refused in place and kept in the box.
  await setValue(page, '#custom-capacity', -3);
  assert.equal(await page.locator('#custom-capacity').inputValue(), '-3');
  assert.match(await page.locator('#custom-device').innerText(), /Enter a positive number/);
  assert.equal(await page.locator('#capacity').innerText(), '18.6 GiB');
  // It survives a reload from its link.
  await page.reload();
  await page.locator('#capacity').waitFor();
  assert.equal(await page.locator('#capacity').innerText(), '18.6 GiB');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a rejected config paste shows the last-valid-plan notice', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  const total = await page.locator('#total').innerText();
  await page.locator('details.paste summary').click();
  await page.locator('details.paste textarea').fill('{"model_type": "llama", "hidden_size": 0}');
  await page.locator('#paste-rejected').waitFor();
  assert.match(await page.locator('#paste-rejected').innerText(), /last valid plan/);
  assert.equal(await page.locator('#total').innerText(), total);
  await page.locator('details.paste textarea').fill('');
  await page.locator('#paste-rejected').waitFor({ state: 'detached' });
  assert.deepEqual(problems, []);
  await page.close();
});

test('a framework profile sets its switches, which stay editable', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url);
  const before = await page.locator('#total').innerText();
  await page.selectOption('#framework', 'torchtune');
  assert.equal(await page.locator('#precision').inputValue(), 'bf16');
  assert.equal(await page.locator('#loss').inputValue(), 'chunked');
  assert.equal(await page.locator('#checkpointing').inputValue(), 'full');
  assert.equal(await page.locator('#optimizer-in-backward').isChecked(), true);
  assert.match(page.url(), /fw=torchtune/);
  assert.notEqual(await page.locator('#total').innerText(), before);
  // torchtune's QLoRA keeps the unquantised weights in bf16: a QLoRA chosen now starts so.
  await page.selectOption('#fine-tuning', 'qlora');
  assert.equal(await page.locator('#lora-fp32-unquantised').isChecked(), false);
  await page.selectOption('#fine-tuning', 'full');
  await page.selectOption('#loss', 'standard');
  assert.equal(await page.locator('#loss').inputValue(), 'standard');
  // TRL + Liger: fused linear cross-entropy and Liger's norm, SwiGLU and RoPE kernels.
  await page.selectOption('#framework', 'trl-liger');
  assert.equal(await page.locator('#loss').inputValue(), 'fused-linear');
  assert.equal(await page.locator('#liger-kernels').isChecked(), true);
  assert.match(page.url(), /lig=true/);
  assert.match(page.url(), /fw=trl-liger/);
  // torch.compile recomputes elementwise intermediates: less saved for backward.
  await page.selectOption('#checkpointing', 'none');
  await setValue(page, '#micro-batch', 8); // the peak in backward, where the activations are
  const eager = await componentSize(page, 'activations');
  await page.locator('#torch-compile').check();
  assert.notEqual(await componentSize(page, 'activations'), eager);
  assert.match(page.url(), /cmpl=true/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('out of memory on one RTX 4090: the banner names the cheapest fix on that one GPU', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + '?d=rtx-4090-24gb&pf=linux');
  assert.match(await page.locator('#verdict').getAttribute('class'), /oom/);
  // The line holds its place ("working it out…") until the ladder has run after the first paint.
  const fix = await page.locator('#cheapest-fix:not(.pending)').innerText();
  assert.match(fix, /Cheapest fix: .*Pure bf16.*CPU offload on 1 GPU/);
  assert.doesNotMatch(fix, /\d+ GPUs/);
  await page.getByRole('button', { name: 'Open the ladder' }).click();
  await page.waitForFunction(() => location.search.includes('view=strategy'));
  assert.deepEqual(problems, []);
  await page.close();
});

test('ZeRO-3 shows its implementation, resharding and checkpoint-save switches, which travel in the link', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url + '?dp=8');
  assert.equal(await page.locator('#zero3-impl').isVisible(), false);
  await page.selectOption('#zero', '3');
  assert.equal(await page.locator('#zero3-impl').isVisible(), true);
  const resharded = await page.locator('#total').innerText();
  await page.locator('#reshard-after-forward').uncheck();
  // Every block stays gathered from its forward to its backward: more memory.
  assert.notEqual(await page.locator('#total').innerText(), resharded);
  assert.match(page.url(), /rsh=false/);
  await page.selectOption('#zero3-impl', 'deepspeed');
  assert.equal(await page.locator('#reshard-after-forward').isVisible(), false);
  assert.match(page.url(), /z3=deepspeed/);
  assert.deepEqual(problems, []);
  await page.close();
});
