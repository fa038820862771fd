// Ranks (issue 13): which launcher variable gives a process its rank
// (profiler/contract/ranks.ts), the rank columns of a finished recording
// (streams from the C++ encoder with a launcher's variables, through
// `streamscope ingest`'s path: native ingest, then profiler/store/ranks.ts),
// and record -o's placeholders (profiler/record/output-name.ts).
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { CAPTURED_ENV, formatRank, NO_RANK, RANK_LAUNCHERS, rankFromEnv } from '../../profiler/contract/ranks.ts';
import { ingestStreamFiles } from '../../profiler/record/ingest-files.ts';
import { expandOutputName } from '../../profiler/record/output-name.ts';
import { RecordError } from '../../profiler/record/record-error.ts';
import { repoRoot } from '../../profiler/native/paths.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { latestSchemaVersion } from '../../profiler/store/migrations/index.ts';
import { readProcesses } from '../../profiler/store/ranks.ts';
import { syntheticStream, tempDir } from '../helpers/native.ts';

const dir = tempDir('ranks');
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

describe('rankFromEnv: the launchers and their order', () => {
  it('reads each launcher by its own variables', () => {
    expect(rankFromEnv({ RANK: '3', LOCAL_RANK: '1', WORLD_SIZE: '8' })).toEqual({ rank: 3, localRank: 1, worldSize: 8, rankVariable: 'RANK' });
    expect(rankFromEnv({ OMPI_COMM_WORLD_RANK: '5', OMPI_COMM_WORLD_LOCAL_RANK: '1', OMPI_COMM_WORLD_SIZE: '6' })).toEqual({
      rank: 5,
      localRank: 1,
      worldSize: 6,
      rankVariable: 'OMPI_COMM_WORLD_RANK',
    });
    expect(rankFromEnv({ PMI_RANK: '2', MPI_LOCALRANKID: '0', PMI_SIZE: '4' })).toEqual({ rank: 2, localRank: 0, worldSize: 4, rankVariable: 'PMI_RANK' });
    expect(rankFromEnv({ MV2_COMM_WORLD_RANK: '1', MV2_COMM_WORLD_SIZE: '2' })).toEqual({
      rank: 1,
      localRank: null,
      worldSize: 2,
      rankVariable: 'MV2_COMM_WORLD_RANK',
    });
    expect(rankFromEnv({ SLURM_PROCID: '7', SLURM_LOCALID: '3', SLURM_NTASKS: '16' })).toEqual({
      rank: 7,
      localRank: 3,
      worldSize: 16,
      rankVariable: 'SLURM_PROCID',
    });
    expect(rankFromEnv({ PMIX_RANK: '9' })).toEqual({ rank: 9, localRank: null, worldSize: null, rankVariable: 'PMIX_RANK' });
  });

  it('takes the innermost launcher: torchrun inside srun, MPI inside a Slurm allocation', () => {
    // srun starts torchrun per node: its workers inherit the node's SLURM_PROCID and get RANK.
    expect(rankFromEnv({ SLURM_PROCID: '1', SLURM_LOCALID: '0', SLURM_NTASKS: '2', RANK: '9', LOCAL_RANK: '1', WORLD_SIZE: '16' })).toEqual({
      rank: 9,
      localRank: 1,
      worldSize: 16,
      rankVariable: 'RANK',
    });
    expect(rankFromEnv({ SLURM_PROCID: '0', OMPI_COMM_WORLD_RANK: '3', PMIX_RANK: '3' }).rankVariable).toBe('OMPI_COMM_WORLD_RANK');
    expect(rankFromEnv({ SLURM_PROCID: '0', PMI_RANK: '3' }).rankVariable).toBe('PMI_RANK');
    expect(rankFromEnv({ SLURM_PROCID: '4', PMIX_RANK: '4' }).rankVariable).toBe('SLURM_PROCID');
  });

  it('needs a number: an empty or odd rank variable is passed over, never read as 0', () => {
    expect(rankFromEnv({})).toEqual(NO_RANK);
    expect(rankFromEnv({ RANK: '', LOCAL_RANK: '0' })).toEqual(NO_RANK);
    expect(rankFromEnv({ RANK: '-1', PMI_RANK: 'x', SLURM_PROCID: '2' })).toMatchObject({ rank: 2, rankVariable: 'SLURM_PROCID' });
    expect(rankFromEnv({ RANK: '1', LOCAL_RANK: 'auto', WORLD_SIZE: ' 2' })).toEqual({ rank: 1, localRank: null, worldSize: null, rankVariable: 'RANK' });
  });

  it('every variable a launcher is read by is one the collector records', () => {
    for (const l of RANK_LAUNCHERS) for (const v of [l.rank, l.localRank, l.worldSize]) if (v) expect(CAPTURED_ENV).toContain(v);
  });

  it('formats a rank as reports show it', () => {
    expect(formatRank({ rank: 3, localRank: 1, worldSize: 8, rankVariable: 'RANK' })).toBe('3 of 8 (local 1)');
    expect(formatRank({ rank: 9, localRank: null, worldSize: null, rankVariable: 'PMIX_RANK' })).toBe('9');
    expect(formatRank(NO_RANK)).toBe('-');
  });
});

