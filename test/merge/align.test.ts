// Clock alignment across hosts with a known skew injected. The per-rank
// recordings here are CONSTRUCTED FOR THE ARITHMETIC (test/helpers/rank-recordings.ts,
// through RecordingWriter), not recorded: no multi-host NCCL recording
// exists on this machine yet. Each rank's all-reduce ends at the same true
// time as every other rank's, ± a uniform jitter; each host's clock is off
// by a chosen offset. merge must find each host's correction within the
// jitter, say what is left (the residual), and fall back to the recorded
// times, saying so, where no collective matches.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { alignClocks, type RankCollectives } from '../../profiler/merge/align.ts';
import { readCollectives } from '../../profiler/merge/collectives.ts';
import { mergeRecordings } from '../../profiler/merge/merge.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { tempDir } from '../helpers/native.ts';
import { NCCL_ALL_REDUCE, stepEnd, writeRankRecording, type RankSpec } from '../helpers/rank-recordings.ts';
import { zoneRuleProblems } from '../helpers/zones.ts';

const JOB = 1_795_000_000_000_000_000n; // true time of the job's start, ns since the epoch
const JITTER = 2_000; // ± 2 µs: how far apart one collective's ends lie on the ranks
const STEPS = 60;

let dir: string;
beforeAll(() => {
  dir = tempDir('align');
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

/** One recording per rank; rank r on host `hosts[r]` whose clock is off by `offsets[host]`. */
function job(name: string, ranks: { host: string; collectives?: boolean }[], offsets: Record<string, number>): string[] {
  return ranks.map((r, rank) => {
    const spec: RankSpec = {
      file: path.join(dir, `${name}-rank${rank}.sqlite`),
      host: r.host,
      rank,
      clockOffsetNs: offsets[r.host] ?? 0,
      // Each rank's collector started at its own time (true time), within the first 1.5 ms.
      originNs: JOB + BigInt(Math.round(rank * 377_123.4)),
      steps: STEPS,
      jitterNs: JITTER,
      collectives: r.collectives,
      seed: 1000 + rank * 7,
    };
    writeRankRecording(spec, JOB);
    return spec.file;
  });
}

/** The merged all-reduce ends per step (ns), one list per rank (process), by start order on its NCCL stream. */
function mergedEnds(file: string): number[][] {
  const db = new Database(file, { readonly: true });
  try {
    const rows = db
      .prepare(
        `SELECT s.pid, k.end_ns FROM kernels k JOIN streams s ON s.id = k.stream_id JOIN strings n ON n.id = k.name_id
        WHERE instr(n.value, 'nccl') > 0 ORDER BY s.pid, k.start_ns`,
      )
      .raw()
      .all() as [number, number][];
    const byPid = new Map<number, number[]>();
    for (const [pid, end] of rows) byPid.set(pid, [...(byPid.get(pid) ?? []), end]);
    return [...byPid.values()];
  } finally {
    db.close();
  }
}

describe('clock alignment from NCCL collectives (constructed per-rank recordings, skew injected)', () => {
  it('finds a host clock 3.7 ms off within the jitter, and reports the residual', () => {
    const files = job('two-hosts', [{ host: 'node-a' }, { host: 'node-a' }, { host: 'node-b' }, { host: 'node-b' }], { 'node-b': 3_700_000 });
    const out = path.join(dir, 'two-hosts.sqlite');
    const r = mergeRecordings(files, out);
    const recovered = r.sources.map((s) => s.correctionNs);
    // Injected: node-b's clock reads 3.7 ms ahead, so its times must move back by 3.7 ms.
    expect(r.sources.map((s) => s.clock)).toEqual(['reference', 'collectives', 'collectives', 'collectives']);
    expect(Math.abs(recovered[1]! - 0)).toBeLessThanOrEqual(JITTER);
    expect(Math.abs(recovered[2]! - -3_700_000)).toBeLessThanOrEqual(JITTER);
    expect(Math.abs(recovered[3]! - -3_700_000)).toBeLessThanOrEqual(JITTER);
    for (const s of r.sources) {
      expect(s.collectives).toBe(STEPS); // one rank each, every collective matched
      // Two ends each ± 2 µs apart: the median |difference| is about the jitter, the largest under twice it.
      expect(s.residualNs!).toBeGreaterThan(0);
      expect(s.residualNs!).toBeLessThanOrEqual(JITTER);
      expect(s.residualMaxNs!).toBeLessThanOrEqual(2 * JITTER + 1000);
    }
    // Stored with the inputs' provenance, as printed.
    const stored = new Database(out, { readonly: true })
      .prepare('SELECT clock, correction_ns, collectives, residual_ns, residual_max_ns FROM sources ORDER BY id')
      .all();
    expect(stored).toEqual(
      r.sources.map((s) => ({
        clock: s.clock,
        correction_ns: s.correctionNs,
        collectives: s.collectives,
        residual_ns: s.residualNs,
        residual_max_ns: s.residualMaxNs,
      })),
    );
    // In the merged recording every step's all-reduce now ends within the jitter and the error on every rank.
    const ends = mergedEnds(out);
    expect(ends).toHaveLength(4);
    for (let step = 0; step < STEPS; step++) {
      const at = ends.map((e) => e[step]!);
      expect(Math.max(...at) - Math.min(...at), `step ${step}`).toBeLessThanOrEqual(2 * JITTER + 2 * 1000);
    }
    // The same pid on every rank (containers): four processes all the same.
    expect(r.processes).toBe(4);
    expect(r.sources.slice(1).every((s) => s.renumbered.length === 1)).toBe(true);
    expect(zoneRuleProblems(out)).toEqual([]);
  });

  it('without alignment the same job is 3.7 ms apart: what the wall clock alone would show', () => {
    const files = job('unaligned', [{ host: 'node-a' }, { host: 'node-b' }], { 'node-b': 3_700_000 });
    const out = path.join(dir, 'unaligned.sqlite');
    const r = mergeRecordings(files, out, { align: 'wall-clock' });
    expect(r.sources.map((s) => [s.clock, s.correctionNs])).toEqual([
      ['reference', 0],
      ['wall-clock', 0],
    ]);
    const [a, b] = mergedEnds(out);
    for (let step = 0; step < STEPS; step++) expect(Math.abs(b![step]! - a![step]! - 3_700_000)).toBeLessThanOrEqual(2 * JITTER);
  });

  it('finds several hosts each with its own offset, both signs', () => {
    const offsets = { h0: 0, h1: 3_700_000, h2: -12_345_678, h3: 250_000, h4: 41_000_000 };
    const hosts = Object.keys(offsets);
    const files = job(
      'five-hosts',
      hosts.map((host) => ({ host })),
      offsets,
    );
    const r = mergeRecordings(files, path.join(dir, 'five-hosts.sqlite'));
    hosts.forEach((host, i) => {
      const injected = -(offsets[host as keyof typeof offsets] - offsets.h0);
      expect(Math.abs(r.sources[i]!.correctionNs - injected), host).toBeLessThanOrEqual(JITTER);
      expect(r.sources[i]!.residualNs!).toBeLessThanOrEqual(JITTER);
    });
  });

  it('falls back to the recorded times where no collective matches, and says so; a host with an aligned recording lends it its correction', () => {
    // rank 2 runs no collectives on node-b, whose other rank does; rank 3 runs none on node-c, alone.
    const files = job('fallback', [{ host: 'node-a' }, { host: 'node-b' }, { host: 'node-b', collectives: false }, { host: 'node-c', collectives: false }], {
      'node-b': 3_700_000,
      'node-c': -900_000,
    });
    const r = mergeRecordings(files, path.join(dir, 'fallback.sqlite'));
    expect(r.sources.map((s) => s.clock)).toEqual(['reference', 'collectives', 'same-host', 'wall-clock']);
    expect(Math.abs(r.sources[1]!.correctionNs + 3_700_000)).toBeLessThanOrEqual(JITTER);
    expect(r.sources[2]!.correctionNs).toBe(r.sources[1]!.correctionNs);
    expect(r.sources[3]!.correctionNs).toBe(0);
    expect(r.sources[2]!.residualNs).toBeNull();
    expect(r.sources[3]!.residualNs).toBeNull();
    // Its shift is the difference of the recorded origins alone.
    const origin = (f: string) => BigInt(new Database(f, { readonly: true }).prepare("SELECT value FROM meta WHERE key = 'origin_ns'").pluck().get() as string);
    expect(BigInt(r.sources[3]!.shiftNs) - BigInt(r.sources[0]!.shiftNs)).toBe(origin(files[3]!) - origin(files[0]!));
    const db = openRecording(path.join(dir, 'fallback.sqlite'), { readonly: true });
    const notes = JSON.parse(db.prepare("SELECT value FROM meta WHERE key = 'notes'").pluck().get() as string) as string[];
    db.close();
    expect(notes.join('\n')).toContain('fallback-rank3.sqlite: no NCCL collective matched another host');
  });

  it('says when recordings do not hold the same number of collectives (they are matched by order)', () => {
    const files = job('uneven', [{ host: 'node-a' }, { host: 'node-b' }], { 'node-b': 1_000_000 });
    // Drop rank 1's last all-reduce: its order still matches, but the counts differ.
    const db = new Database(files[1]!);
    db.prepare(`DELETE FROM kernels WHERE id = (SELECT max(k.id) FROM kernels k JOIN strings n ON n.id = k.name_id WHERE n.value = ?)`).run(NCCL_ALL_REDUCE);
    db.close();
    const r = mergeRecordings(files, path.join(dir, 'uneven.sqlite'));
    expect(Math.abs(r.sources[1]!.correctionNs + 1_000_000)).toBeLessThanOrEqual(JITTER);
    expect(r.notes.join('\n')).toMatch(/uneven-rank1\.sqlite holds 59 NCCL collectives per rank, another recording 60/);
  });

  it('reads each rank’s collectives by stream, kind and order', () => {
    const [file] = job('read', [{ host: 'node-a' }], {});
    const db = openRecording(file!, { readonly: true });
    try {
      const ranks = readCollectives(db);
      expect([...ranks.keys()]).toHaveLength(1);
      const keys = [...ranks.values()][0]!;
      expect(keys.size).toBe(STEPS);
      // Every tenth step is an all-gather: 54 all-reduces and 6 all-gathers on stream #0.
      expect([...keys.keys()].filter((k) => k.startsWith('0#all-reduce#'))).toHaveLength(54);
      expect([...keys.keys()].filter((k) => k.startsWith('0#all-gather#'))).toHaveLength(6);
      const origin = BigInt(db.prepare("SELECT value FROM meta WHERE key = 'origin_ns'").pluck().get() as string);
      expect(Math.abs(keys.get('0#all-reduce#0')! - (stepEnd(0) + Number(JOB - origin)))).toBeLessThanOrEqual(JITTER);
    } finally {
      db.close();
    }
  });
});

describe('alignClocks (the arithmetic alone)', () => {
  const rank = (offset: number, n: number, from = 0, noise: (i: number) => number = () => 0): RankCollectives =>
    new Map(Array.from({ length: n }, (_, i) => [`0#all-reduce#${from + i}`, 1_000_000 * (from + i) + offset + noise(i)]));

  it('recovers exact offsets without noise, the first input the reference', () => {
    const a = alignClocks([{ ranks: [rank(0, 20)] }, { ranks: [rank(5_000, 20)] }, { ranks: [rank(-7_000, 20), rank(-7_000, 20)] }]);
    expect(a.map((x) => [x.clock, x.correctionNs, x.residualNs])).toEqual([
      ['reference', 0, 0],
      ['collectives', -5_000, 0],
      ['collectives', 7_000, 0],
    ]);
    expect(a[2]!.collectives).toBe(40); // two ranks × 20
  });

  it('joins a recording that shares collectives only with another non-reference one, through it', () => {
    // Input 2 shares keys 20..39 with input 1 only; input 0 has 0..19, input 1 has 10..39.
    const a = alignClocks([{ ranks: [rank(0, 20)] }, { ranks: [rank(3_000, 30, 10)] }, { ranks: [rank(-8_000, 20, 25)] }]);
    expect(a.map((x) => x.correctionNs)).toEqual([0, -3_000, 8_000]);
  });

  it('is robust to a few collectives that do not end together (a mismatched or delayed one)', () => {
    const late = (i: number) => (i % 10 === 3 ? 400_000 : 0);
    const a = alignClocks([{ ranks: [rank(0, 50)] }, { ranks: [rank(2_500, 50, 0, late)] }]);
    expect(a[1]!.correctionNs).toBe(-2_500);
    expect(a[1]!.residualNs).toBe(0);
    expect(a[1]!.residualMaxNs).toBe(400_000);
  });

  it('leaves a recording with too few shared collectives, or none, on its recorded clock', () => {
    const a = alignClocks([{ ranks: [rank(0, 2)] }, { ranks: [rank(1_000, 2)] }, { ranks: [] }]);
    expect(a.map((x) => [x.clock, x.correctionNs, x.collectives])).toEqual([
      ['reference', 0, 0],
      ['wall-clock', 0, 0],
      ['wall-clock', 0, 0],
    ]);
  });
});
