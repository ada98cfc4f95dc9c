#!/usr/bin/env node
// Screenshots of the Compare view (three columns from a cmp= link) and of the embed view
// (fits and out of memory), at 1440 px and 390 px wide, in the light and the dark colour
// scheme, for checking layout by eye. Not a test: the e2e suite asserts; this takes pictures.
// Usage: trunk build --release && node scripts/screenshot-compare.mjs [out-dir]
//        (HEADROOM_DIST=dist-other picks another build, as for the tests)
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { start } from '../tests/e2e/browser.mjs';

const OUT = resolve(process.argv[2] ?? 'tests/e2e/artifacts/compare');
mkdirSync(OUT, { recursive: true });

const column = (q) => 'cmp=' + encodeURIComponent(q);
const COMPARE = '?v=1&m=meta-llama%2FMeta-Llama-3-8B&view=compare&' + [
  column('v=1&m=meta-llama%2FMeta-Llama-3-8B'),
  column('v=1&m=meta-llama%2FMeta-Llama-3-8B&dp=8&z=3&ck=full&s=8192'),
  column('v=1&m=mistralai%2FMistral-7B-v0.1&o=adamw-8bit&d=a100-80gb&lora=' + Buffer.from('{"rank":16,"base":"nf4"}').toString('base64url')),
].join('&');
const EMBEDS = {
  'embed-fits': '?embed=1&v=1&m=meta-llama%2FMeta-Llama-3-8B&dp=8&z=3',
  'embed-oom': '?embed=1&v=1&m=meta-llama%2FMeta-Llama-3-8B&b=8',
};

async function waitForEcharts(page, id) {
  await page.waitForFunction((id) => {
    const el = document.getElementById(id);
    return el && window.echarts && window.echarts.getInstanceByDom(el) && el.querySelector('canvas');
  }, id, { timeout: 15000 });
  await page.waitForTimeout(1200); // the opening animation
}

const env = await start();
const problems = [];
try {
  for (const colorScheme of ['light', 'dark']) {
    for (const width of [1440, 390]) {
      const page = await env.browser.newPage({ colorScheme, viewport: { width, height: 900 } });
      page.on('pageerror', (e) => problems.push(`${colorScheme} ${width}: ${e.message}`));
      await page.goto(env.url + COMPARE);
      await waitForEcharts(page, 'compare-chart');
      await page.screenshot({ path: join(OUT, `compare-${width}-${colorScheme}.png`), fullPage: true });
      for (const [name, query] of Object.entries(EMBEDS)) {
        await page.setViewportSize({ width, height: 600 });
        await page.goto(env.url + query);
        await waitForEcharts(page, 'memory-chart');
        await page.locator('#embed').screenshot({ path: join(OUT, `${name}-${width}-${colorScheme}.png`) });
      }
      await page.close();
    }
  }
} finally {
  await env.close();
}
if (problems.length) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(`screenshots in ${OUT}`);
