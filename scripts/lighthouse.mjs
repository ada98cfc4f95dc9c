// Lighthouse on the built page (dist/), mobile and desktop, served by the project's own gzip
// static server (tests/e2e/static-server.mjs) and run in Debian's Chromium.
//   npm install --no-save lighthouse@12.8.2   (once; not a dependency of the test suite)
//   trunk build --release && node scripts/lighthouse.mjs [RUNS]
// Prints each run's category scores and the metrics behind Performance (FCP, LCP, TBT, CLS,
// Speed Index), then the median Performance score per form factor. Lighthouse's mobile run
// simulates a slow 4G link and a 4× slower CPU (its defaults); desktop uses its desktop preset.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, DIST } from '../tests/e2e/browser.mjs';
import { serve } from '../tests/e2e/static-server.mjs';

if (!existsSync(join(ROOT, 'node_modules', 'lighthouse'))) {
  console.error('lighthouse is not installed: npm install --no-save lighthouse@12.8.2');
  process.exit(2);
}
const { default: lighthouse } = await import('lighthouse');
const { default: desktopConfig } = await import('lighthouse/core/config/desktop-config.js');
const chromeLauncher = await import('chrome-launcher');

const runs = Number(process.argv[2] ?? 3);
const { server, url } = await serve(DIST);
const chrome = await chromeLauncher.launch({ chromePath: process.env.CHROMIUM ?? '/usr/bin/chromium', chromeFlags: ['--headless=new', '--no-sandbox', '--disable-gpu'] });
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const summary = {};
try {
  for (const formFactor of (process.env.LH_FORM ? [process.env.LH_FORM] : ["mobile", "desktop"])) {
    const scores = [];
    for (let i = 0; i < runs; i++) {
      const options = { port: chrome.port, output: 'json', logLevel: 'error', onlyCategories: ['performance', 'accessibility', 'best-practices', 'seo'] };
      const result = await lighthouse(url, options, formFactor === 'desktop' ? desktopConfig : undefined);
      const { categories, audits } = result.lhr;
      const score = (c) => Math.round(categories[c].score * 100);
      const ms = (a) => Math.round(audits[a].numericValue);
      scores.push(score('performance'));
      console.log(
        `${formFactor} #${i + 1}: performance ${score('performance')} · accessibility ${score('accessibility')} · best practices ${score('best-practices')} · SEO ${score('seo')}` +
          ` | FCP ${ms('first-contentful-paint')} ms · LCP ${ms('largest-contentful-paint')} ms · TBT ${ms('total-blocking-time')} ms · CLS ${audits['cumulative-layout-shift'].numericValue.toFixed(3)} · SI ${ms('speed-index')} ms`,
      );
      const failing = Object.values(audits).filter((a) => a.score !== null && a.score < 0.9 && a.scoreDisplayMode !== 'informative' && a.scoreDisplayMode !== 'notApplicable');
      if (i === 0) for (const a of failing) console.log(`  below 0.9: ${a.id} (${a.displayValue ?? a.score})`);
      {
        // What the LCP is (its element and its phases) and the main thread's long tasks.
        const lcp = audits['largest-contentful-paint-element']?.details?.items ?? [];
        const node = lcp[0]?.items?.[0]?.node;
        if (node) console.log(`  LCP element: ${node.selector} "${(node.nodeLabel ?? '').slice(0, 80)}"`);
        else console.log('  LCP element: no longer in the page (the static first paint, replaced by the app)');
        for (const phase of lcp[1]?.items ?? []) console.log(`    ${phase.phase}: ${Math.round(phase.timing)} ms`);
        for (const shift of audits['layout-shifts']?.details?.items ?? []) console.log(`  layout shift ${shift.score?.toFixed(3)}: ${shift.node?.selector ?? ''}`);
        const tasks = audits['long-tasks']?.details?.items ?? [];
        console.log(`  long tasks: ${tasks.map((t) => `${Math.round(t.startTime)}+${Math.round(t.duration)} ms ${String(t.url).split('/').pop()}`).join(', ')}`);
      }
    }
    summary[formFactor] = median(scores);
  }
} finally {
  await chrome.kill();
  server.close();
}
console.log(`median performance: mobile ${summary.mobile}, desktop ${summary.desktop}`);