describe('a finished recording: each process with its rank and its variables', () => {
  // One stream per process, each with the variables its launcher would have set.
  const processes: { pid: number; env: string[] }[] = [
    { pid: 101, env: ['RANK=0', 'LOCAL_RANK=0', 'WORLD_SIZE=4', 'SLURM_PROCID=0', 'MASTER_ADDR=node-a', 'CUDA_VISIBLE_DEVICES=0'] },
    { pid: 102, env: ['RANK=3', 'LOCAL_RANK=1', 'WORLD_SIZE=4', 'SLURM_PROCID=1', 'MASTER_ADDR=node-a', 'CUDA_VISIBLE_DEVICES=1'] },
    { pid: 103, env: ['OMPI_COMM_WORLD_RANK=2', 'OMPI_COMM_WORLD_LOCAL_RANK=0', 'OMPI_COMM_WORLD_SIZE=3'] },
    { pid: 104, env: ['PMIX_RANK=5'] },
    { pid: 105, env: [] },
  ];
  const recording = path.join(dir, 'job.sqlite');

  it('stores rank, local rank, world size and the variable they came from; NULL where no launcher set one', async () => {
    const streams = processes.map(({ pid, env }) => {
      // --env with no pairs would keep the default (a torchrun rank): pass one the collector never reads instead.
      const pairs = env.length ? env : ['STREAMSCOPE_SYNTHETIC_NONE=1'];
      return syntheticStream(dir, `p${pid}`, ['--pid', String(pid), ...pairs.flatMap((e) => ['--env', e])]).stream;
    });
    const state = await ingestStreamFiles(recording, streams);
    expect(state.processes).toBe(processes.length);
    const db = openRecording(recording, { readonly: true });
    try {
      expect(
        readProcesses(db).map((p) => ({ pid: p.pid, rank: p.rank, localRank: p.localRank, worldSize: p.worldSize, rankVariable: p.rankVariable })),
      ).toEqual([
        { pid: 101, rank: 0, localRank: 0, worldSize: 4, rankVariable: 'RANK' },
        { pid: 102, rank: 3, localRank: 1, worldSize: 4, rankVariable: 'RANK' },
        { pid: 103, rank: 2, localRank: 0, worldSize: 3, rankVariable: 'OMPI_COMM_WORLD_RANK' },
        { pid: 104, rank: 5, localRank: null, worldSize: null, rankVariable: 'PMIX_RANK' },
        { pid: 105, rank: null, localRank: null, worldSize: null, rankVariable: null },
      ]);
    } finally {
      db.close();
    }
    // The raw variables, every one kept (the store holds them as the collector wrote them).
    const raw = new Database(recording, { readonly: true });
    try {
      const rows = raw.prepare('SELECT pid, name, value FROM process_env ORDER BY pid, name').all() as { pid: number; name: string; value: string }[];
      const want = processes.flatMap(({ pid, env }) =>
        (env.length ? env : ['STREAMSCOPE_SYNTHETIC_NONE=1']).map((e) => ({ pid, name: e.slice(0, e.indexOf('=')), value: e.slice(e.indexOf('=') + 1) })),
      );
      expect(rows).toEqual(want.sort((a, b) => a.pid - b.pid || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)));
    } finally {
      raw.close();
    }
  });
});

