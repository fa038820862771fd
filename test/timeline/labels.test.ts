// Text the timeline draws beside and on its rows (renderer/src/timeline),
// on real recordings as the query side answers them: the iterations row's
// labels (iterations.ts iterationLabel) and the In-flight row's peaks
// (in-flight.ts inFlightPeaks).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mergeRecordings } from '../../profiler/merge/merge.ts';
import { RecordingQuery } from '../../profiler/query/recording-query.ts';
import { inFlightPeaks } from '../../renderer/src/timeline/in-flight.ts';
import { describeIteration, iterationLabel, iterationTrack, ITERATIONS_ROW, LABEL_PAD, type IterationTrack } from '../../renderer/src/timeline/iterations.ts';
import { buildGroups } from '../../renderer/src/timeline/rows.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures/recordings');

describe('iteration labels', () => {
  // torch_prefetch: 12 'step' instances, a long warm-up whose GPU span runs under the next ones.
  let track: IterationTrack;
  beforeAll(() => {
    const q = new RecordingQuery('a1', path.join(fixtures, 'torch_prefetch.sqlite'));
    try {
      track = iterationTrack(q.iterations(null)!)!;
    } finally {
      q.close();
    }
  });
  // 11 px system-ui is narrower than this on average: labels measured so never come out wider than placed here.
  const widths = { long: (i: number) => track.long[i]!.length * 7, short: (i: number) => track.short[i]!.length * 7 };

  /** The labels drawn on a canvas `width` px wide showing [start, end]: text, its x extent, its box. */
  function drawn(start: number, end: number, width: number) {
    const xOf = (ns: number) => ((ns - start) / (end - start)) * width;
    const out: { i: number; text: string; x0: number; x1: number; box: [number, number] }[] = [];
    for (let i = 0; i < track.rows.length; i++) {
      const l = iterationLabel(track, i, xOf, width, widths);
      if (!l) continue;
      const w = l.text === track.long[i] ? widths.long(i) : widths.short(i);
      out.push({ i, text: l.text, x0: l.x, x1: l.x + w, box: [xOf(track.startNs[i]!), xOf(track.endNs[i]!)] });
    }
    return out;
  }

  it('the boxes overlap (the case labels printed over each other in)', () => {
    let overlaps = 0;
    for (let i = 0; i + 1 < track.rows.length; i++) if (track.startNs[i + 1]! < track.endNs[i]!) overlaps++;
    expect(overlaps).toBeGreaterThan(0);
  });

  it('at every zoom, each label lies inside its own box and on screen, and no two labels meet', () => {
    const first = track.startNs[0]!;
    const last = track.endNs[track.rows.length - 1]!;
    const span = last - first;
    for (const width of [300, 900, 1600])
      for (const [a, b] of [
        [first - span * 0.1, last + span * 0.1],
        [first + span * 0.4, first + span * 0.7],
        [first + span * 0.6, first + span * 0.65],
      ] as const) {
        const labels = drawn(a, b, width);
        for (const l of labels) {
          expect(l.x0 - LABEL_PAD).toBeGreaterThanOrEqual(Math.max(0, l.box[0]) - 1e-6);
          expect(l.x1 + LABEL_PAD).toBeLessThanOrEqual(Math.min(width, l.box[1]) + 1e-6);
        }
        for (let k = 1; k < labels.length; k++)
          expect(labels[k]!.x0, `${width} px: ${labels[k - 1]!.text} then ${labels[k]!.text}`).toBeGreaterThan(labels[k - 1]!.x1);
      }
  });

  it('labels every instance where the boxes are wide, with the long label where it fits; none where they are slivers', () => {
    const n = track.rows.length;
    const first = track.startNs[0]!;
    const last = track.endNs[n - 1]!;
    const wide = drawn(first, last, 200_000);
    expect(wide.map((l) => l.i)).toEqual([...Array(n).keys()].filter((i) => track.labelEndNs[i]! > track.startNs[i]!));
    expect(wide.find((l) => l.i === 0)?.text).toBe(track.long[0]);
    expect(track.long[0]).toContain('warm-up');
    expect(drawn(first, last, 12)).toEqual([]);
  });
});

