// Trunk post-build hook: splits the page's WASM so the views that are not on screen at first
// (Strategy, Compare, …: the `#[wasm_split]` functions, see src/ui/lazy_view.rs) arrive as
// chunks when they open, instead of in the first download.
//
// Trunk 0.21 runs wasm-bindgen on the linked module and has no hook before it, and the split
// must come first: wasm-split-cli reads the linker's relocations (`--emit-relocs`, set in
// .cargo/config.toml), which wasm-bindgen drops. So this hook starts again from the linked
// module in target/, in the order cargo-leptos uses for `--split` (leptos-rs/cargo-leptos
// src/compile/front.rs and src/wasm_split_tools/mod.rs):
//   1. wasm-split-cli (crate wasm_split_cli_support 0.2.4, WorldSEnder/wasm-split-prototype,
//      src/lib.rs and src/js.rs; the design: rustwasm/wasm-bindgen issue 3939): the main
//      module, one .wasm per split point (plus chunks of code shared by several) and the JS
//      that fetches them (`__wasm_split.js`, which takes the main module's exports from
//      wasm-bindgen's `initSync`);
//   2. wasm-bindgen on the main module (`--keep-lld-exports`: the chunks import the main
//      module's table, memory and shared globals through those exports), replacing Trunk's
//      output of the same name, so Trunk's loader and preload links still point at it;
//   3. wasm-opt -Oz on the main module and on each chunk (release only; Trunk's own
//      wasm-opt is off in index.html, `data-wasm-opt="0"`, as it would see the main module
//      only);
//   4. content-hashed names for the chunks and the chunk loader, and the `integrity=` of
//      Trunk's preload links recomputed for the files that changed.
// The main module is the first download; each chunk is fetched once, when its view opens.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const fail = (message) => {
  console.error(`trunk-split-wasm: ${message}`);
  process.exit(1);
};
const dir = process.env.TRUNK_STAGING_DIR;
if (!dir) fail('TRUNK_STAGING_DIR is not set (run by `trunk build`)');
const release = process.env.TRUNK_PROFILE === 'release';
const root = resolve(process.env.TRUNK_SOURCE_DIR ?? '.');
const linked = join(process.env.CARGO_TARGET_DIR ?? join(root, 'target'), 'wasm32-unknown-unknown', release ? 'release' : 'debug', 'headroom.wasm');
if (!existsSync(linked)) fail(`${linked} is missing`);

// Quiet unless a tool fails (wasm-opt warns about the name subsections wasm-split-cli writes).
const run = (command, args) => {
  try {
    return execFileSync(command, args, { stdio: ['ignore', 'pipe', 'pipe'] }).toString();
  } catch (e) {
    fail(`${command} ${args.join(' ')}\n${e.stderr ?? e.message}`);
  }
};
const digest = (algorithm, bytes) => createHash(algorithm).update(bytes).digest();
const integrity = (bytes) => `sha384-${digest('sha384', bytes).toString('base64')}`;

// Trunk's output: headroom-<hash>.js and headroom-<hash>_bg.wasm.
const html = join(dir, 'index.html');
const mainJs = readdirSync(dir).find((f) => /^headroom-[0-9a-f]+\.js$/.test(f));
if (!mainJs) fail(`no headroom-<hash>.js in ${dir}`);
const stem = mainJs.slice(0, -'.js'.length);
const mainWasm = `${stem}_bg.wasm`;

// binaryen 132 from npm, never another (Debian's 108 breaks the page at load): Trunk.toml
// pins it for Trunk's own wasm-opt, which is off.
const wasmOpt = join(root, 'node_modules', '.bin', 'wasm-opt');
if (release && !run(wasmOpt, ['--version']).includes('version 132')) fail(`${wasmOpt} is not binaryen version 132 (run scripts/setup-web.sh)`);

/** The files a split point loads (its own module and the shared chunks it waits for), from
 * the chunk loader's source (`__wasm_split.js`: `__wasm_split_load_<name> = …makeLoad(() => {
 * … fetch(new URL("./<file>" …)) …, [__chunk_N, …])`). */
