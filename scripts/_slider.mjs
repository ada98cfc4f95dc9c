import { start, openPlanner } from '../tests/e2e/browser.mjs';
const env = await start();
const { page } = await openPlanner(env.browser, env.url);
const r = await page.evaluate(async (n) => {
  const slider = document.getElementById('micro-batch-range');
  const chart = window.echarts.getInstanceByDom(document.getElementById('memory-chart'));
  const original = chart.setOption.bind(chart);
  let rec = null;
  chart.setOption = (...args) => { const a = performance.now(); const r = original(...args); rec = [a, performance.now()]; return r; };
  const ours = [], theirs = [], total = [];
  for (let i = 0; i < n; i++) {
    slider.value = String(i % 2 === 0 ? 3 : 2);
    rec = null; const t0 = performance.now();
    slider.dispatchEvent(new Event('input', { bubbles: true }));
    await new Promise(r => setTimeout(r, 0));
    if (rec) { ours.push(rec[0] - t0); theirs.push(rec[1] - rec[0]); total.push(rec[1] - t0); }
    await new Promise((r) => setTimeout(r, 300));
  }
  return { ours, theirs, total };
}, 40);
const q = (a, p) => { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(2); };
for (const k of ['ours', 'theirs', 'total']) console.log(k, 'median', q(r[k], 0.5), 'p90', q(r[k], 0.9), 'n', r[k].length);
await env.close();
