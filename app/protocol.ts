// The app:// protocol: maps app://streamscope/<path> onto files under the
// renderer's build folder, and nothing else. Plain module (no Electron), so
// the path confinement is tested directly.
import fs from 'node:fs/promises';
import path from 'node:path';
import { APP_HOST, APP_SCHEME, CONTENT_SECURITY_POLICY } from './window-options.ts';

const MIME: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.woff': 'font/woff',
  '.wasm': 'application/wasm',
  '.map': 'application/json; charset=utf-8',
};

/**
 * The file under `root` that `url` names, or null when the URL is not ours or
 * would leave `root` (`..`, encoded separators, absolute paths).
 */
export function resolveAppFile(url: string, root: string): string | null {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return null;
  }
  if (u.protocol !== `${APP_SCHEME}:` || u.host !== APP_HOST) return null;
  let rel: string;
  try {
    rel = decodeURIComponent(u.pathname);
  } catch {
    return null;
  }
  if (rel.includes('\0') || rel.includes('\\')) return null;
  if (rel === '/' || rel === '') rel = '/index.html';
  const base = path.resolve(root);
  const file = path.resolve(base, '.' + rel);
  if (file !== base && !file.startsWith(base + path.sep)) return null;
  return file;
}

/** A protocol response: the file with its type and the CSP, or a 404. */
export async function appProtocolResponse(url: string, root: string): Promise<Response> {
  const file = resolveAppFile(url, root);
  const headers = {
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'Cache-Control': 'no-store',
  };
  if (!file) return new Response('not found', { status: 404, headers });
  try {
    const body = await fs.readFile(file);
    const type = MIME[path.extname(file).toLowerCase()] ?? 'application/octet-stream';
    return new Response(body, { status: 200, headers: { ...headers, 'Content-Type': type } });
  } catch {
    return new Response('not found', { status: 404, headers });
  }
}