function splitFiles(loader, name) {
  const file = (block) => block.match(/fetch\(new URL\("\.\/([^"]+)"/)?.[1];
  const split = loader.match(new RegExp(`__wasm_split_load_${name} = [\\s\\S]*?\\n, \\[([^\\]]*)\\]\\)\\);`));
  if (!split) fail(`the chunk loader has no split point ${name}`);
  const chunks = split[1].split(',').map((c) => c.trim()).filter(Boolean).map((c) => {
    const block = loader.match(new RegExp(`const ${c} = makeLoad\\(\\(\\) => \\{[\\s\\S]*?\\n\\}`))?.[0];
    return block && file(block);
  });
  const files = [file(split[0]), ...chunks];
  if (files.some((f) => !f)) fail(`could not read the files of split point ${name} from the chunk loader`);
  return files;
}

const work = mkdtempSync(join(tmpdir(), 'headroom-split-'));
try {
  // 1. Split. The chunk loader imports `initSync` from ./<stem>.js (wasm-bindgen's JS).
  run('wasm-split-cli', ['--out-name', stem, linked, work]);
  const chunks = readdirSync(work).filter((f) => f.endsWith('.wasm') && f !== `${stem}.wasm`);
  if (chunks.length === 0) fail('wasm-split-cli made no chunk: is --emit-relocs in .cargo/config.toml?');

  // 2. wasm-bindgen on the main module, as Trunk runs it (Trunk.toml pins its version).
  const bindgen = join(work, 'bindgen');
  run('wasm-bindgen', ['--target=web', '--no-typescript', '--keep-lld-exports', `--out-dir=${bindgen}`, `--out-name=${stem}`, join(work, `${stem}.wasm`)]);
  if (existsSync(join(bindgen, 'snippets'))) fail('wasm-bindgen made snippets/, which this hook does not copy');

  // 3. wasm-opt, in place, on every module. HEADROOM_WASM_NAMES=1 keeps the function names,
  // for `twiggy` and CPU profiles (a few hundred KB larger; never for the served page).
  const names = process.env.HEADROOM_WASM_NAMES === '1' ? ['-g'] : [];
  const optimize = (file) => {
    if (release) run(wasmOpt, ['-Oz', ...names, file, '-o', file]);
  };
  optimize(join(bindgen, `${stem}_bg.wasm`));
  chunks.forEach((f) => optimize(join(work, f)));

  // 4. Content-hashed names: a cached chunk can never meet a main module it does not fit.
  const hashed = (name, bytes) => name.replace(/\.(wasm|js)$/, (ext) => `-${digest('sha256', bytes).toString('hex').slice(0, 16)}${ext}`);
  let loader = readFileSync(join(work, '__wasm_split.js'), 'utf8');
  for (const chunk of chunks) {
    const bytes = readFileSync(join(work, chunk));
    const name = `${stem}-${hashed(chunk, bytes)}`;
    if (!loader.includes(`"./${chunk}"`)) fail(`__wasm_split.js does not name ${chunk}`);
    loader = loader.replaceAll(`"./${chunk}"`, `"./${name}"`);
    writeFileSync(join(dir, name), bytes);
  }
  const loaderName = hashed(`${stem}-split.js`, loader);
  writeFileSync(join(dir, loaderName), loader);
  let js = readFileSync(join(bindgen, `${stem}.js`), 'utf8');
  // Only the `import … from` statements: the import object's keys stay the module names
  // the main module's imports carry.
  if (!js.includes(' from "./__wasm_split.js"')) fail(`${stem}.js does not import ./__wasm_split.js`);
  js = js.replaceAll(' from "./__wasm_split.js"', ` from "./${loaderName}"`);
  writeFileSync(join(dir, mainJs), js);
  copyFileSync(join(bindgen, `${stem}_bg.wasm`), join(dir, mainWasm));

  // Trunk's preload links carry the integrity of its own output: recompute it for ours.
  let page = readFileSync(html, 'utf8');
  for (const file of [mainJs, mainWasm]) {
    const link = new RegExp(`(<link[^>]*href="\\./${file.replace(/\./g, '\\.')}"[^>]*integrity=")[^"]*(")`);
    if (!link.test(page)) fail(`index.html has no preload link with integrity for ${file}`);
    page = page.replace(link, `$1${integrity(readFileSync(join(dir, file)))}$2`);
  }
  // A link that carries a scenario needs the link codec (src/ui/url_codec.rs) before the page
  // is built: its chunks are preloaded beside the main module instead of after it. The test is
  // "the query is not empty": a query of page keys only (`?view=…`) loads the codec right after
  // the first chart anyway, so the preload costs nothing there, and the default page (no
  // query) does not compete for bandwidth with its first chart.
  const codecFiles = splitFiles(loader, 'url_codec');
  const preload = `if (location.search.length > 1) for (const href of ${JSON.stringify(codecFiles.map((f) => `./${f}`))}) document.head.append(Object.assign(document.createElement('link'), { rel: 'preload', as: 'fetch', crossOrigin: 'anonymous', href }));\n`;
  const inline = /(<script type="module"(?: nonce="[^"]*")?>)/;
  if (!inline.test(page)) fail("index.html has no inline module script (Trunk's loader) to add the codec's preload to");
  page = page.replace(inline, `$1${preload}`);
  writeFileSync(html, page);
} finally {
  rmSync(work, { recursive: true, force: true });
}
