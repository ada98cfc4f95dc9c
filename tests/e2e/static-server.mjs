// A tiny static file server for dist/ (tests, benchmark and scripts/serve.sh).
// Serves only files under the root, with the MIME types the page needs (application/wasm
// for streaming compilation), and optional gzip so transfer sizes can be measured.
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

/** Starts a server for `root` on `host:port` (port 0: a free one); resolves to {server, url}. */
export async function serve(root, { port = 0, host = '127.0.0.1', gzip = true } = {}) {
  const base = resolve(root);
  const server = createServer(async (req, res) => {
    try {
      const path = decodeURIComponent(new URL(req.url, 'http://x').pathname);
      let file = normalize(join(base, path));
      if (file !== base && !file.startsWith(base + sep)) {
        res.writeHead(403).end();
        return;
      }
      if ((await stat(file).catch(() => null))?.isDirectory()) file = join(file, 'index.html');
      let body = await readFile(file);
      const headers = { 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream', 'Cache-Control': 'no-store' };
      if (gzip && /\bgzip\b/.test(req.headers['accept-encoding'] ?? '')) {
        body = gzipSync(body, { level: 9 });
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
