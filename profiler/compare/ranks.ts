// The per-rank rows of a diff of two multi-rank recordings (a job merged by
// `streamscope merge`, or a launcher's ranks recorded by one recorder):
// which process of B is which process of A, and for each pair its GPU
// span, compute, communication, exposed communication and overlap
// (analysis/communication.ts's breakdown, RankTime.total), its streams
// paired within it (streams.ts), and which GPUs of the two recordings are
// the same rank's (for the per-device rows).
//
// Pids differ between runs, so processes are paired by their recorded rank;
// processes without one (a job recorded without a launcher's variables,
// an importer that knows none) in pid order among themselves. A rank on
// one side only is a row with the other side null.
import type { Analysis } from '../analysis/diagnosis/analyze.ts';
import type { RankTime } from '../contract/communication.ts';
import type { RankDiff, RankSide, StreamDiff } from '../contract/diff.ts';
import { delta } from './delta.ts';
import { pairStreams, streamActivity, type StreamActivity } from './streams.ts';

/** Whether a recording is more than one process's work, holds a rank, or communicates: its diff gets per-rank rows. */
export function isMultiRank(x: Analysis): boolean {
  const c = x.communication;
  return c.present || c.ranks.length > 1 || c.ranks.some((r) => r.rank !== null);
}

export interface ProcessPair {
  pairedBy: RankDiff['pairedBy'];
  rank: number | null;
  label: string;
  a: RankTime | null;
  b: RankTime | null;
}

const byPid = (x: RankTime, y: RankTime) => x.pid - y.pid;

/** Ranked processes by rank (the k-th of a rank by pid with the k-th), then the others in pid order. */
export function pairProcesses(a: RankTime[], b: RankTime[]): ProcessPair[] {
  const ranked = (xs: RankTime[]) => {
    const m = new Map<number, RankTime[]>();
    for (const x of [...xs].sort(byPid)) if (x.rank !== null) m.set(x.rank, [...(m.get(x.rank) ?? []), x]);
    return m;
  };
  const ra = ranked(a);
  const rb = ranked(b);
  const pairs: ProcessPair[] = [];
  for (const rank of [...new Set([...ra.keys(), ...rb.keys()])].sort((x, y) => x - y)) {
    const xs = ra.get(rank) ?? [];
    const ys = rb.get(rank) ?? [];
    const n = Math.max(xs.length, ys.length);
    for (let i = 0; i < n; i++)
      pairs.push({ pairedBy: 'rank', rank, label: n > 1 ? `rank ${rank} #${i + 1}` : `rank ${rank}`, a: xs[i] ?? null, b: ys[i] ?? null });
  }
  const ua = a.filter((x) => x.rank === null).sort(byPid);
  const ub = b.filter((x) => x.rank === null).sort(byPid);
  for (let i = 0; i < Math.max(ua.length, ub.length); i++) {
    const x = ua[i] ?? null;
    const y = ub[i] ?? null;
    pairs.push({ pairedBy: 'pid-order', rank: null, label: `pid ${x?.pid ?? '-'} / ${y?.pid ?? '-'}`, a: x, b: y });
  }
  return pairs;
}

/** A device of A against a device of B (device ids; null: on one side only), and the rank row it was paired through. */
export interface DevicePair {
  a: number | null;
  b: number | null;
  rank: string | null;
}

function sideOf(r: RankTime | null): RankSide | null {
  return r && { pid: r.pid, host: r.host, worldSize: r.worldSize, gpus: r.devices.map((d) => d.gpu) };
}

/** Each process's streams by device. */
function streamsByProcess(streams: StreamActivity[]): Map<number, Map<number, StreamActivity[]>> {
  const m = new Map<number, Map<number, StreamActivity[]>>();
  for (const s of streams) {
    let perDevice = m.get(s.pid);
    if (!perDevice) m.set(s.pid, (perDevice = new Map()));
    perDevice.set(s.deviceId, [...(perDevice.get(s.deviceId) ?? []), s]);
  }
  return m;
}

/** The process's first operation start to its last operation end; null when it has none. */
function spanOf(perDevice: Map<number, StreamActivity[]> | undefined): number | null {
  let s = Infinity;
  let e = -Infinity;
  for (const streams of perDevice?.values() ?? [])
    for (const x of streams) {
      if (x.firstStartNs < s) s = x.firstStartNs;
      if (x.lastEndNs > e) e = x.lastEndNs;
    }
  return e >= s ? e - s : null;
}

/**
 * The per-rank rows of A against B and the device pairs they imply: the
 * k-th GPU (by ordinal) of a rank with the k-th of its pair, each device
 * once (the first rank that ran on it claims it).
 */
export function rankDiffs(a: Analysis, b: Analysis): { ranks: RankDiff[]; devices: DevicePair[] } {
  const sa = streamsByProcess(streamActivity(a.trace));
  const sb = streamsByProcess(streamActivity(b.trace));
  const devices: DevicePair[] = [];
  const claimedA = new Set<number>();
  const claimedB = new Set<number>();
  const ranks = pairProcesses(a.communication.ranks, b.communication.ranks).map((p): RankDiff => {
    const da = p.a?.devices ?? [];
    const db = p.b?.devices ?? [];
    const streams: StreamDiff[] = [];
    for (let k = 0; k < Math.max(da.length, db.length); k++) {
      const x = da[k]?.deviceId ?? null;
      const y = db[k]?.deviceId ?? null;
      for (const s of pairStreams(x === null ? [] : (sa.get(p.a!.pid)?.get(x) ?? []), y === null ? [] : (sb.get(p.b!.pid)?.get(y) ?? []))) {
        streams.push(s);
      }
      const pa = x !== null && !claimedA.has(x) ? x : null;
      const pb = y !== null && !claimedB.has(y) ? y : null;
      if (pa === null && pb === null) continue;
      if (pa !== null) claimedA.add(pa);
      if (pb !== null) claimedB.add(pb);
      devices.push({ a: pa, b: pb, rank: p.label });
    }
    const ta = p.a?.total;
    const tb = p.b?.total;
    return {
      pairedBy: p.pairedBy,
      rank: p.rank,
      label: p.label,
      a: sideOf(p.a),
      b: sideOf(p.b),
      gpuSpanNs: delta(p.a ? spanOf(sa.get(p.a.pid)) : null, p.b ? spanOf(sb.get(p.b.pid)) : null),
      computeNs: delta(ta?.computeNs ?? null, tb?.computeNs ?? null),
      communicationNs: delta(ta?.communicationNs ?? null, tb?.communicationNs ?? null),
      exposedNs: delta(ta?.exposedNs ?? null, tb?.exposedNs ?? null),
      overlap: delta(ta?.overlap ?? null, tb?.overlap ?? null),
      streams,
    };
  });
  return { ranks, devices };
}
