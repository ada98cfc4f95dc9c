import { launch, markFirstChart } from '../tests/e2e/browser.mjs';
import { serve } from '../tests/e2e/static-server.mjs';
const dirs = process.argv.slice(2, 4); const loads = Number(process.argv[4] ?? 15);
const browser = await launch(); const servers = await Promise.all(dirs.map(d => serve('/work/main/' + d)));
const res = dirs.map(() => []);
for (let i = 0; i < loads; i++) for (let k = 0; k < dirs.length; k++) {
  const ctx = await browser.newContext({ viewport: { width: 1280, height: 900 } }); const page = await ctx.newPage();
  await markFirstChart(page); await page.goto(servers[k].url); await page.waitForFunction(() => window.__firstChart !== undefined, null, { timeout: 20000 });
  res[k].push(await page.evaluate(() => window.__firstChart)); await ctx.close();
}
const med = a => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
dirs.forEach((d, k) => console.log(d, 'median', med(res[k]).toFixed(0), res[k].map(x => x.toFixed(0)).join(' ')));
await browser.close(); servers.forEach(s => s.server.close());
