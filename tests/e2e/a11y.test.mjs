// Accessibility and state that cannot mislead (issue 20, items 6 and 8), as a user meets them:
// axe-core (injected from node_modules, no network) on the Planner, Strategy, Compare and the
// embed view, light and dark, with zero violations of any impact; the keyboard path to the
// model search; sliders that say their value; focus that shows; a refused paste that marks the
// verdict as the last valid plan; the verdict kept in view while the parallelism controls are
// edited, at 1440 and 390 px; the step timeline's tooltip with units.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS, ROOT, openPlanner, setValue, start } from './browser.mjs';

const AXE = readFileSync(join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');
const SIZES = { desktop: { width: 1440, height: 900 }, phone: { width: 390, height: 844 } };

let env;
before(async () => {
  env = await start();
  mkdirSync(ARTIFACTS, { recursive: true });
});
after(async () => {
  await env?.close();
});

/** Runs axe-core on the page as it is (every rule axe runs by default, every impact). */
async function axe(page) {
  if (!(await page.evaluate(() => Boolean(window.axe)))) {
    // The page's CSP forbids inline scripts; evaluate() runs through the debugger protocol.
    await page.evaluate(AXE);
  }
  const result = await page.evaluate(async () => {
    const r = await window.axe.run(document, { resultTypes: ['violations'] });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => `${n.target.join(' ')}: ${n.failureSummary.split('\n').slice(0, 2).join(' ')}`) }));
  });
  return result;
}

/** Readable list of violations, for the assertion message. */
const describe = (violations) => violations.map((v) => `${v.id} (${v.impact}) ×${v.nodes.length}\n    ${v.nodes.slice(0, 4).join('\n    ')}`).join('\n');

/** Opens a view and waits until it is drawn. */
async function openView(view, colorScheme) {
  if (view === 'embed') {
    const page = await env.browser.newPage({ colorScheme, viewport: SIZES.desktop });
    await page.goto(env.url + '?embed=1&v=1&m=llama-3-8b&b=8');
    await page.waitForFunction(() => {
      const el = document.getElementById('memory-chart');
      return el && window.echarts && window.echarts.getInstanceByDom(el) && el.querySelector('canvas');
    }, null, { timeout: 15000 });
    return page;
  }
  const { page } = await openPlanner(env.browser, env.url, { colorScheme, viewport: SIZES.desktop });
  // The step timeline is drawn after the first chart, once it is near the viewport: scroll to
  // it and wait, so axe sees the whole page.
  await page.locator('#timeline-chart').scrollIntoViewIfNeeded();
  await page.waitForFunction(() => {
    const el = document.getElementById('timeline-chart');
    return el && window.echarts.getInstanceByDom(el);
  }, null, { timeout: 15000 });
  await page.locator('#cheapest-fix:not(.pending)').waitFor({ timeout: 15000 });
  if (view === 'strategy') {
    await page.locator('#tab-strategy').click();
    await page.waitForSelector('#panel-strategy #flowchart');
    await page.waitForFunction(() => document.querySelectorAll('#flowchart [role=button]').length > 0);
  } else if (view === 'compare') {
    await page.locator('#tab-compare').click();
    await page.waitForFunction(() => {
      const el = document.getElementById('compare-chart');
      return el && window.echarts.getInstanceByDom(el) && el.querySelector('canvas');
    }, null, { timeout: 15000 });
  }
  return page;
}

for (const view of ['planner', 'strategy', 'compare', 'embed']) {
  for (const colorScheme of ['light', 'dark']) {
    test(`axe-core: no violation on ${view}, ${colorScheme}`, async () => {
      const page = await openView(view, colorScheme);
      const violations = await axe(page);
      assert.equal(violations.length, 0, `${view} ${colorScheme}:\n${describe(violations)}`);
      await page.close();
    });
  }
}

