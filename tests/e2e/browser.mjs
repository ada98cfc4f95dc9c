// Shared set-up for the end-to-end tests and the page benchmark: the Debian Chromium
// driven by playwright-core (never `npx playwright install`), and dist/ served locally.
import { chromium } from 'playwright-core';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { serve } from './static-server.mjs';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
// HEADROOM_DIST lets two builds be tested side by side (e.g. dist-share/); default dist/.
export const DIST = join(ROOT, process.env.HEADROOM_DIST || 'dist');
export const ARTIFACTS = join(ROOT, 'tests', 'e2e', 'artifacts');

export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];

/** Launches the Debian Chromium (or $CHROMIUM) headless. */
export function launch() {
  return chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', args: CHROMIUM_ARGS });
}

/** Launches Chromium and serves dist/; returns {browser, server, url, close}. */
export async function start() {
  if (!existsSync(join(DIST, 'index.html'))) {
    throw new Error('dist/index.html is missing: run `trunk build --release` first (scripts/test.sh does)');
  }
  const browser = await launch();
  const { server, url } = await serve(DIST);
  const close = async () => {
    await browser.close();
    await new Promise((ok) => server.close(ok));
  };
  return { browser, server, url, close };
}

/**
 * Makes `page` record its first chart: the frame after the memory chart's canvas appears,
 * as `window.__firstChart` (ms since navigation) and the performance marks `canvas` and
 * `first-chart`. Call before `goto`; the page benchmarks measure with it.
 */
export function markFirstChart(page) {
  return page.addInitScript(() => {
    new MutationObserver((_, obs) => {
      if (document.querySelector('#memory-chart canvas')) {
        obs.disconnect();
        performance.mark('canvas');
        requestAnimationFrame(() => {
          performance.mark('first-chart');
          window.__firstChart = performance.now();
        });
      }
    }).observe(document, { childList: true, subtree: true });
  });
}

/**
 * Opens the planner in a new page and waits for the first chart; collects console errors,
 * page errors and every request URL.
 */
export async function openPlanner(browser, url, { colorScheme = 'light', viewport = { width: 1280, height: 900 } } = {}) {
  const page = await browser.newPage({ colorScheme, viewport });
  const problems = [];
  const requests = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(url);
  await waitForChart(page).catch((e) => {
    e.message += `\nconsole: ${JSON.stringify(problems)}`;
    throw e;
  });
  return { page, problems, requests };
}

/**
 * Waits until ECharts has drawn the memory chart and the parts built after it (the
 * `below_fold` chunk's table and control groups) have replaced their placeholders.
 */
export async function waitForChart(page) {
  try {
    await page.waitForFunction(() => {
      const el = document.getElementById('memory-chart');
      return el && window.echarts && window.echarts.getInstanceByDom(el) && el.querySelector('canvas') && !document.querySelector('.pending-part');
    }, null, { timeout: 15000 });
  } catch (e) {
    // Say which part never came, so a rare timeout can be traced from the CI log alone.
    const state = await page
      .evaluate(() => ({
        echarts: Boolean(window.echarts),
        echartsSettled: window.headroomEcharts,
        chartElement: Boolean(document.getElementById('memory-chart')),
        canvas: Boolean(document.querySelector('#memory-chart canvas')),
        pendingParts: [...document.querySelectorAll('.pending-part')].map((el) => el.className),
        errors: [...document.querySelectorAll('.field-error')].map((el) => el.textContent),
        visibility: document.visibilityState,
      }))
      .catch((err) => `page state unreadable: ${err.message}`);
    e.message += `\npage state: ${JSON.stringify(state)}`;
    throw e;
  }
}

/** Sets an input's value and fires `input` (and `change`), as a user would. */
export async function setValue(page, selector, value) {
  await page.locator(selector).evaluate((el, v) => {
    el.value = String(v);
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
  }, value);
}

/** Text of the row of one component's size in the table. */
export function componentSize(page, component) {
  return page.locator(`tr.component[data-component="${component}"] td.bytes`).innerText();
}

/// The catalogue key of the model the page shows ('custom' for a pasted config).
export function modelKey(page) {
  return page.locator('#model').getAttribute('data-key');
}

/// Picks a model the way a user does: type into the search box, then Enter on the first match.
export async function chooseModel(page, query) {
  await page.locator('#model').fill(query);
  await page.locator('#model-list [role=option]').first().waitFor();
  await page.locator('#model').press('Enter');
}

/** A page that records console errors, page errors, dialogs, requests and CSP violations. */
export async function watchedPage(context) {
  const page = await context.newPage();
  const problems = [];
  const requests = [];
  page.on('console', (m) => {
    if (m.type() === 'error' || /Content.Security.Policy|Refused to/i.test(m.text())) problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('dialog', (d) => { problems.push(`dialog: ${d.message()}`); d.dismiss(); });
  page.on('request', (r) => requests.push(r.url()));
  await page.addInitScript(() => {
    window.__csp = [];
    document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
    // Trunk's loader announces the instance's exports (its memory among them).
    addEventListener('TrunkApplicationStarted', (e) => { window.__wasm = e.detail.wasm; });
  });
  return { page, problems, requests };
}

/** A size as the page prints it (`12.3 GiB`, `512 MiB`, `64 KiB`, `8 B`) in GiB; NaN when none. */
export function gib(text) {
  const m = text.match(/([\d.]+)\s*(GiB|MiB|KiB|B)\b/);
  const scale = { GiB: 1, MiB: 2 ** -10, KiB: 2 ** -20, B: 2 ** -30 };
  return m ? Number(m[1]) * scale[m[2]] : NaN;
}

/** Screenshots of the page at 1440 and 390 px, light and dark, as `ARTIFACTS/{name}-{width}-{scheme}.png` (the phone width full-page). */
export async function shots(page, name) {
  for (const [scheme, width] of [['light', 1440], ['dark', 1440], ['light', 390], ['dark', 390]]) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.setViewportSize({ width, height: 1100 });
    // Let the charts finish their transition.
    await page.waitForTimeout(1200);
    await page.screenshot({ path: join(ARTIFACTS, `${name}-${width}-${scheme}.png`), fullPage: width === 390 });
  }
}
