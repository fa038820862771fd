// The renderer's build (renderer/dist) as static files: only files inside
// that folder (no `..`, no symlink out of it), with the types the browser
// must not second-guess (nosniff is set by the server on every answer).
import fs from 'node:fs';
import path from 'node:path';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

export type StaticAnswer = { status: 200; body: Buffer; type: string } | { status: 400 | 403 | 404 | 503; body: string; type: string };

const NOT_BUILT = `<!doctype html>
<meta charset="utf-8"><title>StreamScope: user interface not built</title>
<h1>StreamScope</h1>
<p>The user interface is not built yet. In the StreamScope checkout, run</p>
<pre>npm run build:renderer</pre>
<p>then reload this page (the server can keep running).</p>
`;

/** Answers GET `urlPath` from `root`. */
export function staticFile(root: string, urlPath: string): StaticAnswer {
  const text = (status: 400 | 403 | 404, body: string): StaticAnswer => ({ status, body, type: 'text/plain; charset=utf-8' });
  let rel: string;
  try {
    rel = decodeURIComponent(urlPath === '/' ? '/index.html' : urlPath);
  } catch {
    return text(400, 'bad path');
  }
  if (rel.includes('\0')) return text(400, 'bad path');
  let realRoot: string;
  try {
    realRoot = fs.realpathSync(root);
  } catch {
    return { status: 503, body: NOT_BUILT, type: 'text/html; charset=utf-8' };
  }
  if (!fs.existsSync(path.join(realRoot, 'index.html'))) return { status: 503, body: NOT_BUILT, type: 'text/html; charset=utf-8' };
  const file = path.resolve(realRoot, `.${rel}`);
  if (!file.startsWith(realRoot + path.sep)) return text(403, 'forbidden: outside the user interface folder');
  let real: string;
  try {
    real = fs.realpathSync(file);
  } catch {
    return text(404, 'not found');
  }
  // A symlink inside the folder must not lead out of it either.
  if (!real.startsWith(realRoot + path.sep)) return text(403, 'forbidden: outside the user interface folder');
  try {
    return { status: 200, body: fs.readFileSync(real), type: TYPES[path.extname(real).toLowerCase()] ?? 'application/octet-stream' };
  } catch {
    return text(404, 'not found');
  }
}