test('one main landmark holds the views; no tab panel is a main', async () => {
  const page = await openView('planner', 'light');
  assert.equal(await page.locator('main').count(), 1);
  assert.equal(await page.locator('main[role]').count(), 0);
  assert.equal(await page.locator('main #panel-planner[role=tabpanel]').count(), 1);
  await page.locator('#tab-strategy').click();
  await page.waitForSelector('main #panel-strategy[role=tabpanel] #flowchart');
  assert.equal(await page.locator('main').count(), 1);
  // The flowchart is a named group (its boxes are buttons), not an image holding buttons.
  assert.equal(await page.locator('#flowchart').getAttribute('role'), 'group');
  assert.equal(await page.locator('svg[role=img] [tabindex]').count(), 0);
  // Each button's name starts with the text it shows.
  const buttons = await page.locator('#flowchart [role=button]').evaluateAll((els) =>
    els.map((el) => ({ label: el.getAttribute('aria-label'), text: [...el.querySelectorAll('text')].map((t) => t.textContent).join('').replace(/\s+/g, ' ').trim() })),
  );
  assert.ok(buttons.length >= 3, `${buttons.length} buttons`);
  for (const { label, text } of buttons) {
    assert.ok(label.startsWith(text), `"${label}" does not start with "${text}"`);
  }
  await page.close();
});

test('the keyboard reaches the model search in at most 3 Tab presses, through the skip link', async () => {
  const page = await openView('planner', 'light');
  // As a keyboard user arriving at the page: Tab to the skip link, Enter, and the focus is in
  // the model search.
  let presses = 0;
  await page.keyboard.press('Tab');
  presses += 1;
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Skip to controls');
  // The link shows while focused (it waits off-screen otherwise).
  const box = await page.locator('.skip-link').boundingBox();
  assert.ok(box && box.y >= 0, `skip link at ${JSON.stringify(box)}`);
  await page.screenshot({ path: join(ARTIFACTS, 'a11y-skip-link.png') });
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.activeElement.id === 'model', null, { timeout: 2000 });
  assert.ok(presses <= 3, `${presses} Tab presses`);
  // Typing searches straight away.
  await page.keyboard.type('qwen');
  await page.locator('#model-list [role=option]').first().waitFor();
  await page.keyboard.press('Escape');
  // From another view too: the link is one Shift+Tab before the tabs, and it brings the
  // Planner back.
  await page.locator('#tab-compare').click();
  await page.waitForSelector('#panel-compare');
  await page.keyboard.press('Shift+Tab');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'Skip to controls');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.activeElement.id === 'model', null, { timeout: 2000 });
  assert.ok(await page.locator('#panel-planner').isVisible());
  await page.close();
});

test('sliders say their value, not their position', async () => {
  const page = await openView('planner', 'light');
  await page.locator('#micro-batch-range').focus();
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.getElementById('micro-batch').value === '4');
  const slider = page.locator('#micro-batch-range');
  assert.equal(await slider.inputValue(), '2');
  assert.equal(await slider.getAttribute('aria-valuetext'), '4');
  // (Chromium's DevTools accessibility tree, v156, reports no aria-valuetext even for a plain
  // ARIA slider, so the attribute itself is what is checked; axe checks it is allowed.)
  await setValue(page, '#dp', 8);
  assert.equal(await page.locator('#dp-range').getAttribute('aria-valuetext'), '8');
  await page.close();
});