describe('recorded on an H100 under torchrun (test/fixtures/recordings/torchrun-*.sqlite, scripts/device/ranks-check.sh)', () => {
  const fixture = (name: string) => path.join(repoRoot, 'test/fixtures/recordings', name);
  const env = (file: string, pid: number) => {
    const db = new Database(file, { readonly: true });
    try {
      return Object.fromEntries(db.prepare('SELECT name, value FROM process_env WHERE pid = ?').raw().all(pid) as [string, string][]);
    } finally {
      db.close();
    }
  };

  it('one recorder around torchrun: the worker is rank 0 of 1 from RANK, the agent (which initialised CUDA too) no rank', () => {
    const db = openRecording(fixture('torchrun-node.sqlite'), { readonly: true });
    let processes;
    try {
      processes = readProcesses(db);
    } finally {
      db.close();
    }
    const agent = processes.find((p) => p.command?.includes('bin/torchrun'));
    const worker = processes.find((p) => p.command?.includes('-u /tmp/ranks_prog.py'));
    expect(processes).toHaveLength(2);
    expect(agent).toMatchObject({ rank: null, localRank: null, worldSize: null, rankVariable: null });
    expect(worker).toMatchObject({ rank: 0, localRank: 0, worldSize: 1, rankVariable: 'RANK', host: 'vm', complete: true });
    // What torchrun set in its worker, as the collector read it there.
    expect(env(fixture('torchrun-node.sqlite'), worker!.pid)).toMatchObject({
      RANK: '0',
      LOCAL_RANK: '0',
      WORLD_SIZE: '1',
      LOCAL_WORLD_SIZE: '1',
      GROUP_RANK: '0',
      MASTER_ADDR: '127.0.0.1',
      MASTER_PORT: '29500',
      TORCHELASTIC_RUN_ID: 'none',
    });
    expect(env(fixture('torchrun-node.sqlite'), agent!.pid).RANK).toBeUndefined();
  });

  it('a recorder per rank started by torchrun --no-python: its target is the rank', () => {
    const db = openRecording(fixture('torchrun-rank.sqlite'), { readonly: true });
    try {
      expect(readProcesses(db)).toEqual([
        {
          pid: expect.any(Number) as number,
          command: 'python3 /tmp/ranks_prog.py --dist',
          host: 'vm',
          complete: true,
          rank: 0,
          localRank: 0,
          worldSize: 1,
          rankVariable: 'RANK',
        },
      ]);
    } finally {
      db.close();
    }
  });
});

