// Browser mode as the benchmarks run it: `streamscope serve` (the real CLI)
// in a process of its own, and one API call to it over HTTP (serve-load.ts,
// serve-flood.ts).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '../profiler/native/paths.ts';

/** `streamscope serve FILE… --port 0 [OPTIONS]`; resolves with the process and the URL it printed (with its token). */
export function startCli(files: string | string[], options: string[] = []): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, [path.join(repoRoot, 'profiler/cli/streamscope.ts'), 'serve', ...[files].flat(), '--port', '0', ...options], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d));
  return new Promise((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      out += d;
      const m = /http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64}/.exec(out);
      if (m) resolve({ child, url: m[0] });
    });
    child.on('exit', (code) => reject(new Error(`streamscope serve exited (${code}): ${err}`)));
  });
}

/** One API call: its JSON answer, or an error naming the method and the status. */
export async function post<T>(base: string, token: string, method: string, args: unknown[]): Promise<T> {
  const r = await fetch(new URL(`api/${method}`, base), { method: 'POST', headers: { 'x-streamscope-token': token }, body: JSON.stringify({ args }) });
  if (!r.ok) throw new Error(`${method}: HTTP ${r.status} ${await r.text()}`);
  return (await r.json()) as T;
}
