// A tiny static file server for dist/ (tests, benchmark and scripts/serve.sh).
// Serves only files under the root, with the MIME types the page needs (application/wasm
// for streaming compilation), and optional gzip so transfer sizes can be measured. Each
// file is compressed once and kept (keyed by its modification time), as a static host or CDN
// serves precompressed files: gzip -9 of the 1.3 MB WASM takes ~150 ms of this machine's CPU,
// which a page load must not pay on every request.
// Usage as a program: node tests/e2e/static-server.mjs [root] [port] [host]
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** gzip -9 bodies by file path: {mtimeMs, body}. */
const compressed = new Map();

/** `body` of `file` (modified at `mtimeMs`) gzip -9, compressed on first use. */
function gzipOnce(file, mtimeMs, body) {
  const cached = compressed.get(file);
  if (cached?.mtimeMs === mtimeMs) return cached.body;
  const gz = gzipSync(body, { level: 9 });
  compressed.set(file, { mtimeMs, body: gz });
  return gz;
}

/** Starts a server for `root` on `host:port` (port 0: a free one); resolves to {server, url}. */
export async function serve(root, { port = 0, host = '127.0.0.1', gzip = true } = {}) {
  const base = resolve(root);
  // Links up to the 2 MB Chromium accepts are served (Node's default header limit is 16 KiB),
  // so the page's own limits on huge links can be tested (tests/e2e/hostile.test.mjs).
  const server = createServer({ maxHeaderSize: 4 * 1024 * 1024 }, async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      let file = normalize(join(base, path));
      if (file !== base && !file.startsWith(base + sep)) {
        res.writeHead(403).end();
        return;
      }
      let info = await stat(file).catch(() => null);
      if (info?.isDirectory()) {
        file = join(file, 'index.html');
        info = await stat(file);
      }
      let body = await readFile(file);
      const headers = { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-store' };
      if (gzip && /\bgzip\b/.test(req.headers['accept-encoding'] ?? '')) {
        body = gzipOnce(file, info.mtimeMs, body);
        headers['Content-Encoding'] = 'gzip';
      }
      headers['Content-Length'] = body.length;
      res.writeHead(200, headers);
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch {
      res.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
    }
  });
  await new Promise((ok, fail) => server.once('error', fail).listen(port, host, ok));
  const { port: actual } = server.address();
  return { server, url: `http://${host}:${actual}/` };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [root = 'dist', port = '8080', host = '127.0.0.1'] = process.argv.slice(2);
  const { url } = await serve(root, { port: Number(port), host });
  console.log(`Headroom is served at ${url} (Ctrl-C to stop)`);
}
