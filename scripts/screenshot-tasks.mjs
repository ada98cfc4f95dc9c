#!/usr/bin/env node
// Screenshots of the Planner's everyday tasks (issue 11) at 1440 px and 390 px, light and
// dark, for checking by eye: tests/e2e/artifacts/tasks/<task>-<width>-<scheme>.png.
// Usage: trunk build --release && node scripts/screenshot-tasks.mjs [task…]
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, openPlanner, start } from '../tests/e2e/browser.mjs';

const TASKS = {
  'inference-70b': '?m=meta-llama%2FMeta-Llama-3-70B&mode=inference&b=8&s=32768&tp=8',
  'qlora-4090': '?lora=eyJyYW5rIjo2NCwiYmFzZSI6Im5mNCJ9&d=rtx-4090-24gb&ck=full',
  'resnet50-512': '?m=microsoft%2Fresnet-50&img=512&b=32',
  'vit-b16-512': '?m=google%2Fvit-base-patch16-224&img=512&b=32',
  'custom-20gb': '?m=gpt2&d=custom&cap=20000000000&hbm=500000000000&host=32000000000&tf=100',
  'oom-4090-fix': '?d=rtx-4090-24gb&pf=linux',
  'torchtune-profile': '?fw=torchtune&p=bf16&loss=chunked&ck=full&oib=true',
  'mamba-torch-kernels': '?m=state-spaces%2Fmamba-2.8b-hf&mk=torch&b=4&s=4096',
  'qwen3-next-torch-kernels': '?m=Qwen%2FQwen3-Next-80B-A3B-Instruct&mk=torch&d=h200-141gb',
  'qwen25vl-lora-1024': '?m=Qwen%2FQwen2.5-VL-7B-Instruct&lora=eyJyYW5rIjo4fQ&res=1024x1024&ck=full&d=a100-80gb',
  'qwen3-next-lora': '?m=Qwen%2FQwen3-Next-80B-A3B-Instruct&lora=eyJyYW5rIjo4fQ&d=h200-141gb',
};
const OUT = join(ARTIFACTS, 'tasks');
mkdirSync(OUT, { recursive: true });
const only = process.argv.slice(2);
const env = await start();
try {
  for (const [name, query] of Object.entries(TASKS)) {
    if (only.length && !only.includes(name)) continue;
    for (const width of [1440, 390]) {
      for (const colorScheme of ['light', 'dark']) {
        const { page, problems } = await openPlanner(env.browser, env.url + query, { colorScheme, viewport: { width, height: width > 500 ? 1000 : 844 } });
        await page.waitForTimeout(1200);
        // Charts below the fold are drawn once they near the viewport (src/ui/chart_box.rs):
        // scroll through the page so that the full-page shot shows them.
        const height = await page.evaluate(() => document.body.scrollHeight);
        for (let y = 0; y < height; y += 600) {
          await page.evaluate((top) => window.scrollTo(0, top), y);
          await page.waitForTimeout(150);
        }
        await page.evaluate(() => window.scrollTo(0, 0));
        await page.waitForTimeout(600);
        const path = join(OUT, `${name}-${width}-${colorScheme}.png`);
        await page.screenshot({ path, fullPage: true });
        console.log(path, problems.length ? problems : '');
        await page.close();
      }
    }
  }
} finally {
  await env.close();
}