for (const [view, least] of [['planner', 20], ['strategy', 8], ['compare', 8]]) {
  test(`focus is visible on every control the keyboard reaches (${view})`, async () => {
    const page = await openView(view, 'light');
    if (view === 'planner') await page.evaluate(() => document.activeElement?.blur());
    const unseen = [];
    const seen = new Set();
    for (let i = 0; i < 60; i++) {
      await page.keyboard.press('Tab');
      const info = await page.evaluate(() => {
        const el = document.activeElement;
        if (!el || el === document.body) return null;
        const s = getComputedStyle(el);
        const outline = s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0;
        const shadow = s.boxShadow && s.boxShadow !== 'none';
        const name = `${el.tagName.toLowerCase()}#${el.id || ''}.${[...el.classList].join('.')}[${el.getAttribute('data-node') || el.getAttribute('aria-label') || ''}]`;
        return { name, visible: outline || shadow };
      });
      if (!info || seen.has(info.name)) continue;
      seen.add(info.name);
      if (!info.visible) unseen.push(info.name);
      if (info.name.includes('[step-2]')) await page.locator('#flowchart').screenshot({ path: join(ARTIFACTS, 'a11y-focus-flowchart-node.png') });
    }
    assert.ok(seen.size >= least, `only ${seen.size} stops: ${[...seen].join(', ')}`);
    assert.deepEqual(unseen, []);
    await page.close();
  });
}

/** Pastes a config that is refused, on a page at `size` in `colorScheme`. */
async function refusedPaste(size, colorScheme) {
  const { page, problems } = await openPlanner(env.browser, env.url, { colorScheme, viewport: SIZES[size] });
  const verdict = page.locator('#verdict');
  assert.equal(await page.locator('#last-valid').count(), 0);
  assert.doesNotMatch(await verdict.getAttribute('class'), /outdated/);
  const before = await verdict.locator('.headline').innerText();
  await page.locator('details.paste summary').click();
  await page.locator('#hf-config').fill('{"model_type": "llama", "hidden_size": 0}');
  await page.locator('#hf-config-error').waitFor({ state: 'visible' });
  await page.locator('#last-valid').waitFor();
  return { page, problems, verdict, before };
}

for (const size of ['desktop', 'phone']) {
  for (const colorScheme of ['light', 'dark']) {
    test(`a refused paste marks the verdict as the last valid plan (${size}, ${colorScheme})`, async () => {
      const { page, problems, verdict, before } = await refusedPaste(size, colorScheme);
      assert.match(await verdict.getAttribute('class'), /outdated/);
      assert.equal(await page.locator('#last-valid').innerText(), 'Last valid plan — not your current input');
      // The marker is inside the live region: a screen reader hears it with the verdict.
      assert.match(await verdict.innerText(), /^Last valid plan — not your current input\n/);
      assert.equal(await verdict.locator('.headline').innerText(), before);
      // Not in the answer's colours: the headline is muted, the border dashed.
      const style = await verdict.evaluate((el) => ({ border: getComputedStyle(el).borderTopStyle }));
      assert.equal(style.border, 'dashed');
      assert.ok(await page.locator('#paste-rejected').isVisible());
      const w = SIZES[size].width;
      await page.screenshot({ path: join(ARTIFACTS, `a11y-refused-paste-${w}-${colorScheme}.png`) });
      // Still marked and still in view while the parallelism controls are edited.
      await page.locator('#dp').scrollIntoViewIfNeeded();
      await setValue(page, '#dp', 2);
      await page.waitForFunction(() => document.getElementById('verdict').classList.contains('stuck'));
      const box = await verdict.boundingBox();
      assert.ok(box.y >= -1 && box.y < 5, `verdict at y=${box.y}`);
      assert.ok(await page.locator('#last-valid').isVisible());
      await page.screenshot({ path: join(ARTIFACTS, `a11y-refused-paste-sticky-${w}-${colorScheme}.png`) });
      // The marked, stuck verdict and the messages keep the page at zero violations.
      const violations = await axe(page);
      assert.equal(violations.length, 0, describe(violations));
      // A valid paste clears the mark.
      await page.locator('#hf-config').fill(JSON.stringify({ model_type: 'gpt2', n_embd: 768, n_layer: 12, n_head: 12, vocab_size: 50257, n_positions: 1024 }));
      await page.locator('#last-valid').waitFor({ state: 'detached' });
      assert.doesNotMatch(await verdict.getAttribute('class'), /outdated/);
      assert.deepEqual(problems, []);
      await page.close();
    });
  }
}

