// The host calls' index, built natively (native/addon/src/call_index.cc,
// analysis/host.ts callIndexOf), against the index as host.ts defines it,
// written plainly here (a Map per process, an array per thread), on every
// real recording among the fixtures: each process's call by correlation id
// (the runtime call over the driver call inside it), the call behind each
// GPU operation, each thread's calls. A process whose ids are too sparse
// for an array is answered through a Map. Then each call's outermost call
// (call_index.cc outermostCalls) on calls nested by hand.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callIndexOf } from '../../profiler/analysis/host.ts';
import { indexCalls, loadTimelineColumns, outermostCallsNatively, type CallColumns, type OpColumns } from '../../profiler/native/addon.ts';
import { THREAD_LANE_FACTOR } from '../../profiler/store/zone-tables.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures');
const RECORDINGS = ['recordings', 'corpus', 'ddp', 'nccl']
  .flatMap((dir) => fs.readdirSync(path.join(fixtures, dir), { recursive: true }).map((f) => path.join(dir, String(f))))
  .filter((f) => f.endsWith('.sqlite'))
  .sort();

type Ops = Pick<OpColumns, 'length' | 'pid' | 'correlation'>;

/** The index as host.ts defines it, by Maps. */
function reference(calls: CallColumns, ops: Ops) {
  const byPid = new Map<number, Map<number, number>>();
  const threads = new Map<string, number[]>();
  for (let k = 0; k < calls.length; k++) {
    const ids = byPid.get(calls.pid[k]!) ?? byPid.set(calls.pid[k]!, new Map()).get(calls.pid[k]!)!;
    if (calls.domain[k] === 1 || !ids.has(calls.correlation[k]!)) ids.set(calls.correlation[k]!, k);
    const key = calls.pid[k]! * THREAD_LANE_FACTOR + calls.tid[k]!;
    const name = `${Math.floor(key / THREAD_LANE_FACTOR)}:${key % THREAD_LANE_FACTOR}`;
    (threads.get(name) ?? threads.set(name, []).get(name)!).push(k);
  }
  const callOf = (pid: number, id: number) => byPid.get(pid)?.get(id) ?? -1;
  return { callOf, opCall: Array.from({ length: ops.length }, (_, i) => callOf(ops.pid[i]!, ops.correlation[i]!)), threads };
}

/** Each index's answer for every call's and operation's correlation id, and the ids beside them. */
function answers(callOf: (pid: number, id: number) => number, calls: CallColumns, ops: Ops): number[] {
  const out: number[] = [];
  for (let k = 0; k < calls.length; k++) for (const d of [-1, 0, 1]) out.push(callOf(calls.pid[k]!, calls.correlation[k]! + d));
  for (let i = 0; i < ops.length; i++) out.push(callOf(ops.pid[i]!, ops.correlation[i]!));
  return out;
}

function expectTheReference(calls: CallColumns, ops: Ops): void {
  const index = callIndexOf(ops, calls);
  const want = reference(calls, ops);
  const callOf = (pid: number, id: number) => index.byPid.get(pid)?.get(id) ?? -1;
  expect(answers(callOf, calls, ops)).toEqual(answers(want.callOf, calls, ops));
  expect([...index.opCall]).toEqual(want.opCall);
  // How many ops have a call, and whether those come in their calls' order (replay-host.ts opsByCall reads them).
  const withCall = want.opCall.filter((k) => k >= 0);
  expect(index.opCallOrder).toEqual({ withCall: withCall.length, inCallOrder: withCall.every((k, j) => j === 0 || k >= withCall[j - 1]!) });
  expect([...index.threads.keys()]).toEqual([...want.threads.keys()]);
  for (const [name, list] of want.threads) expect([...index.threads.get(name)!]).toEqual(list);
}

describe('the host calls indexed natively', () => {
  it('has recordings to compare', () => {
    expect(RECORDINGS.length).toBeGreaterThan(60);
  });

  it.each(RECORDINGS)('%s', (file) => {
    const { ops, calls } = loadTimelineColumns(path.join(fixtures, file));
    expectTheReference(calls, ops);
  });

  it("ops out of their calls' order, and ops without a call: counted as such", () => {
    const calls = {
      length: 3,
      pid: Int32Array.of(7, 7, 7),
      tid: Int32Array.of(1, 1, 1),
      correlation: Uint32Array.of(10, 11, 12),
      domain: Uint8Array.of(1, 1, 1),
    } as unknown as CallColumns;
    const ops = { length: 4, pid: Int32Array.of(7, 7, 7, 7), correlation: Uint32Array.of(12, 99, 10, 11) } as unknown as Ops;
    const found = indexCalls(calls, ops);
    expect([...found.opCall]).toEqual([2, -1, 0, 1]);
    expect([found.opsWithCall, found.opsInCallOrder]).toEqual([3, false]);
    expectTheReference(calls, ops);
  });

  it('a process whose correlation ids are too sparse for an array: its calls by id as pairs, answered through a Map', () => {
    const calls = {
      length: 4,
      pid: Int32Array.of(7, 7, 9, 7),
      tid: Int32Array.of(1, 2, 1, 1),
      correlation: Uint32Array.of(5, 4_000_000_000, 6, 5),
      domain: Uint8Array.of(2, 1, 1, 1),
    } as unknown as CallColumns;
    const ops = { length: 3, pid: Int32Array.of(7, 9, 7), correlation: Uint32Array.of(4_000_000_000, 6, 5) } as unknown as Ops;
    const found = indexCalls(calls, ops);
    expect(found.tables[0]).not.toBeInstanceOf(Int32Array);
    expect(found.tables[1]).toBeInstanceOf(Int32Array);
    expect([...found.opCall]).toEqual([1, 2, 3]);
    expectTheReference(calls, ops);
    // A column of another type is refused by name, not read past its end.
    expect(() => indexCalls({ ...calls, tid: new Float64Array(4) } as unknown as CallColumns, ops)).toThrow(/indexCalls: tid is not a typed array of its type/);
  });
});

describe('outermost calls, natively', () => {
  it('gives each call the outermost call of its thread that contains it, itself where none does', () => {
    // Thread A: 0 [0, 100) holds 1 [10, 20) and 2 [30, 40), which holds nothing more; 3 [150, 160) on its own.
    // Thread B: 4 [0, 50), 5 [50, 70) (touching, not inside), 6 [55, 60) inside 5.
    const calls = { length: 7, start: Float64Array.of(0, 10, 30, 150, 0, 50, 55), end: Float64Array.of(100, 20, 40, 160, 50, 70, 60) };
    const outer = new Int32Array(7);
    outermostCallsNatively(calls, [Int32Array.of(0, 1, 2, 3), Int32Array.of(4, 5, 6)], outer);
    expect([...outer]).toEqual([0, 0, 0, 3, 4, 5, 5]);
    // A call index out of range is refused by name, not written past the end.
    expect(() => outermostCallsNatively(calls, [Int32Array.of(0, 7)], outer)).toThrow(/outermostCalls: threads\[1\] = 7 is outside 0\.\.6/);
  });
});
