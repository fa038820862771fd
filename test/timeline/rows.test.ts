// The timeline's row model (renderer/src/timeline/rows.ts) on real
// summaries, as the query side answers them: every fixture without ranks
// keeps its flat groups (a process's threads, a GPU's streams), the real
// torchrun and NCCL recordings and merged jobs nest host → rank → GPU →
// streams, folding works
// through layout(), and a job of more than FOLD_RANKS_ABOVE ranks opens
// folded. The jobs are merged (real merge) from per-rank recordings
// CONSTRUCTED through RecordingWriter (test/helpers/rank-files.ts), not
// recorded on GPUs.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordingSummary } from '../../profiler/contract/api.ts';
import { mergeRecordings } from '../../profiler/merge/merge.ts';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import {
  buildGroups,
  defaultFolded,
  FOLD_RANKS_ABOVE,
  FOLD_THREAD_ROWS_ABOVE,
  groupsToUnfold,
  isJob,
  layout,
  type TrackGroup,
} from '../../renderer/src/timeline/rows.ts';
import { generate } from '../../bench/generate-recording.ts';
import { tempDir } from '../helpers/native.ts';
import { writeRankFiles } from '../helpers/rank-files.ts';
import { writeRankRecording } from '../helpers/rank-recordings.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');
let dir: string;
beforeAll(() => {
  dir = tempDir('rows');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

function summaryOf(file: string): RecordingSummary {
  const q = new RecordingQuery('a1', file);
  try {
    return q.summary();
  } finally {
    q.close();
  }
}

/** A job of `world` ranks, two per host, merged; its summary. */
function job(name: string, world: number): RecordingSummary {
  const out = path.join(dir, `${name}.sqlite`);
  mergeRecordings(writeRankFiles(dir, name, world), out);
  return summaryOf(out);
}

const streamRows = (groups: TrackGroup[]) => groups.flatMap((g) => g.rows.filter((r) => r.kind === 'stream'));

describe('every fixture: flat groups without ranks, host → rank → GPU with them', () => {
  const files = fs.readdirSync(fixtures).filter((f) => f.endsWith('.sqlite') && f !== 'crashed.sqlite');
  it.each(files)('%s', (name) => {
    const s = summaryOf(path.join(fixtures, name));
    const groups = buildGroups(s);
    // Every fixture was recorded on one host: ranks alone make it a job.
    expect(new Set(s.processes.map((p) => p.host)).size).toBeLessThanOrEqual(1);
    const ranked = s.processes.filter((p) => p.rank !== null);
    expect(isJob(s)).toBe(ranked.length > 0);
    expect(
      streamRows(groups)
        .map((r) => r.id)
        .sort(),
    ).toEqual(s.streams.map((st) => st.rowId).sort());
    // Nothing folded but a job's ranks' CPU threads (they follow each rank's GPUs).
    const threads = groups.filter((g) => g.kind === 'threads').map((g) => g.id);
    expect([...defaultFolded(groups)].sort()).toEqual(threads.sort());
    if (ranked.length === 0) {
      // GPUs first: a group per GPU with streams, streams without a device, then processes with rows (their threads).
      expect(groups.every((g) => g.depth === 0 && g.ancestors.length === 0 && g.kind !== 'host' && g.foldedRows.length === 0)).toBe(true);
      const procs = s.processes.filter((p) => p.threads.some((t) => t.apiCalls || t.nvtxRanges)).map((p) => `proc:${p.pid}`);
      const gpus = s.devices.filter((d) => s.streams.some((st) => st.deviceId === d.id)).map((d) => `gpu:${d.id}`);
      expect(groups.map((g) => g.id)).toEqual([...gpus, ...(s.streams.some((st) => st.deviceId === null) ? ['gpu:none'] : []), ...procs]);
      for (const d of s.devices) {
        const g = groups.find((x) => x.id === `gpu:${d.id}`);
        if (!g) continue;
        // Its concurrency track, then its streams by CUPTI id.
        expect(g.rows[0]).toMatchObject({ id: `conc:${d.id}`, kind: 'conc' });
        const own = s.streams.filter((st) => st.deviceId === d.id).sort((a, b) => a.cuptiStreamId - b.cuptiStreamId);
        expect(g.rows.slice(1).map((r) => r.id)).toEqual(own.map((st) => st.rowId));
      }
      expect(groups.filter((g) => g.kind === 'process').every((g) => /^Process \d+$/.test(g.title))).toBe(true);
    } else {
      // One host group; each rank titled by rank, host and pid; each stream in a GPU group of its own process.
      expect(groups.filter((g) => g.kind === 'host').map((g) => g.id)).toEqual([`host:${s.processes[0]!.host ?? ''}`]);
      for (const p of ranked) expect(groups.find((g) => g.id === `proc:${p.pid}`)?.title).toBe(`rank ${p.rank} · ${p.host} · pid ${p.pid}`);
      for (const r of streamRows(groups)) expect(groups.find((g) => g.id === r.groupId)!.ancestors[1]).toBe(`proc:${r.stream!.pid}`);
      // One concurrency track per GPU with streams.
      const tracks = groups.flatMap((g) => g.rows.filter((r) => r.kind === 'conc').map((r) => r.deviceId));
      expect(tracks.sort()).toEqual([...new Set(s.streams.flatMap((st) => (st.deviceId === null ? [] : [st.deviceId])))].sort());
    }
  });
});

describe('the first frame shows the GPU work', () => {
  it(`a process of a thread per stream (64): GPU rows first, the process folded (more than ${FOLD_THREAD_ROWS_ABOVE} API rows), one click away`, () => {
    const file = path.join(dir, 'threads64.sqlite');
    generate(file, 20_000, 64);
    const s = summaryOf(file);
    const groups = buildGroups(s);
    const folded = defaultFolded(groups);
    const proc = groups.find((g) => g.kind === 'process')!;
    expect(proc.rows.filter((r) => r.kind === 'api')).toHaveLength(64);
    expect([...folded]).toEqual([proc.id]);
    const first = layout(groups, folded, new Set(), new Map()).rows;
    // The GPU's header, its concurrency track and its 64 streams, then the folded process's header alone.
    expect(first.map((r) => r.row?.kind ?? r.group.kind)).toEqual(['device', 'conc', ...Array(64).fill('stream'), 'process']);
    expect(layout(groups, new Set(), new Set(), new Map()).rows.filter((r) => r.row?.kind === 'api')).toHaveLength(64);
  });
});

describe('a job groups host → rank → GPU → streams', () => {
  it('a merged job of 4 ranks on 2 hosts: each rank under its host, each stream under its rank, one busy row per folded rank', () => {
    const s = job('four', 4);
    expect(isJob(s)).toBe(true);
    const groups = buildGroups(s);
    const byRank = [...s.processes].sort((a, b) => a.rank! - b.rank!);
    expect(byRank.map((p) => p.rank)).toEqual([0, 1, 2, 3]);
    const ids = groups.map((g) => g.id);
    const expected: string[] = [];
    for (const [h, ranks] of [
      ['node-0', byRank.slice(0, 2)],
      ['node-1', byRank.slice(2)],
    ] as const) {
      expected.push(`host:${h}`);
      for (const p of ranks)
        expected.push(
          `proc:${p.pid}`,
          ...[...new Set(s.streams.filter((st) => st.pid === p.pid).map((st) => `gpu:${p.pid}:${st.deviceId}`))],
          `threads:${p.pid}`,
        );
    }
    expect(ids).toEqual(expected);
    for (const p of byRank) {
      const g = groups.find((x) => x.id === `proc:${p.pid}`)!;
      // The pid it had on its host: merge renumbered all but the first.
      expect(g.title).toBe(`rank ${p.rank} · ${p.host} · pid 4242`);
      expect(g.subtitle).toContain(`local rank ${p.rank! % 2} · world size 4 · GPU 0`);
      if (p.originalPid !== null) expect(g.subtitle).toContain(`pid ${p.pid} in the merged job`);
      expect(g.ancestors).toEqual([`host:${p.host}`]);
      // Its own rows: none (no iterations track here); its thread's CUDA API row in its threads group, after its GPUs.
      expect(g.rows).toEqual([]);
      expect(groups.find((x) => x.id === `threads:${p.pid}`)).toMatchObject({ kind: 'threads', depth: 2, ancestors: [`host:${p.host}`, g.id] });
      expect(groups.find((x) => x.id === `threads:${p.pid}`)!.rows.map((r) => r.kind)).toEqual(['api']);
      const devices = [...new Set(s.streams.filter((st) => st.pid === p.pid).map((st) => st.deviceId))];
      expect(g.foldedRows).toEqual([expect.objectContaining({ id: `busy:${p.pid}`, kind: 'busy', deviceIds: devices })]);
    }
    // Every stream once, in a GPU group nested in its own rank.
    const streams = streamRows(groups);
    expect(streams.map((r) => r.id).sort()).toEqual(s.streams.map((st) => st.rowId).sort());
    for (const r of streams) {
      const g = groups.find((x) => x.id === r.groupId)!;
      expect(g.kind).toBe('device');
      expect(g.ancestors[1]).toBe(`proc:${r.stream!.pid}`);
    }
    const hosts = groups.filter((g) => g.kind === 'host');
    expect(hosts.map((g) => [g.title, g.contents])).toEqual([
      ['host node-0', '2 ranks'],
      ['host node-1', '2 ranks'],
    ]);
    expect([...defaultFolded(groups)].every((id) => id.startsWith('threads:'))).toBe(true);
  });

  it('layout: a folded rank shows its busy row instead of its rows; a folded host hides its ranks; hidden rows stay hidden', () => {
    const s = job('layout', 4);
    const groups = buildGroups(s);
    const [r0, r1] = [...s.processes].sort((a, b) => a.rank! - b.rank!);
    const all = layout(groups, new Set(), new Set(), new Map());
    const foldRank = layout(groups, new Set([`proc:${r1!.pid}`]), new Set(), new Map());
    const ownRows = all.rows.filter((r) => r.type === 'row' && (r.group.id === `proc:${r1!.pid}` || r.group.ancestors.includes(`proc:${r1!.pid}`)));
    expect(ownRows.length).toBe(1 + 1 + 2); // CUDA API, In flight, two streams
    expect(foldRank.rows.filter((r) => r.type === 'row').map((r) => r.id)).toEqual([
      ...all.rows
        .filter((r) => r.type === 'row' && !ownRows.includes(r))
        .map((r) => r.id)
        .slice(0, 4),
      `busy:${r1!.pid}`,
      ...all.rows
        .filter((r) => r.type === 'row' && !ownRows.includes(r))
        .map((r) => r.id)
        .slice(4),
    ]);
    // Its GPU group's header is gone too; the rank's header stays.
    expect(foldRank.byId.has(`proc:${r1!.pid}`)).toBe(true);
    expect([...foldRank.byId.keys()].some((id) => id.startsWith(`gpu:${r1!.pid}:`))).toBe(false);
    expect(foldRank.height).toBeLessThan(all.height);
    const foldHost = layout(groups, new Set(['host:node-0']), new Set(), new Map());
    expect(foldHost.byId.has('host:node-0')).toBe(true);
    for (const p of [r0!, r1!]) expect(foldHost.byId.has(`proc:${p.pid}`)).toBe(false);
    expect(foldHost.rows.filter((r) => r.type === 'row').every((r) => r.group.ancestors[0] === 'host:node-1')).toBe(true);
    const hideBusy = layout(groups, new Set([`proc:${r1!.pid}`]), new Set([`busy:${r1!.pid}`]), new Map());
    expect(hideBusy.byId.has(`busy:${r1!.pid}`)).toBe(false);
    // Showing a stream of a folded rank unfolds the host, the rank and the GPU group, outermost first.
    const st = s.streams.find((x) => x.pid === r1!.pid)!;
    expect(groupsToUnfold(groups, st.rowId)).toEqual(['host:node-0', `proc:${r1!.pid}`, `gpu:${r1!.pid}:${st.deviceId}`]);
  });

  it(`a job of more than ${FOLD_RANKS_ABOVE} ranks opens with every rank folded: one busy row per rank, no stream row`, () => {
    const at = (n: number) => {
      const groups = buildGroups(job(`ranks${n}`, n));
      return { groups, folded: defaultFolded(groups) };
    };
    expect([...at(FOLD_RANKS_ABOVE).folded].every((id) => id.startsWith('threads:'))).toBe(true);
    const { groups, folded } = at(FOLD_RANKS_ABOVE + 4);
    expect([...folded].sort()).toEqual(
      groups
        .filter((g) => g.kind === 'process' || g.kind === 'threads')
        .map((g) => g.id)
        .sort(),
    );
    const first = layout(groups, folded, new Set(), new Map()).rows.filter((r) => r.type === 'row');
    expect(first.map((r) => r.row!.kind)).toEqual(Array(FOLD_RANKS_ABOVE + 4).fill('busy'));
  });

  it('a real torchrun recording (a recorder for the node): its rank under its host, torchrun itself a process beside it', () => {
    const s = summaryOf(path.join(fixtures, 'torchrun-node.sqlite'));
    const groups = buildGroups(s);
    const ranked = s.processes.find((p) => p.rank !== null)!;
    const launcher = s.processes.find((p) => p.rank === null)!;
    expect(groups[0]).toMatchObject({ id: `host:${ranked.host}`, kind: 'host', contents: '1 rank · 1 other process' });
    expect(groups.map((g) => g.id).slice(1, 3)).toEqual([`proc:${ranked.pid}`, `gpu:${ranked.pid}:1`]);
    expect(groups.find((g) => g.id === `proc:${ranked.pid}`)!.title).toBe(`rank 0 · ${ranked.host} · pid ${ranked.pid}`);
    expect(groups.find((g) => g.id === `proc:${launcher.pid}`)!.title).toBe(`Process ${launcher.pid}`);
    expect(streamRows(groups).length).toBe(s.streams.length);
  });

  it('recordings of two hosts without ranks (merged): grouped by host, each process by its pid', () => {
    const files = [0, 1].map((r) => {
      const file = path.join(dir, `unranked-${r}.sqlite`);
      writeRankRecording(
        { file, host: `h${r}`, rank: r, pid: 100 + r, clockOffsetNs: 0, originNs: 1_795_000_000_000_000_000n + BigInt(r), steps: 5, jitterNs: 100 },
        1_795_000_000_000_000_000n,
      );
      return file;
    });
    const out = path.join(dir, 'unranked.sqlite');
    mergeRecordings(files, out);
    // The writer leaves processes.host NULL: the merged recording knows its hosts from its sources only.
    const s = summaryOf(out);
    s.processes.forEach((p, i) => (p.host = `h${i}`));
    expect(isJob(s)).toBe(true);
    const groups = buildGroups(s);
    expect(groups.filter((g) => g.kind === 'host').map((g) => [g.id, g.contents])).toEqual([
      ['host:h0', '1 process'],
      ['host:h1', '1 process'],
    ]);
    expect(groups.filter((g) => g.kind === 'process').map((g) => g.title)).toEqual(['Process 100', 'Process 101']);
    // Hosts by name, numbers as numbers, whatever the pids: node-2 before node-10.
    s.processes.forEach((p, i) => (p.host = ['node-10', 'node-2'][i]!));
    expect(
      buildGroups(s)
        .filter((g) => g.kind === 'host')
        .map((g) => g.id),
    ).toEqual(['host:node-2', 'host:node-10']);
  });
});
