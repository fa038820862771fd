// `npm run test:gpu`, faults (issue 15, part 2): a Python program that ends
// badly, in each way a real one does — SIGKILL, SIGSEGV, abort(),
// cudaDeviceReset() while work is queued, an unhandled exception,
// os._exit() — leaves a valid recording that says how it ended and, when
// records are missing, that it is incomplete and why; the recorder itself
// killed mid-run leaves record streams from which `streamscope ingest`
// recovers everything the collector flushed; a collector that cannot write
// (a read-only directory, a full file system) costs the target nothing: it
// runs to completion with its own exit code. CuPy programs, on a real GPU;
// skipped without one. docs/RELIABILITY.md lists each case with this test.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { devices } from '../../profiler/native/addon.ts';
import { collectorLibraryPath, repoRoot } from '../../profiler/native/paths.ts';
import { record } from '../../profiler/record/recorder.ts';
import { openRecording, readMeta } from '../../profiler/store/database.ts';

const inventory = devices();
const skip = inventory.devices.length === 0 ? `no GPU here: ${inventory.error ?? 'no CUDA devices'}` : false;
if (skip) console.log(`# GPU fault tests skipped: ${skip}`);

const NL = String.fromCharCode(10);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ss-gpu-faults-'));
const table: Record<string, unknown>[] = [];
after(() => {
  if (table.length)
    console.log(
      '\n' +
        table
          .map((r) =>
            Object.entries(r)
              .map(([k, v]) => `${k}=${v}`)
              .join(' '),
          )
          .join('\n'),
    );
  if (process.env.STREAMSCOPE_GPU_RESULTS)
    fs.writeFileSync(process.env.STREAMSCOPE_GPU_RESULTS.replace(/\.json$/, '-faults.json'), JSON.stringify(table, null, 2));
  fs.rmSync(dir, { recursive: true, force: true });
});

/**
 * CuPy work in a loop: `kernels` element-wise kernels on two streams,
 * synchronised, then `end` (Python statements) — the way the program ends.
 * A flag file (`flag` + pid) says the work is done, for the cases killed
 * from outside. `settle`: seconds between the work and the flag, longer
 * than the collector's periodic flush (500 ms), so that a kill after the
 * flag finds the work flushed; 0 for a crash right after the work, which
 * only the collector's crash flush can save.
 */
function program(end: string, opts: { kernels?: number; flag?: string; settle?: number } = {}): string {
  const { kernels = 400, flag = 'worked', settle = 0 } = opts;
  return [
    'import cupy as cp, os, sys, time',
    's = [cp.cuda.Stream(non_blocking=True) for _ in range(2)]',
    'x = [cp.arange(1 << 20, dtype=cp.float32) for _ in range(2)]',
    `for i in range(${kernels}):`,
    '    with s[i % 2]:',
    '        x[i % 2] *= 1.0001',
    'for t in s: t.synchronize()',
    `time.sleep(${settle})`,
    `open(${JSON.stringify(path.join(dir, flag))} + str(os.getpid()), 'w').close()`,
    end,
  ].join('\n');
}

interface Outcome {
  complete: boolean;
  reason: string | null;
  exitCode: string | null;
  signal: string | null;
  kernels: number;
}

/** The recording as every reader opens it (integrity and schema checks included): its meta and kernels. */
function outcome(file: string): Outcome {
  const db = openRecording(file, { readonly: true });
  try {
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    const meta = readMeta(db);
    return {
      complete: meta.get('complete') === '1',
      reason: meta.get('incomplete_reason') ?? null,
      exitCode: meta.get('exit_code') ?? null,
      signal: meta.get('exit_signal') ?? null,
      kernels: (db.prepare('SELECT count(*) AS n FROM kernels').get() as { n: number }).n,
    };
  } finally {
    db.close();
  }
}

