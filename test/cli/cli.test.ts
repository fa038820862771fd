// The `streamscope` command line, run as a user runs it (a child process),
// on real files: recordings built from synthetic streams by the native
// ingest, and the error paths a user meets first.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import os, { constants as osConstants } from 'node:os';
import { decodeStream, type DecodedRecord } from '../../profiler/record/decoder.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { RANK_LAUNCHERS } from '../../profiler/contract/ranks.ts';
import { syntheticStream, tempDir } from '../helpers/native.ts';

const cli = path.join(repoRoot, 'profiler/cli/streamscope.ts');
function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  const r = spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', env: { ...process.env, ...env } });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

let dir: string;
beforeAll(() => {
  dir = tempDir('cli');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('streamscope record: refuses clearly before starting anything', () => {
  it('names a target that does not exist, and writes no recording', () => {
    const out = path.join(dir, 'none.sqlite');
    const r = run(['record', '-o', out, '--', 'no-such-program-xyz', '--flag']);
    expect(r.code).toBe(127);
    expect(r.stderr).toContain('target not found: no-such-program-xyz');
    expect(fs.existsSync(out)).toBe(false);
  });

  it('refuses to run inside another CUDA profiler', () => {
    const r = run(['record', '-o', path.join(dir, 'x.sqlite'), '--', 'true'], { CUDA_INJECTION64_PATH: '/opt/nvidia/nsys/libToolsInjection64.so' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('another CUDA profiler is already injected');
    expect(r.stderr).toContain('libToolsInjection64.so');
  });

  it('says when the output cannot be written', () => {
    const r = run(['record', '-o', path.join(dir, 'no-such-dir', 'x.sqlite'), '--', 'true']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot write .*x\.sqlite: directory .*no-such-dir does not exist/);
  });

  it('says there is no GPU instead of writing an empty recording', () => {
    const out = path.join(dir, 'nogpu.sqlite');
    const r = run(['record', '-o', out, '--', 'true']);
    if (r.stderr.includes('no GPU to record on')) {
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/no GPU to record on: .+/);
      expect(fs.existsSync(out)).toBe(false);
    } else {
      // On a GPU machine `true` never initialises CUDA: the recording says so.
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('no CUDA activity was recorded');
    }
  });

  it('rejects unknown workloads and scenarios with the list of valid ones', () => {
    const r = run(['record', '--workload', 'fft', '--scenario', 'serial']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("unknown workload 'fft' (one of: normalise, matmul, transpose, launch-loop)");
    const s = run(['record', '--workload', 'matmul', '--scenario', 'parallel']);
    expect(s.stderr).toContain("unknown scenario 'parallel'");
  });
});

describe('streamscope record -o placeholders (one recorder per node or rank)', () => {
  // No launcher's rank in the test's own environment (a CI job may run under one).
  const noRank = Object.fromEntries(
    RANK_LAUNCHERS.flatMap((l) => [l.rank, l.localRank, l.worldSize])
      .filter((v) => v !== null)
      .map((v) => [v, undefined]),
  );

  it('fills the host, rank, local rank, pid and %% in the path', () => {
    const r = run(['record', '-o', path.join(dir, 'no-such-dir', 'run-%h-%r-%l-%p-%%.sqlite'), '--', 'true'], {
      ...noRank,
      RANK: '3',
      LOCAL_RANK: '1',
      WORLD_SIZE: '8',
    });
    // The directory does not exist: the refusal names the path as expanded.
    expect(r.code).toBe(1);
    const expanded = new RegExp(
      `cannot write ${path.join(dir, 'no-such-dir', `run-${os.hostname()}-3-1-`).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\d+-%\\.sqlite`,
    );
    expect(r.stderr).toMatch(expanded);
  });

  it('refuses %r outside a launcher, naming the variables it looked for (exit 2), in text and JSON progress', () => {
    const out = path.join(dir, 'run-%r.sqlite');
    const r = run(['record', '-o', out, '--', 'true'], noRank);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      `streamscope: -o ${out}: %r is this process's rank, but no launcher set one: none of RANK (torchrun), OMPI_COMM_WORLD_RANK (Open MPI)`,
    );
    expect(r.stderr).toContain('SLURM_PROCID (Slurm srun)');
    const j = run(['record', '--progress', 'json', '-o', out, '--', 'true'], noRank);
    expect(j.code).toBe(2);
    const failed = JSON.parse(j.stderr.trim().split('\n').at(-1)!) as { phase: string; exitCode: number; error: string; output: string };
    expect(failed).toMatchObject({ phase: 'failed', exitCode: 2, output: path.resolve(out) });
    expect(failed.error).toContain('%r is this process');
    expect(fs.readdirSync(dir).some((f) => f.includes('run-'))).toBe(false);
  });
});

describe('streamscope ingest + report on a synthetic stream', () => {
  let recording: string;
  beforeAll(() => {
    const s = syntheticStream(dir, 'cli-stream');
    recording = path.join(dir, 'ingested.sqlite');
    const r = run(['ingest', '-o', recording, s.stream]);
    expect(r.stderr).toMatch(/records from 1 stream\(s\)/);
    expect(r.code).toBe(0);
  });

  it('reports devices, streams, kernels and copies in text', () => {
    const r = run(['report', recording]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('NVIDIA H100 80GB HBM3');
    // The kernel CUPTI named _Z9normaliseIdEvPKT_PS0_i, by its function's own name.
    expect(r.stdout).toMatch(/ normalise$/m);
    expect(r.stdout).not.toContain('_Z');
    expect(r.stdout).toMatch(/^\s+HtoD\s+\w+\s+device\s+\d+/m);
    // A 100 KB kernel name is shortened in text, never dumped whole.
    expect(r.stdout).toContain('…');
    expect(Math.max(...r.stdout.split('\n').map((l) => l.length))).toBeLessThan(400);
    expect(r.stdout).toContain('legacy-default');
    expect(r.stdout).toContain('non-blocking');
    // The stream's process was a torchrun rank (its ProcessEnv records): the Processes section says which.
    expect(r.stdout).toContain('Processes (rank of ranks, as its launcher set it)');
    expect(r.stdout).toMatch(/^\s*4242\s+3 of 8 \(local 1\)\s+torchrun \(RANK\)\s+yes\s+python3 train\.py/m);
  });

  it('reports JSON with the documented shape and values that match the database', () => {
    const r = run(['report', recording, '--json']);
    expect(r.code).toBe(0);
    const j = JSON.parse(r.stdout);
    expect(j.reportVersion).toBe(9);
    expect(Array.isArray(j.findings)).toBe(true);
    const db = new Database(recording, { readonly: true });
    const kernels = (db.prepare('SELECT count(*) AS n FROM kernels').get() as { n: number }).n;
    // The stream's peer-to-peer copy is communication (CUPTI copy kind 10).
    const peer = db.prepare('SELECT count(*) AS n, coalesce(sum(bytes), 0) AS bytes FROM memcpys WHERE copy_kind = 10').get() as { n: number; bytes: number };
    db.close();
    expect(peer.n).toBeGreaterThan(0);
    expect(j.communication).toMatchObject({ present: true, collectives: [], peerCopies: { count: peer.n, bytes: peer.bytes } });
    expect(j.kernels.reduce((a: number, k: { count: number }) => a + k.count, 0)).toBe(kernels);
    expect(j.devices[0]).toMatchObject({ name: 'NVIDIA H100 80GB HBM3', smCount: 132, asyncEngineCount: 3 });
    expect(j.overlap[0].all).toHaveProperty('overlapFactor');
    const s13 = j.streams.find((s: { cuptiStreamId: number }) => s.cuptiStreamId === 13);
    const db2 = new Database(recording, { readonly: true });
    const counts = db2
      .prepare(
        `SELECT (SELECT count(*) FROM kernels k JOIN streams s ON s.id = k.stream_id WHERE s.cupti_stream_id = 13) AS kernels,
        (SELECT count(*) FROM memcpys m JOIN streams s ON s.id = m.stream_id WHERE s.cupti_stream_id = 13) AS memcpys`,
      )
      .get() as { kernels: number; memcpys: number };
    db2.close();
    expect(counts.kernels).toBeGreaterThan(0);
    expect(s13).toMatchObject({ flags: ['non-blocking'], priority: -5, ...counts });
    // reportVersion 6: every process with its rank.
    expect(j.processes).toEqual([
      {
        pid: 4242,
        command: expect.stringContaining('python3 train.py') as string,
        host: 'gpu-nøde-✓-🚀',
        complete: true,
        rank: 3,
        localRank: 1,
        worldSize: 8,
        rankVariable: 'RANK',
      },
    ]);
  });

  // A --no-end synthetic stream cut before its first Error record: it ends
  // like a process that vanished (os._exit, SIGKILL after the last periodic flush).
  function streamWithoutEnd(name: string): { bytes: Buffer; flushes: DecodedRecord[] } {
    const s = syntheticStream(dir, name, ['--no-end', '--pid', '777']);
    const bytes = fs.readFileSync(s.stream);
    const decoded = decodeStream(new Uint8Array(bytes), s.stream).records;
    const firstError = decoded.find((r) => r.kind === 'Error')!;
    const cutAt = decoded[decoded.indexOf(firstError) - 1]!.kind === 'String' ? decoded[decoded.indexOf(firstError) - 1]!.offset : firstError.offset;
    return { bytes: bytes.subarray(0, cutAt), flushes: decoded.filter((r) => r.kind === 'Flush') };
  }

  it('marks a stream that just stops (no End, no final flush) incomplete, with the reason', () => {
    const file = path.join(dir, 'vanished.ssr');
    fs.writeFileSync(file, streamWithoutEnd('vanished').bytes);
    const out = path.join(dir, 'cut.sqlite');
    const r = run(['ingest', '-o', out, file]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('INCOMPLETE: process 777 ended without finishing its stream');
    const rep = run(['report', out]);
    expect(rep.stdout).toMatch(/^INCOMPLETE: process 777 ended without finishing its stream/m);
  });

  it('keeps a process that died of a signal after the collector flushed complete, with a note', () => {
    const { bytes, flushes } = streamWithoutEnd('signalled');
    const signalFlush = flushes.find((f) => f.kind === 'Flush' && f.reason === 2) as (DecodedRecord & { signal: number; offset: number }) | undefined;
    expect(signalFlush).toBeDefined();
    const all = fs.readFileSync(path.join(dir, 'signalled.ssr'));
    const file = path.join(dir, 'signalled-cut.ssr');
    fs.writeFileSync(file, Buffer.concat([bytes, all.subarray(signalFlush!.offset, signalFlush!.offset + 32)]));
    const out = path.join(dir, 'signalled.sqlite');
    const r = run(['ingest', '-o', out, file]);
    const name = Object.entries(osConstants.signals).find(([, v]) => v === signalFlush!.signal)![0];
    expect(r.stderr).toContain('(complete)');
    expect(run(['report', out]).stdout).toContain(`note: process 777 was terminated by ${name} after the collector flushed its records`);
  });

  it('keeps what precedes a corrupt record and names the file and byte', () => {
    const s = syntheticStream(dir, 'corrupt');
    const bytes = fs.readFileSync(s.stream);
    // Damage the size field of a record a few after the first Device record.
    const records = decodeStream(new Uint8Array(bytes), s.stream).records;
    const at = records[records.findIndex((x) => x.kind === 'Device') + 3]!.offset;
    bytes.writeUInt32LE(13, at + 4);
    fs.writeFileSync(s.stream, bytes);
    const out = path.join(dir, 'corrupt.sqlite');
    const r = run(['ingest', '-o', out, s.stream]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${s.stream}: corrupt record at byte ${at}`);
    const db = new Database(out, { readonly: true });
    expect((db.prepare('SELECT count(*) AS n FROM devices').get() as { n: number }).n).toBe(1);
    db.close();
  });
});

describe('streamscope report: bad input', () => {
  it('refuses a file that is not a recording, naming it', () => {
    const f = path.join(dir, 'notes.txt');
    fs.writeFileSync(f, 'just some text\n'.repeat(100));
    const r = run(['report', f]);
    expect(r.code).toBe(2); // could not run, not a failed check
    expect(r.stderr).toContain(`${f}: not a SQLite database`);
  });

  it('refuses a recording from a newer StreamScope', () => {
    const s = syntheticStream(dir, 'newer');
    const out = path.join(dir, 'newer.sqlite');
    run(['ingest', '-o', out, s.stream]);
    const db = new Database(out);
    db.pragma('user_version = 99');
    db.close();
    const r = run(['report', out]);
    expect(r.code).toBe(2); // could not run, not a failed check
    expect(r.stderr).toContain('recorded by a newer StreamScope (schema version 99');
  });

  it('says what a missing file is', () => {
    const r = run(['report', path.join(dir, 'missing.sqlite')]);
    expect(r.code).toBe(2); // could not run, not a failed check
    expect(r.stderr).toContain('missing.sqlite: no such file');
  });
});

describe('streamscope dump-stream', () => {
  it('prints every record of a stream', () => {
    const s = syntheticStream(dir, 'dump');
    const r = run(['dump-stream', s.stream]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/pid 4242/);
    expect(r.stdout).toMatch(/ Kernel start_ns=-250 /);
  });
});
