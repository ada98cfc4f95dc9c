// CPU profile of the planner page (developer tool, not a test): `load` profiles a cold load
// up to the first chart, `slider` 20 micro-batch slider moves. Prints the functions with the
// most self time. Use a build with names: HEADROOM_WASM_NAMES=1 trunk build --release --dist dist-prof,
// then HEADROOM_DIST=dist-prof node scripts/profile-page.mjs slider
import { start, openPlanner } from '../tests/e2e/browser.mjs';

const mode = process.argv[2] ?? 'slider';
const env = await start();
try {
  let page;
  let cdp;
  if (mode === 'load') {
    page = await env.browser.newPage({ viewport: { width: 1280, height: 900 } });
    cdp = await page.context().newCDPSession(page);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
    await cdp.send('Profiler.start');
    await page.goto(env.url);
    await page.waitForFunction(() => document.querySelector('#memory-chart canvas'));
    await page.waitForTimeout(50);
  } else {
    ({ page } = await openPlanner(env.browser, env.url));
    await page.waitForTimeout(500);
    cdp = await page.context().newCDPSession(page);
    await cdp.send('Profiler.enable');
    await cdp.send('Profiler.setSamplingInterval', { interval: 100 });
    await cdp.send('Profiler.start');
    await page.evaluate(async () => {
      const slider = document.getElementById('micro-batch-range');
      for (let i = 0; i < 20; i++) {
        slider.value = String(i % 2 === 0 ? 3 : 2);
        slider.dispatchEvent(new Event('input', { bubbles: true }));
        await new Promise((r) => setTimeout(r, 300));
      }
    });
  }
  const { profile } = await cdp.send('Profiler.stop');
  const self = new Map();
  const dt = new Map();
  profile.samples.forEach((id, i) => dt.set(id, (dt.get(id) ?? 0) + (profile.timeDeltas[i + 1] ?? 0)));
  for (const node of profile.nodes) {
    const name = `${node.callFrame.functionName || '(anon)'} ${node.callFrame.url.split('/').pop()}`;
    self.set(name, (self.get(name) ?? 0) + (dt.get(node.id) ?? 0));
  }
  const rows = [...self.entries()].filter(([n]) => !n.startsWith('(idle)')).sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((a, [, t]) => a + t, 0);
  console.log(`busy ${(total / 1000).toFixed(1)} ms`);
  for (const [name, t] of rows.slice(0, Number(process.argv[3] ?? 40))) console.log(`${(t / 1000).toFixed(2).padStart(8)} ms  ${name.slice(0, 140)}`);
} finally {
  await env.close();
}
