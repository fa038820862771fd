// `streamscope serve` and `streamscope open` as a user runs them: the URL on
// stdout, bad files on stderr, several recordings of one job served as one,
// and `open` falling back to browser mode where the desktop app cannot
// start (here: no display).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/native.ts';
import { writeRankFiles } from '../helpers/rank-files.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'profiler/cli/streamscope.ts');
const good = path.join(root, 'test/fixtures/recordings/normalise-concurrent.sqlite');
const missing = path.join(root, 'test/fixtures/recordings/no-such-recording.sqlite');

let child: ChildProcess | null = null;
afterEach(() => {
  child?.kill('SIGTERM');
  child = null;
});

/** Starts the CLI and resolves with its stdout/stderr once a URL is printed (or it exits). */
function run(args: string[], extraEnv: Record<string, string> = {}): Promise<{ url: string | null; stderr: string; code: number | null }> {
  const env = { ...process.env, ...extraEnv };
  delete env.DISPLAY;
  delete env.WAYLAND_DISPLAY;
  const c = spawn(process.execPath, [cli, ...args], { env, cwd: root });
  child = c;
  let stdout = '';
  let stderr = '';
  return new Promise((resolve) => {
    c.stdout!.on('data', (d: Buffer) => {
      stdout += d;
      const m = /http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64}/.exec(stdout);
      // stderr as it goes on arriving (its pipe is not ordered with stdout's).
      if (m)
        resolve({
          url: m[0],
          get stderr() {
            return stderr;
          },
          code: null,
        });
    });
    c.stderr!.on('data', (d: Buffer) => (stderr += d));
    c.on('exit', (code) => resolve({ url: null, stderr, code }));
  });
}

async function listRecordings(url: string): Promise<{ path: string }[]> {
  const u = new URL(url);
  const r = await fetch(new URL('/api/listRecordings', u), {
    method: 'POST',
    headers: { 'x-streamscope-token': u.searchParams.get('token')! },
    body: '{"args":[]}',
  });
  return (await r.json()) as { path: string }[];
}

describe('streamscope serve / open', () => {
  it('serve prints the token URL; a bad file is named on stderr and left out', async () => {
    const r = await run(['serve', good, missing, '--port', '0']);
    expect(r.url).not.toBeNull();
    expect(r.stderr).toContain(`${missing}: no such file`);
    expect((await listRecordings(r.url!)).map((h) => h.path)).toEqual([good]);
  });

  it('serve with no file it can open exits 2', async () => {
    const r = await run(['serve', missing]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/none of the files could be opened/);
  });

  it("several recordings of one job's ranks: served as one, merged into the cache directory and said so; --separate serves each", async () => {
    // Per-rank recordings CONSTRUCTED through RecordingWriter (test/helpers/rank-files.ts), each with its rank and host.
    const dir = tempDir('cli-job');
    try {
      const ranks = writeRankFiles(dir, 'run', 2);
      const env = { STREAMSCOPE_CACHE_DIR: path.join(dir, 'cache') };
      const r = await run(['serve', ranks[1]!, ranks[0]!], env);
      expect(r.url).not.toBeNull();
      await expect.poll(() => r.stderr).toMatch(/2 recordings opened as one job: .*\/cache\/jobs\/run-rank0-job-of-2-[0-9a-f]{16}\.sqlite \(merged in \d/);
      const served = await listRecordings(r.url!);
      expect(served).toHaveLength(1);
      expect(path.dirname(served[0]!.path)).toBe(path.join(dir, 'cache', 'jobs'));
      child?.kill('SIGTERM');
      const again = await run(['serve', ...ranks], env);
      await expect.poll(() => again.stderr).toMatch(/taken from the cache/);
      expect((await listRecordings(again.url!)).map((h) => h.path)).toEqual([served[0]!.path]);
      child?.kill('SIGTERM');
      const separate = await run(['serve', '--separate', ...ranks], env);
      expect((await listRecordings(separate.url!)).map((h) => h.path)).toEqual(ranks);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('open falls back to browser mode, saying why', async () => {
    const r = await run(['open', good]);
    expect(r.url).not.toBeNull();
    expect(r.stderr).toMatch(/desktop app cannot start here: .*display/);
    expect(r.stderr).toMatch(/browser mode instead/);
    expect((await listRecordings(r.url!)).map((h) => h.path)).toEqual([good]);
  });
});