describe("a job's iterations: a row per rank, labelled with the rank's own steps", () => {
  // The real four-rank DDP job (test/fixtures/ddp/four-ranks), merged as `streamscope merge` does: 'train_step' × 10 on
  // each rank, run at the same time. One row of all of them drew every rank's steps over the others', numbered 1–40.
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'job-iterations-'));
  afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
  let track: IterationTrack;
  let groups: ReturnType<typeof buildGroups>;
  beforeAll(() => {
    const dir = path.resolve(import.meta.dirname, '../fixtures/ddp/four-ranks');
    const out = path.join(tmp, 'ddp.sqlite');
    mergeRecordings(
      [0, 1, 2, 3].map((k) => path.join(dir, `ddp-rank${k}.sqlite`)),
      out,
    );
    const q = new RecordingQuery('job', out);
    try {
      track = iterationTrack(q.iterations(null)!)!;
      groups = buildGroups(q.summary(), track);
    } finally {
      q.close();
    }
  });

  it('each rank gets its own row, in its own group, of its own instances', () => {
    expect(track.lanes).toHaveLength(4);
    expect(new Set(track.lanes.map((l) => l.rowId)).size).toBe(4);
    for (const lane of track.lanes) {
      expect(lane.rowId).not.toBe(ITERATIONS_ROW);
      for (const i of lane.instances) expect(track.rows[i]!.pid).toBe(lane.pid);
      const rows = groups.filter((g) => g.id === `proc:${lane.pid}`).flatMap((g) => g.rows);
      expect(rows.filter((r) => r.kind === 'iter').map((r) => r.id)).toEqual([lane.rowId]);
    }
    expect(track.lanes.reduce((n, l) => n + l.instances.length, 0)).toBe(track.rows.length);
  });

  it("labels a box with its rank's step (#1, #2, … on every rank), and says the rank and the instance a click analyses", () => {
    for (const lane of track.lanes) {
      expect([...lane.instances].map((i) => track.short[i])).toEqual([...lane.instances].map((_, k) => `#${k + 1}`));
      const i = lane.instances[1]!;
      const r = track.rows[i]!;
      expect(describeIteration(track, i).title).toBe(
        `${track.name} #2 of ${lane.instances.length}, rank ${r.rank} (${r.host}) · #${r.instance} of the ${track.rows.length} in the recording`,
      );
    }
  });

  it("a label ends before the next box of its own row, not another rank's", () => {
    for (const lane of track.lanes)
      for (let x = 0; x + 1 < lane.instances.length; x++) {
        const i = lane.instances[x]!;
        expect(track.labelEndNs[i]).toBe(Math.max(track.startNs[i]!, Math.min(track.endNs[i]!, track.startNs[lane.instances[x + 1]!]!)));
      }
  });
});

describe('the In-flight row label', () => {
  const file = path.join(fixtures, 'normalise-concurrent.sqlite');
  let q: RecordingQuery;
  beforeAll(() => {
    q = new RecordingQuery('a1', file);
  });
  afterAll(() => q.close());

  it('names the peak of each lane that has work and leaves out the empty ones', () => {
    const s = q.summary();
    const device = s.devices[0]!.id;
    const c = q.concurrency({ deviceId: device, startNs: s.startNs, endNs: s.endNs, buckets: 800 });
    const db = new Database(file, { readonly: true });
    const d2h = (db.prepare('SELECT count(*) AS n FROM memcpys WHERE copy_kind = 2').get() as { n: number }).n;
    db.close();
    const text = inFlightPeaks(c);
    // One kernel at a time on this GPU, copies both ways: "≤1 kernel", not "≤1 kernels".
    expect([Math.max(...c.kernels), Math.max(...c.h2d), Math.max(...c.d2h)]).toEqual([1, 1, 1]);
    expect(d2h).toBeGreaterThan(0);
    expect(text).toBe('≤1 kernel · ≤1 HtoD · ≤1 DtoH');
    // Without its DtoH copies, the lane is left out rather than "≤0 DtoH".
    expect(inFlightPeaks({ ...c, d2h: c.d2h.map(() => 0) })).toBe('≤1 kernel · ≤1 HtoD');
  });

  it('says there is none where the window holds no GPU work (before the first operation)', () => {
    const db = new Database(file, { readonly: true });
    const firstOp = (
      db
        .prepare('SELECT min(start_ns) AS t FROM (SELECT start_ns FROM kernels UNION ALL SELECT start_ns FROM memcpys UNION ALL SELECT start_ns FROM memsets)')
        .get() as { t: number }
    ).t;
    db.close();
    const s = q.summary();
    expect(firstOp).toBeGreaterThan(s.startNs + 1000);
    const c = q.concurrency({ deviceId: s.devices[0]!.id, startNs: s.startNs, endNs: firstOp - 1, buckets: 100 });
    expect(inFlightPeaks(c)).toBe('no kernels, HtoD or DtoH here');
    expect(inFlightPeaks({ kernels: [0, 1, 0], h2d: [0, 0, 0], d2h: [0, 2, 1] })).toBe('≤1 kernel · ≤2 DtoH');
  });
});
