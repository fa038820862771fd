// `streamscope serve` beyond loopback, as a user runs it: `--host 0.0.0.0`
// serves (the user asked for it) and says on stderr what that exposes —
// every interface, plain HTTP, the printed token —; `--token-file F` takes
// the token from F and prints none; a bad token file stops it before any
// file is opened (exit 2). On loopback nothing is said.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/native.ts';

const root = path.resolve(import.meta.dirname, '../..');
const cli = path.join(root, 'profiler/cli/streamscope.ts');
const good = path.join(root, 'test/fixtures/recordings/normalise-concurrent.sqlite');
const TOKEN = 'f'.repeat(16) + '0123456789abcdef'.repeat(3);

let dir: string;
beforeAll(() => {
  dir = tempDir('cli-exposure');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

let child: ChildProcess | null = null;
afterEach(() => {
  child?.kill('SIGTERM');
  child = null;
});

/** Runs `streamscope serve ARGS` until it prints its URL line (or exits); stderr as it arrives. */
function serve(args: string[]): Promise<{ line: string | null; stderr: () => string; code: number | null }> {
  const c = spawn(process.execPath, [cli, 'serve', good, '--port', '0', ...args], { cwd: root });
  child = c;
  let stdout = '';
  let stderr = '';
  c.stderr!.on('data', (d: Buffer) => (stderr += d));
  return new Promise((resolve) => {
    c.stdout!.on('data', (d: Buffer) => {
      stdout += d;
      const m = /^StreamScope \(read-only browser mode\): (.*)$/m.exec(stdout);
      if (m) resolve({ line: m[1]!, stderr: () => stderr, code: null });
    });
    c.on('exit', (code) => resolve({ line: null, stderr: () => stderr, code }));
  });
}

function tokenFile(name: string, text: string, mode = 0o600): string {
  const f = path.join(dir, name);
  fs.writeFileSync(f, text);
  fs.chmodSync(f, mode);
  return f;
}

async function listRecordings(port: string, token: string): Promise<number> {
  const r = await fetch(`http://127.0.0.1:${port}/api/listRecordings`, { method: 'POST', headers: { 'x-streamscope-token': token }, body: '{"args":[]}' });
  return r.status;
}

describe('streamscope serve --host / --token-file', () => {
  it('on loopback (the default): the token URL, and nothing said about exposure', async () => {
    const r = await serve([]);
    expect(r.line).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?token=[0-9a-f]{64}$/);
    expect(r.stderr()).not.toMatch(/warning/);
  });

  it('--host 0.0.0.0 without --token-file serves, with a warning that names the exposure', async () => {
    const r = await serve(['--host', '0.0.0.0']);
    expect(r.line).toMatch(/^http:\/\/0\.0\.0\.0:(\d+)\/\?token=[0-9a-f]{64}$/);
    const port = /:(\d+)\//.exec(r.line!)![1]!;
    const warning = r.stderr();
    expect(warning).toContain(`warning: serving on every network interface of this machine (0.0.0.0), port ${port}`);
    expect(warning).toMatch(/any machine that can reach this address can connect/);
    expect(warning).toMatch(/plain HTTP: the access token and the recordings .* cross the network unencrypted/);
    expect(warning).toMatch(/The token is in the URL printed below: anyone who sees it .* can read every recording served here/);
    expect(warning).toMatch(/--token-file FILE/);
    expect(warning).toMatch(/ssh -L/);
    // And it does serve, with the printed token.
    expect(await listRecordings(port, new URL(r.line!).searchParams.get('token')!)).toBe(200);
  });

  it('--token-file F: the token of F, not printed; still the plain-HTTP warning beyond loopback', async () => {
    const f = tokenFile('token', `${TOKEN}\n`);
    const r = await serve(['--host', '0.0.0.0', '--token-file', f]);
    expect(r.line).toMatch(new RegExp(`^http://0\\.0\\.0\\.0:\\d+/\\?token=<the token in ${f}>$`));
    expect(r.line).not.toContain(TOKEN);
    expect(r.stderr()).not.toContain(TOKEN);
    expect(r.stderr()).toMatch(/plain HTTP/);
    expect(r.stderr()).toContain(`Anyone with the token in ${f} can read every recording served here`);
    const port = /:(\d+)\//.exec(r.line!)![1]!;
    expect(await listRecordings(port, TOKEN)).toBe(200);
    expect(await listRecordings(port, 'a'.repeat(64))).toBe(403);
  });

  it('--token-file on loopback: the token of F, no warning', async () => {
    const r = await serve(['--token-file', tokenFile('token-lo', TOKEN)]);
    expect(r.line).toMatch(/^http:\/\/127\.0\.0\.1:(\d+)\/\?token=<the token in /);
    expect(await listRecordings(/:(\d+)\//.exec(r.line!)![1]!, TOKEN)).toBe(200);
    expect(r.stderr()).not.toMatch(/warning/);
  });

  it.each([
    ['missing', () => path.join(dir, 'missing'), /no such file/],
    ['empty', () => tokenFile('empty', ''), /empty/],
    ['readable by others', () => tokenFile('open', TOKEN, 0o644), /other users can access it \(mode 0644\).*chmod 600/],
  ])('a token file %s: exit 2 before serving, saying why', async (_name, make, message) => {
    const f = make();
    const r = await serve(['--host', '0.0.0.0', '--token-file', f]);
    expect(r.line).toBeNull();
    expect(r.code).toBe(2);
    expect(r.stderr()).toMatch(message);
    expect(r.stderr()).toContain(`--token-file ${f}`);
    expect(r.stderr()).not.toMatch(/warning/);
  });
});
