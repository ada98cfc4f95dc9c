// Interleaved A/B of the first chart between two builds (developer benchmark): loads each
// build's page in turn, each in a fresh context, alternating which goes first, and prints
// each build's median and every load. On a noisy machine this is the fair way to compare
// two builds; bench-page.mjs measures one.
//   node scripts/bench-ab.mjs dist dist-new [loads=15] [query, e.g. '?m=gpt2'] [--slow]
// --slow throttles the network as Chrome DevTools' "Fast 4G" preset does (9 Mbit/s down,
// 1.5 Mbit/s up, 60 ms latency), where the order of downloads matters more than on localhost.
// (builds are folders under the repository root; `trunk build --release --dist dist-new`)
import { join } from 'node:path';
import { serve } from '../tests/e2e/static-server.mjs';
import { launch, markFirstChart, ROOT } from '../tests/e2e/browser.mjs';
const args = process.argv.slice(2).filter((a) => a !== '--slow');
const slow = process.argv.includes('--slow');
const dists = args.slice(0, 2);
const N = Number(args[2] ?? 15);
const query = args[3] ?? '';
const browser = await launch();
const servers = await Promise.all(dists.map((d) => serve(join(ROOT, d))));
const times = dists.map(() => []);
for (let i = 0; i < N; i++) {
  for (let k = 0; k < dists.length; k++) {
    const j = (i % 2 === 0) ? k : dists.length - 1 - k;
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    if (slow) {
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.emulateNetworkConditions', { offline: false, latency: 60, downloadThroughput: (9e6 / 8) * 0.9, uploadThroughput: (1.5e6 / 8) * 0.9 });
    }
    await markFirstChart(page);
    await page.goto(servers[j].url + query);
    await page.waitForFunction(() => window.__firstChart !== undefined, null, { timeout: 15000 });
    times[j].push(await page.evaluate(() => window.__firstChart));
    await context.close();
  }
}
const med = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
dists.forEach((d, j) => console.log(d, 'median', med(times[j]).toFixed(0), 'all', times[j].map((t) => t.toFixed(0)).join(' ')));
await browser.close();
for (const s of servers) s.server.close();