async function recorded(name: string, end: string, opts: { kill?: NodeJS.Signals; settle?: number } = {}): Promise<Outcome> {
  const file = path.join(dir, `${name}.sqlite`);
  const r = await record({
    output: file,
    overwrite: true,
    argv: ['python3', '-c', program(end, { settle: opts.settle })],
    stdio: 'pipe',
    onStart: opts.kill ? (pid) => waitForWork(pid).then(() => process.kill(pid, opts.kill)) : undefined,
  });
  const o = outcome(file);
  assert.equal(o.complete, r.complete);
  table.push({ case: name, complete: o.complete, exit: o.exitCode ?? o.signal, kernels: o.kernels, reason: JSON.stringify(o.reason) });
  return o;
}

async function waitForWork(pid: number): Promise<void> {
  const flag = path.join(dir, `worked${pid}`);
  for (let i = 0; i < 600 && !fs.existsSync(flag); i++) await new Promise((r) => setTimeout(r, 50));
}

describe('a Python program that ends badly leaves a valid recording that says how', { skip }, () => {
  it('SIGKILL from outside: incomplete, killed by SIGKILL, the kernels of the periodic flushes kept', async () => {
    // Killed after its work was flushed (SIGKILL leaves no chance to flush: what came after the last periodic flush is lost).
    const o = await recorded('sigkill', 'time.sleep(60)', { kill: 'SIGKILL', settle: 1.5 });
    assert.equal(o.complete, false);
    assert.equal(o.signal, 'SIGKILL');
    assert.match(o.reason ?? '', /killed by SIGKILL/);
    assert.ok(o.kernels >= 400, `kernels kept: ${o.kernels}`);
  });

  it('SIGSEGV (a bad pointer in C): incomplete, killed by SIGSEGV, every kernel kept by the crash flush', async () => {
    const o = await recorded('sigsegv', 'import ctypes\nctypes.string_at(0)');
    assert.equal(o.complete, false);
    assert.equal(o.signal, 'SIGSEGV');
    assert.match(o.reason ?? '', /SIGSEGV/);
    assert.ok(o.kernels >= 400, `kernels kept: ${o.kernels}`);
  });

  it('abort(): incomplete, killed by SIGABRT, every kernel kept', async () => {
    const o = await recorded('abort', 'os.abort()');
    assert.equal(o.signal, 'SIGABRT');
    assert.equal(o.complete, false);
    assert.ok(o.kernels >= 400, `kernels kept: ${o.kernels}`);
  });

  it('cudaDeviceReset() with work still queued: a valid recording, the kernels before the reset kept', async () => {
    // The reset destroys the context (CuPy's pools then hold dead pointers: the program ends right after it).
    const o = await recorded('device-reset', ['with s[0]:', '    for _ in range(50): x[0] *= 1.0001', 'cp.cuda.runtime.deviceReset()', 'sys.exit(0)'].join(NL));
    // Whatever the program's exit after it (CuPy's finalizers fail on the dead context: 1), the collector flushed at exit.
    assert.notEqual(o.exitCode, null);
    assert.equal(o.complete, true, `incomplete: ${o.reason}`);
    assert.ok(o.kernels >= 450, `kernels kept: ${o.kernels}`);
  });

  it('an unhandled exception: exit code 1 said, the recording complete (the collector flushes at exit)', async () => {
    const o = await recorded('exception', 'raise RuntimeError("loss is NaN")');
    assert.equal(o.exitCode, '1');
    assert.equal(o.signal, null);
    assert.equal(o.complete, true, `incomplete: ${o.reason}`);
    assert.ok(o.kernels >= 400);
  });

  it('os._exit(3): exit code 3, incomplete (no final flush), why said', async () => {
    // os._exit skips the collector's exit flush: what came after the last periodic flush is lost, and said to be.
    const o = await recorded('os-exit', 'os._exit(3)', { settle: 1.5 });
    assert.equal(o.exitCode, '3');
    // os._exit skips the collector's exit flush: what the periodic flushes wrote is kept, the rest is said to be missing.
    assert.equal(o.complete, false);
    assert.match(o.reason ?? '', /os\._exit|without finishing/);
    assert.ok(o.kernels >= 400, `kernels kept: ${o.kernels}`);
  });
});

