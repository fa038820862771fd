// For every pair of streams with work on a device: how long one had work
// queued (issued by the host, not yet started) and was not running, while
// the other ran. A large value for (A, B) with no overlap between them
// says A waited behind B: the serialization the diagnosis explains.
//
// Per stream, "waiting" = union of [issue, start) of its ops minus the time
// it ran; "running" = its ops (serialized within a stream, so disjoint).
// Both lists are sorted, so a k-way merge over the streams' boundaries
// visits every change once: O(N log S) plus, per elementary segment, the
// (waiting × running) pairs it credits.
import type { Ns } from '../contract/time.ts';
import { subtract, unionOfPairs, type IntervalList } from './intervals.ts';
import type { Trace } from './trace.ts';

export interface StreamPairs {
  deviceId: number;
  streamIds: number[];
  /** waitedBehind[a][b]: time stream a had queued work and did not run while stream b ran. */
  waitedBehind: Ns[][];
  /** overlap[a][b]: time both ran. */
  overlap: Ns[][];
  /** Per stream (same order as streamIds): when it waited without running, and when it ran. */
  waiting: IntervalList[];
  running: IntervalList[];
}

/** Per op: when the host issued it (the start of its API call; the op's own start when unknown). */
export type IssueTimes = Float64Array;

export function streamPairs(trace: Trace, issue: IssueTimes): StreamPairs[] {
  const { ops } = trace;
  const byDevice = new Map<number, Map<number, number[]>>();
  for (let i = 0; i < ops.length; i++) {
    const d = ops.device[i]!;
    let streams = byDevice.get(d);
    if (!streams) byDevice.set(d, (streams = new Map()));
    let list = streams.get(ops.stream[i]!);
    if (!list) streams.set(ops.stream[i]!, (list = []));
    list.push(i);
  }
  const out: StreamPairs[] = [];
  for (const [deviceId, streams] of [...byDevice].sort((a, b) => a[0] - b[0])) {
    const streamIds = [...streams.keys()].sort((a, b) => a - b);
    const n = streamIds.length;
    const running: IntervalList[] = [];
    const waiting: IntervalList[] = [];
    for (const s of streamIds) {
      const idx = streams.get(s)!;
      const starts = Float64Array.from(idx, (i) => ops.start[i]!);
      const run = unionOfPairs(
        starts,
        Float64Array.from(idx, (i) => ops.end[i]!),
      );
      const qs = Float64Array.from(idx, (i) => Math.min(issue[i]!, ops.start[i]!));
      const qe = starts;
      running.push(run);
      waiting.push(subtract(unionOfPairs(qs, qe), run));
    }
    const waitedBehind = Array.from({ length: n }, () => new Array<number>(n).fill(0));
    const overlap = Array.from({ length: n }, () => new Array<number>(n).fill(0));
    sweep(
      waiting,
      running,
      (a, b, t) => {
        waitedBehind[a]![b]! += t;
      },
      (a, b, t) => {
        overlap[a]![b]! += t;
      },
    );
    out.push({ deviceId, streamIds, waitedBehind, overlap, waiting, running });
  }
  return out;
}

/**
 * Walks the boundaries of 2·S sorted lists in time order (binary heap keyed
 * by the next boundary of each list) and credits each elementary segment.
 */
function sweep(
  waiting: IntervalList[],
  running: IntervalList[],
  creditWait: (a: number, b: number, t: Ns) => void,
  creditOverlap: (a: number, b: number, t: Ns) => void,
): void {
  const lists = [...waiting, ...running];
  const S = waiting.length;
  const pos = new Int32Array(lists.length); // next boundary index in each list
  const heap: number[] = [];
  const key = (l: number) => lists[l]![pos[l]!]!;
  const push = (l: number) => {
    heap.push(l);
    let c = heap.length - 1;
    while (c > 0) {
      const p = (c - 1) >> 1;
      if (key(heap[p]!) <= key(heap[c]!)) break;
      [heap[p], heap[c]] = [heap[c]!, heap[p]!];
      c = p;
    }
  };
  const pop = (): number => {
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length > 0) {
      heap[0] = last;
      let p = 0;
      for (;;) {
        const l = 2 * p + 1;
        const r = l + 1;
        let m = p;
        if (l < heap.length && key(heap[l]!) < key(heap[m]!)) m = l;
        if (r < heap.length && key(heap[r]!) < key(heap[m]!)) m = r;
        if (m === p) break;
        [heap[p], heap[m]] = [heap[m]!, heap[p]!];
        p = m;
      }
    }
    return top;
  };
  for (let l = 0; l < lists.length; l++) if (lists[l]!.length > 0) push(l);
  const isWaiting = new Uint8Array(S);
  const isRunning = new Uint8Array(S);
  const waitingSet: number[] = [];
  const runningSet: number[] = [];
  let prev = heap.length ? key(heap[0]!) : 0;
  while (heap.length) {
    const l = pop();
    const t = key(l);
    const dt = t - prev;
    if (dt > 0) {
      for (const a of waitingSet) for (const b of runningSet) creditWait(a, b, dt);
      for (let x = 0; x < runningSet.length; x++) {
        for (let y = 0; y < runningSet.length; y++) if (x !== y) creditOverlap(runningSet[x]!, runningSet[y]!, dt);
      }
    }
    prev = t;
    // Even positions open an interval, odd ones close it.
    const opening = pos[l]! % 2 === 0;
    const stream = l < S ? l : l - S;
    const flags = l < S ? isWaiting : isRunning;
    const set = l < S ? waitingSet : runningSet;
    if (opening) {
      flags[stream] = 1;
      set.push(stream);
    } else {
      flags[stream] = 0;
      set.splice(set.indexOf(stream), 1);
    }
    pos[l]!++;
    if (pos[l]! < lists[l]!.length) push(l);
  }
}