test('an invalid field marks the verdict too, and a fix removes the mark', async () => {
  const { page, problems } = await openPlanner(env.browser, env.url, { viewport: SIZES.desktop });
  await setValue(page, '#seq-len', 0);
  await page.locator('#last-valid').waitFor();
  assert.match(await page.locator('#verdict').getAttribute('class'), /outdated/);
  await setValue(page, '#seq-len', 2048);
  await page.locator('#last-valid').waitFor({ state: 'detached' });
  assert.deepEqual(problems, []);
  await page.close();
});

for (const size of ['desktop', 'phone']) {
  test(`the verdict stays in view, compact, while the parallelism controls are edited (${size})`, async () => {
    const { page, problems } = await openPlanner(env.browser, env.url, { viewport: SIZES[size] });
    const verdict = page.locator('#verdict');
    const full = (await verdict.boundingBox()).height;
    assert.ok(await verdict.locator('.details').isVisible());
    await page.locator('#tp').scrollIntoViewIfNeeded();
    await page.locator('#tp').evaluate((el) => el.scrollIntoView({ block: 'center' }));
    await setValue(page, '#tp', 2);
    await page.waitForFunction(() => document.getElementById('verdict').classList.contains('stuck'));
    const box = await verdict.boundingBox();
    assert.ok(box.y >= -1 && box.y < 5, `verdict at y=${box.y}`);
    assert.ok(box.height < full, `compact: ${box.height} < ${full}`);
    assert.equal(await verdict.locator('.details').isVisible(), false);
    // The control being edited is not hidden under it.
    const tp = await page.locator('#tp').boundingBox();
    assert.ok(tp.y > box.y + box.height, `tp at ${tp.y}, verdict to ${box.y + box.height}`);
    await page.screenshot({ path: join(ARTIFACTS, `a11y-sticky-verdict-${SIZES[size].width}.png`) });
    // Back at the top it is whole again.
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForFunction(() => !document.getElementById('verdict').classList.contains('stuck'));
    assert.ok(await verdict.locator('.details').isVisible());
    assert.deepEqual(problems, []);
    await page.close();
  });
}

test('the step timeline tooltip gives every component with its unit; gradients grow through backward', async () => {
  const page = await openView('planner', 'light');
  await page.locator('#timeline-chart').scrollIntoViewIfNeeded();
  // Point at the middle of the blocks' backward, as hovering there does.
  const labels = await page.evaluate(() => window.echarts.getInstanceByDom(document.getElementById('timeline-chart')).getOption().xAxis[0].data);
  const backward = labels.map((l, i) => [l, i]).filter(([l]) => /^backward L/.test(l));
  assert.ok(backward.length >= 8, labels.join(', '));
  const tip = async (index) => {
    await page.evaluate((i) => window.echarts.getInstanceByDom(document.getElementById('timeline-chart')).dispatchAction({ type: 'showTip', seriesIndex: 0, dataIndex: i }), index);
    const tooltip = page.locator('#timeline-chart div').filter({ hasText: labels[index] }).filter({ hasText: 'Gradients:' }).last();
    await tooltip.waitFor({ timeout: 5000 });
    return tooltip.innerText();
  };
  const middle = await tip(backward[Math.floor(backward.length / 2)][1]);
  for (const name of ['Parameters', 'Gradients', 'Optimizer states', 'Activations', 'Temporary buffers', 'Framework overhead']) {
    assert.match(middle, new RegExp(`${name}: [0-9.]+ GiB`), middle);
  }
  const grads = (text) => Number(/Gradients: ([0-9.]+) GiB/.exec(text)[1]);
  const last = await tip(backward[backward.length - 1][1]);
  assert.ok(grads(middle) > 0, middle);
  assert.ok(grads(last) > grads(middle), `${last}\n${middle}`);
  await page.screenshot({ path: join(ARTIFACTS, 'a11y-timeline-tooltip.png') });
  await page.close();
});