describe('the recorder killed mid-run: `streamscope ingest` recovers what the collector flushed', { skip }, () => {
  it('SIGKILL to the recorder; the target finishes on its own; ingest of the streams left beside the output', async () => {
    const file = path.join(dir, 'recorder-killed.sqlite');
    const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
    // The target sleeps after its work so that the recorder is killed mid-run; it then finishes alone.
    const argv = ['python3', '-c', program('time.sleep(3)', { flag: 'target-worked', settle: 1 })];
    const rec = spawn(process.execPath, [cli, 'record', '-f', '-o', file, '--', ...argv], {
      stdio: 'ignore',
      detached: true,
    });
    const started = Date.now();
    while (!fs.readdirSync(dir).some((f) => f.startsWith('target-worked')) && Date.now() - started < 60_000) await new Promise((r) => setTimeout(r, 50));
    process.kill(rec.pid!, 'SIGKILL');
    // The orphaned target finishes its sleep and exits; its collector's stream ends.
    await new Promise((r) => setTimeout(r, 6000));
    const streams = fs.readdirSync(dir).filter((f) => f.startsWith('.recorder-killed.sqlite.streams-'));
    assert.equal(streams.length, 1, `stream directory left beside the output: ${fs.readdirSync(dir).join(', ')}`);
    // What the killed recorder had stored: readable as it is.
    const raw = new Database(file, { readonly: true });
    const partial = { kernels: (raw.prepare('SELECT count(*) AS n FROM kernels').get() as { n: number }).n };
    raw.close();
    // A reader opening it finds a recording whose writer is gone: reported, or refused in one line that says what to do.
    const report = spawnSync(process.execPath, [cli, 'report', file], { encoding: 'utf8' });
    table.push({
      case: "report of the killed recorder's file",
      exit: report.status,
      first: JSON.stringify((report.status === 0 ? report.stdout : report.stderr).trim().split(NL)[0]),
    });
    if (report.status !== 0) assert.equal(report.stderr.trim().split(NL).length, 1, report.stderr);
    const recovered = path.join(dir, 'recovered.sqlite');
    const r = spawnSync(process.execPath, [cli, 'ingest', '-o', recovered, path.join(dir, streams[0]!)], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    const o = outcome(recovered);
    assert.ok(o.kernels >= 400, `kernels recovered: ${o.kernels}`);
    assert.ok(o.kernels >= partial.kernels);
    assert.equal(o.complete, true, `recovered recording incomplete: ${o.reason}`);
    table.push({ case: 'recorder SIGKILL → ingest', partialKernels: partial.kernels, recoveredKernels: o.kernels, complete: o.complete });
  });
});

describe('a collector that cannot write costs the target nothing', { skip }, () => {
  /** The program run directly with the collector injected, its streams to `outDir`; its exit status and stderr. */
  function direct(outDir: string, extraEnv: NodeJS.ProcessEnv = {}): { status: number | null; signal: NodeJS.Signals | null; stderr: string } {
    const r = spawnSync('python3', ['-c', program('sys.exit(7)', { kernels: 4000 })], {
      encoding: 'utf8',
      env: { ...process.env, CUDA_INJECTION64_PATH: collectorLibraryPath(), STREAMSCOPE_OUTPUT_DIR: outDir, ...extraEnv },
      timeout: 120_000,
    });
    return { status: r.status, signal: r.signal, stderr: r.stderr };
  }

  it('a read-only directory: the program runs to its own exit code, the collector says why it does not record', () => {
    const ro = path.join(dir, 'read-only');
    fs.mkdirSync(ro);
    fs.chmodSync(ro, 0o555);
    const asRoot = process.getuid?.() === 0;
    // Root writes anywhere: a read-only mount is what stops it.
    const target = asRoot ? '/proc/self' : ro;
    const r = direct(target);
    assert.equal(r.status, 7, r.stderr);
    assert.match(r.stderr, /streamscope: cannot create/);
    table.push({ case: 'collector: read-only directory', exit: r.status, stderr: JSON.stringify(r.stderr.trim().split('\n').at(-1)) });
  });

  it(
    'a full file system: the program runs to its own exit code',
    { skip: process.getuid?.() !== 0 ? 'mounting a small file system needs root' : false },
    () => {
      const mnt = path.join(dir, 'full');
      fs.mkdirSync(mnt);
      const m = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=32k', 'tmpfs', mnt], { encoding: 'utf8' });
      if (m.status !== 0) {
        table.push({ case: 'collector: full file system', skipped: JSON.stringify(m.stderr.trim()) });
        return;
      }
      try {
        const r = direct(mnt);
        assert.equal(r.status, 7, r.stderr);
        assert.equal(r.signal, null);
        assert.match(r.stderr, /streamscope: writing .* failed: No space left on device; recording stops here/);
        table.push({ case: 'collector: full file system', exit: r.status, stderr: JSON.stringify(r.stderr.trim().split('\n').slice(-2).join(' | ')) });
      } finally {
        spawnSync('umount', [mnt]);
      }
    },
  );

  /** A tmpfs of `size` mounted for `body`, unmounted after; the case noted and left when it cannot be mounted. */
  function withTmpfs(name: string, size: string, body: (mnt: string) => void): void {
    const mnt = path.join(dir, name);
    fs.mkdirSync(mnt);
    const m = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', mnt], { encoding: 'utf8' });
    if (m.status !== 0) {
      table.push({ case: name, skipped: JSON.stringify(m.stderr.trim()) });
      return;
    }
    try {
      body(mnt);
    } finally {
      spawnSync('umount', [mnt]);
    }
  }
  const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
  const notRoot = process.getuid?.() === 0 ? false : 'mounting a small file system needs root';
  const escaped = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

  it('`streamscope record` where the recording cannot even be created: one line naming it, the target not started', { skip: notRoot }, () => {
    withTmpfs('full-at-start', '256k', (mnt) => {
      const file = path.join(mnt, 'r.sqlite');
      const r = spawnSync(process.execPath, [cli, 'record', '-f', '-o', file, '--', 'python3', '-c', program('sys.exit(7)', { flag: 'never' })], {
        encoding: 'utf8',
        timeout: 120_000,
      });
      table.push({ case: 'record: no room for the recording', exit: r.status, stderr: JSON.stringify(r.stderr.trim()) });
      assert.notEqual(r.status, 0);
      assert.equal(r.stderr.trim().split(NL).length, 1, r.stderr);
      assert.match(r.stderr, new RegExp(`${escaped(file)}.*(full|space)`));
      assert.ok(!fs.readdirSync(dir).some((f) => f.startsWith('never')), 'the target must not run');
      assert.ok(!fs.existsSync(file), 'no half-made recording left');
    });
  });

  it('`streamscope record` when the disk fills mid-run: the target runs to its own exit code; what was stored is readable; why said', { skip: notRoot }, () => {
    withTmpfs('full-mid-run', '6m', (mnt) => {
      const file = path.join(mnt, 'r.sqlite');
      const r = spawnSync(process.execPath, [cli, 'record', '-f', '-o', file, '--', 'python3', '-c', program('sys.exit(7)', { kernels: 60_000 })], {
        encoding: 'utf8',
        timeout: 300_000,
      });
      const lines = r.stderr.trim().split(NL);
      table.push({ case: 'record: disk full mid-run', exit: r.status, stderr: JSON.stringify(lines.slice(-4).join(' | ')) });
      assert.ok(!/\n\s+at /.test(r.stderr), `no stack trace:${NL}${r.stderr}`);
      assert.match(r.stderr, /space|full/i);
      if (fs.existsSync(file)) {
        const o = outcome(file);
        table.push({ case: 'record: disk full mid-run (file)', complete: o.complete, kernels: o.kernels, reason: JSON.stringify(o.reason) });
        assert.equal(o.complete, false);
      }
    });
  });
});
