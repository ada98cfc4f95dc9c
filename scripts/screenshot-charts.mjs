#!/usr/bin/env node
// Screenshots of every ECharts chart of the page, for checking a change to the chart library
// (scripts/build-echarts.mjs) by eye: the Planner (with a bar's tooltip showing), the
// Strategy tab (bar chart and flowchart) and the Compare tab (bars and the "Capacity" line),
// each at 1440 px wide in the light and the dark colour scheme, plus the PNG and SVG exports.
// Not a test: the e2e suite asserts; this only takes pictures.
// Usage: trunk build --release && node scripts/screenshot-charts.mjs [out-dir]
//        (HEADROOM_DIST=dist-other picks another build, as for the tests)
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openPlanner, setValue, start } from '../tests/e2e/browser.mjs';

const OUT = resolve(process.argv[2] ?? 'tests/e2e/artifacts/charts');
const VIEWPORT = { width: 1440, height: 1000 };
mkdirSync(OUT, { recursive: true });

async function waitForEcharts(page, id) {
  await page.waitForFunction((id) => {
    const el = document.getElementById(id);
    return el && window.echarts && window.echarts.getInstanceByDom(el) && el.querySelector('canvas');
  }, id, { timeout: 15000 });
  await page.waitForTimeout(1500); // the opening animation
}

/** Moves the mouse onto the first stacked bar of chart `id` so its tooltip shows. */
async function hoverFirstBar(page, id) {
  const point = await page.evaluate((id) => {
    const el = document.getElementById(id);
    const chart = window.echarts.getInstanceByDom(el);
    const series = chart.getOption().series[0];
    const v = Number(series.data[0]);
    const horizontal = chart.getOption().yAxis[0].type === 'category';
    const [x, y] = chart.convertToPixel({ seriesIndex: 0 }, horizontal ? [v / 2, 0] : [0, v / 2]);
    const r = el.getBoundingClientRect();
    return { x: r.left + x, y: r.top + y };
  }, id);
  await page.mouse.move(point.x, point.y);
  await page.waitForSelector(`#${id} div[style*="z-index: 9999999"]`, { state: 'visible', timeout: 5000 }).catch(() => {});
  await page.waitForTimeout(600);
}

const env = await start();
try {
  for (const colorScheme of ['light', 'dark']) {
    const { page, problems } = await openPlanner(env.browser, env.url, { colorScheme, viewport: VIEWPORT });
    await waitForEcharts(page, 'memory-chart');
    await page.screenshot({ path: join(OUT, `planner-${colorScheme}.png`), fullPage: true });
    await hoverFirstBar(page, 'memory-chart');
    await page.locator('#memory-chart').screenshot({ path: join(OUT, `planner-tooltip-${colorScheme}.png`) });

    if (colorScheme === 'light') {
      for (const [button, file] of [['#export-png', 'export.png'], ['#export-svg', 'export.svg']]) {
        const [download] = await Promise.all([page.waitForEvent('download'), page.locator(button).click()]);
        writeFileSync(join(OUT, file), readFileSync(await download.path()));
      }
    }

    await page.locator('#tab-strategy').click();
    await page.waitForSelector('#flowchart');
    await waitForEcharts(page, 'strategy-chart');
    await page.screenshot({ path: join(OUT, `strategy-${colorScheme}.png`), fullPage: true });
    // The chart alone: the flowchart beside it has CSS animations, so whole-page shots of
    // this tab differ from run to run.
    await page.locator('#strategy-chart').screenshot({ path: join(OUT, `strategy-chart-${colorScheme}.png`) });

    await page.locator('#tab-compare').click();
    await waitForEcharts(page, 'compare-chart');
    await setValue(page, '#cmp-b-dp', 8);
    await page.locator('#cmp-b-zero').selectOption('3');
    await page.waitForTimeout(1000);
    await page.screenshot({ path: join(OUT, `compare-${colorScheme}.png`), fullPage: true });
    await hoverFirstBar(page, 'compare-chart');
    await page.locator('#compare-chart').screenshot({ path: join(OUT, `compare-tooltip-${colorScheme}.png`) });

    if (problems.length) console.error(`${colorScheme}: ${problems.join('\n')}`);
    await page.close();
  }
  console.log(`screenshots in ${OUT}`);
} finally {
  await env.close();
}