describe('migration 0008 on a recording made before it', () => {
  it('adds the rank columns (NULL: nothing was recorded to tell) and an empty process_env; every process row stays', () => {
    const file = path.join(dir, 'v7.sqlite');
    fs.copyFileSync(path.join(repoRoot, 'test/fixtures/recordings/multiprocess_cupy.sqlite'), file);
    const old = new Database(file);
    // Schema 11's addition (0011-cpu-ops.ts), 10's (0010-nvtx-payload.ts) and 9's (0009-merge-sources.ts) go first.
    if ((old.pragma('user_version', { simple: true }) as number) >= 11) old.exec('DROP TABLE cpu_ops');
    if ((old.pragma('user_version', { simple: true }) as number) >= 10) old.exec('ALTER TABLE nvtx_ranges DROP COLUMN payload');
    if ((old.pragma('user_version', { simple: true }) as number) >= 9)
      old.exec('DROP TABLE sources; DROP TABLE source_rows; ALTER TABLE processes DROP COLUMN source_id; ALTER TABLE processes DROP COLUMN original_pid');
    if ((old.pragma('user_version', { simple: true }) as number) >= 8) {
      old.exec(
        'DROP TABLE process_env; ALTER TABLE processes DROP COLUMN rank; ALTER TABLE processes DROP COLUMN local_rank; ALTER TABLE processes DROP COLUMN world_size; ALTER TABLE processes DROP COLUMN rank_variable',
      );
      old.pragma('user_version = 7');
    }
    const before = old.prepare('SELECT * FROM processes ORDER BY pid').all();
    old.close();
    const db = openRecording(file);
    try {
      expect(db.pragma('user_version', { simple: true })).toBe(latestSchemaVersion);
      // Without the columns of later schemas (0009's source_id, original_pid: NULL outside a merged recording).
      const after = (db.prepare('SELECT * FROM processes ORDER BY pid').all() as Record<string, unknown>[]).map(
        ({ source_id: _source, original_pid: _original, ...rest }) => rest,
      );
      expect(after.length).toBeGreaterThan(1);
      expect(after.map(({ rank, local_rank, world_size, rank_variable, ...rest }) => ({ rest, rank: [rank, local_rank, world_size, rank_variable] }))).toEqual(
        before.map((rest) => ({ rest, rank: [null, null, null, null] })),
      );
      expect(db.prepare('SELECT count(*) FROM process_env').pluck().get()).toBe(0);
      expect(readProcesses(db).every((p) => p.rank === null && p.rankVariable === null)).toBe(true);
    } finally {
      db.close();
    }
  });
});

describe('record -o placeholders', () => {
  const ctx = (env: Record<string, string>) => ({ env, hostname: 'gpu-node-7', pid: 4242 });
  const torchrunRank = { RANK: '3', LOCAL_RANK: '1', WORLD_SIZE: '8' };

  it('fills %h, %p, %r, %l and %%', () => {
    expect(expandOutputName('run-%h-%r.sqlite', ctx(torchrunRank))).toBe('run-gpu-node-7-3.sqlite');
    expect(expandOutputName('out/%h/%p-rank%r-local%l.sqlite', ctx(torchrunRank))).toBe('out/gpu-node-7/4242-rank3-local1.sqlite');
    expect(expandOutputName('node-%h.sqlite', ctx({}))).toBe('node-gpu-node-7.sqlite');
    expect(expandOutputName('100%%-%%r.sqlite', ctx({}))).toBe('100%-%r.sqlite');
    expect(expandOutputName('plain.sqlite', ctx({}))).toBe('plain.sqlite');
    expect(expandOutputName('run-%r.sqlite', ctx({ OMPI_COMM_WORLD_RANK: '12' }))).toBe('run-12.sqlite');
    expect(expandOutputName('run-%r-%l.sqlite', ctx({ SLURM_PROCID: '5', SLURM_LOCALID: '1' }))).toBe('run-5-1.sqlite');
  });

  it('%r without a launcher is a usage error that names the variables it looked for', () => {
    let err: unknown;
    try {
      expandOutputName('run-%r.sqlite', ctx({}));
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RecordError);
    expect((err as RecordError).exitCode).toBe(2);
    const message = (err as Error).message;
    expect(message).toMatch(
      /^-o run-%r\.sqlite: %r is this process's rank, but no launcher set one: none of RANK \(torchrun\), OMPI_COMM_WORLD_RANK \(Open MPI\)/,
    );
    for (const l of RANK_LAUNCHERS) expect(message).toContain(l.rank);
  });

  it('%l where the launcher set no local rank, unknown placeholders and a lone % are usage errors too', () => {
    expect(() => expandOutputName('r%l.sqlite', ctx({ PMIX_RANK: '2' }))).toThrow('its launcher (PMIX_RANK=2) set no local rank');
    expect(() => expandOutputName('r%l.sqlite', ctx({}))).toThrow(/none of LOCAL_RANK \(torchrun\), .*SLURM_LOCALID \(Slurm srun\) holds a number/);
    expect(() => expandOutputName('run-%x.sqlite', ctx({}))).toThrow(
      'unknown placeholder %x (placeholders: %h host name, %p pid, %r rank, %l local rank, %% a literal %)',
    );
    expect(() => expandOutputName('run-100%', ctx({}))).toThrow('a lone % at the end');
  });
});
