// Where a cold load's main-thread time goes before the first chart (developer tool): records
// a Chrome trace of one load per run and prints the top-level tasks' events by kind, in
// milliseconds from navigation start, up to the frame after the memory chart's canvas.
//   HEADROOM_DIST=dist node scripts/trace-load.mjs [runs=3] [--cpu 4] [--width 390] [--after 5000]
// `--cpu` slows the CPU as Lighthouse's mobile run does (×4), `--width` sets the viewport
// (390 × 844 for a phone), `--after` keeps tracing that long after the first chart, to see the
// tasks that follow it (Total Blocking Time counts those too).
import { markFirstChart, start } from '../tests/e2e/browser.mjs';

const option = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const RUNS = Number(process.argv[2]?.startsWith('--') ? 3 : (process.argv[2] ?? 3));
const CPU = option('cpu', 1);
const WIDTH = option('width', 1280);
const AFTER = option('after', 0);
const env = await start();
try {
  for (let run = 0; run < RUNS; run++) {
    const context = await env.browser.newContext({ viewport: { width: WIDTH, height: WIDTH < 600 ? 844 : 900 } });
    const page = await context.newPage();
    await markFirstChart(page);
    const cdp = await context.newCDPSession(page);
    if (CPU > 1) await cdp.send('Emulation.setCPUThrottlingRate', { rate: CPU });
    const events = [];
    cdp.on('Tracing.dataCollected', (d) => events.push(...d.value));
    const done = new Promise((ok) => cdp.once('Tracing.tracingComplete', ok));
    await cdp.send('Tracing.start', { categories: 'devtools.timeline,v8.execute,blink.user_timing,disabled-by-default-devtools.timeline,v8', transferMode: 'ReportEvents' });
    await page.goto(env.url);
    await page.waitForFunction(() => window.__firstChart !== undefined, null, { timeout: 60000 });
    if (AFTER > 0) await page.waitForTimeout(AFTER);
    await cdp.send('Tracing.end');
    await done;
    const nav = events.find((e) => e.name === 'navigationStart' || e.name === 'NavigationStartToLoad' || (e.name === 'markAsMainFrame')) ?? events.find((e) => e.name === 'TracingStartedInBrowser');
    const navStart = events.filter((e) => e.name === 'navigationStart').map((e) => e.ts).sort((a, b) => b - a)[0] ?? nav.ts;
    const mark = (n) => (events.find((e) => e.name === n && e.cat.includes('user_timing'))?.ts - navStart) / 1000;
    const end = mark('first-chart') + AFTER;
    const main = events.filter((e) => e.name === 'RunTask' && e.ph === 'X' && e.ts >= navStart && (e.ts - navStart) / 1000 <= end);
    // The renderer's main thread: the one that parsed the page's HTML.
    const tid = events.find((e) => e.name === 'ParseHTML' && e.args?.beginData?.url?.startsWith(env.url))?.tid ?? mode(main.map((e) => e.tid));
    const kinds = new Map();
    const rows = [];
    for (const task of main.filter((e) => e.tid === tid && e.dur > 2000)) {
      const inner = events.filter((e) => e.tid === tid && e.ph === 'X' && e.ts >= task.ts && e.ts + (e.dur ?? 0) <= task.ts + task.dur && e !== task && e.dur > 1000);
      const top = inner.sort((a, b) => b.dur - a.dur)[0];
      const label = top ? `${top.name}${top.args?.data?.url ? ' ' + top.args.data.url.split('/').pop() : ''}${top.args?.data?.functionName ? ' ' + top.args.data.functionName : ''}` : 'task';
      rows.push(`${((task.ts - navStart) / 1000).toFixed(0).padStart(5)} +${(task.dur / 1000).toFixed(1).padStart(6)} ms  ${label.slice(0, 90)}`);
      // A long task: its events of 2 ms or more, one level down from the top event.
      if (task.dur > 40000 && top) {
        const children = inner.filter((e) => e !== top && e.ts >= top.ts && e.ts + e.dur <= top.ts + top.dur && e.dur > 2000 && !inner.some((p) => p !== top && p !== e && p.ts <= e.ts && p.ts + p.dur >= e.ts + e.dur && p.dur > e.dur && p.ts >= top.ts && p.ts + p.dur <= top.ts + top.dur));
        for (const c of children.sort((a, b) => a.ts - b.ts)) rows.push(`        ${((c.ts - navStart) / 1000).toFixed(0).padStart(5)} +${(c.dur / 1000).toFixed(1).padStart(6)} ms  ${c.name} ${c.args?.data?.functionName ?? ''} ${(c.args?.data?.url ?? '').split('/').pop()}`);
      }
      kinds.set(label.split(' ')[0], (kinds.get(label.split(' ')[0]) ?? 0) + task.dur / 1000);
    }
    const blocking = main.filter((e) => e.tid === tid).reduce((a, e) => a + Math.max(0, e.dur / 1000 - 50), 0);
    console.log(`run ${run + 1}: canvas at ${mark('canvas').toFixed(0)} ms, first chart at ${(end - AFTER).toFixed(0)} ms; blocking time (each task over 50 ms) up to ${end.toFixed(0)} ms: ${blocking.toFixed(0)} ms`);
    rows.forEach((r) => console.log('  ' + r));
    await context.close();
  }
} finally {
  await env.close();
}

function mode(xs) {
  const c = new Map();
  xs.forEach((x) => c.set(x, (c.get(x) ?? 0) + 1));
  return [...c.entries()].sort((a, b) => b[1] - a[1])[0][0];
}
