// The main thread's long tasks of one cold load, up to `--after` ms after the first chart
// (developer tool, not a test): CPU throttled like Lighthouse's mobile run (×4, `--cpu`) on
// a 390 × 844 viewport (`--width`), each task ≥ 50 ms with the page's functions that took
// most of it (inclusive time, from a CPU profile). Use a build with names:
//   HEADROOM_WASM_NAMES=1 trunk build --release --dist dist-prof
//   HEADROOM_DIST=dist-prof node scripts/long-tasks.mjs [--cpu 4] [--width 390] [--after 6000] [--query ?m=…]
import { markFirstChart, start } from '../tests/e2e/browser.mjs';

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const cpu = Number(arg('cpu', 4));
const width = Number(arg('width', 390));
const after = Number(arg('after', 6000));
const env = await start();
try {
  const context = await env.browser.newContext({ viewport: { width, height: 844 } });
  const page = await context.newPage();
  await markFirstChart(page);
  await page.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => window.__longTasks.push(...list.getEntries().map((e) => ({ start: e.startTime, duration: e.duration })))).observe({ type: 'longtask', buffered: true });
  });
  const cdp = await context.newCDPSession(page);
  await cdp.send('Emulation.setCPUThrottlingRate', { rate: cpu });
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
  await cdp.send('Profiler.start');
  const t0 = Date.now();
  await page.goto(env.url + (arg('query', '') ?? ''));
  await page.waitForFunction(() => window.__firstChart !== undefined, null, { timeout: 60000 });
  await page.waitForTimeout(after);
  const { profile } = await cdp.send('Profiler.stop');
  const { tasks, firstChart, nowAtEnd } = await page.evaluate(() => ({ tasks: window.__longTasks, firstChart: window.__firstChart, nowAtEnd: performance.now() }));
  // Profile time (µs) → page time (ms): the profile ends when `Profiler.stop` answered, about
  // when `nowAtEnd` was read.
  const profileEnd = profile.endTime;
  const toPage = (us) => nowAtEnd - (profileEnd - us) / 1000;
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  let t = profile.startTime;
  const samples = profile.samples.map((id, i) => {
    t += profile.timeDeltas[i];
    return { id, at: toPage(t) };
  });
  console.log(`CPU ×${cpu}, ${width} px: first chart at ${firstChart.toFixed(0)} ms (${(Date.now() - t0) / 1000} s wall)`);
  let blocking = 0;
  for (const task of tasks) {
    blocking += Math.max(0, task.duration - 50);
    const inside = samples.filter((s) => s.at >= task.start && s.at <= task.start + task.duration);
    const count = new Map();
    for (const s of inside) {
      const seen = new Set();
      for (let id = s.id; id !== undefined; id = parent.get(id)) {
        const f = byId.get(id).callFrame;
        const name = f.functionName || '(anon)';
        // The page's own functions (a names build: `headroom::…`), ECharts' entry points and
        // the WASM's compilation; not the executor's and bindings' frames every task has.
        if (!/^headroom::(?!main|ui::mount|ui::lazy_view)|setOption|^init$|instantiate|compile|^echarts/i.test(name) || seen.has(name)) continue;
        seen.add(name);
        count.set(name, (count.get(name) ?? 0) + 1);
      }
    }
    // Self time: the function each sample was in.
    const self = new Map();
    for (const s of inside) {
      const name = byId.get(s.id).callFrame.functionName || '(anon)';
      self.set(name, (self.get(name) ?? 0) + 1);
    }
    const selfTop = [...self.entries()].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([n, c]) => `${Math.round((100 * c) / Math.max(1, inside.length))}% ${n.slice(0, 60)}`);
    const top = [...count.entries()].sort((a, b) => b[1] - a[1]).slice(0, 10).map(([n, c]) => `${Math.round((100 * c) / Math.max(1, inside.length))}% ${n.slice(0, 90)}`);
    console.log(`${task.start.toFixed(0).padStart(6)} +${task.duration.toFixed(0).padStart(4)} ms${task.start > firstChart ? ' (after the first chart)' : ''}`);
    for (const line of top) console.log(`          ${line}`);
    console.log(`          self: ${selfTop.join(' · ')}`);
  }
  console.log(`blocking (sum of each task's time over 50 ms): ${blocking.toFixed(0)} ms`);
} finally {
  await env.close();
}
