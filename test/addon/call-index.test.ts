// The host calls' index built natively (native/addon/src/call_index.cc) is
// the one analysis/host.ts builds in JavaScript, on every real recording
// among the fixtures: each process's call by correlation id, the call
// behind each GPU operation, each thread's calls. And a process whose ids
// are too sparse for an array is left to the JavaScript (a Map).
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { callIndexOf } from '../../profiler/analysis/host.ts';
import { indexCalls, loadTimelineColumns, type CallColumns, type OpColumns } from '../../profiler/native/addon.ts';

const fixtures = path.resolve(import.meta.dirname, '../fixtures');
const RECORDINGS = ['recordings', 'corpus', 'ddp', 'nccl']
  .flatMap((dir) => fs.readdirSync(path.join(fixtures, dir), { recursive: true }).map((f) => path.join(dir, String(f))))
  .filter((f) => f.endsWith('.sqlite'))
  .sort();

/** Every table's answer for every call's and operation's correlation id (and ids around them), as one comparable list. */
function answers(index: ReturnType<typeof callIndexOf>, calls: CallColumns, ops: OpColumns): number[] {
  const out: number[] = [];
  for (let k = 0; k < calls.length; k++) for (const d of [-1, 0, 1]) out.push(index.byPid.get(calls.pid[k]!)?.get(calls.correlation[k]! + d) ?? -2);
  for (let i = 0; i < ops.length; i++) out.push(index.byPid.get(ops.pid[i]!)?.get(ops.correlation[i]!) ?? -2);
  return out;
}

describe('the host calls indexed natively, as in JavaScript', () => {
  it('has recordings to compare', () => {
    expect(RECORDINGS.length).toBeGreaterThan(60);
  });

  it.each(RECORDINGS)('%s', (file) => {
    const { ops, calls } = loadTimelineColumns(path.join(fixtures, file));
    const native = callIndexOf(ops, calls);
    const here = callIndexOf(ops, calls, true);
    expect([...native.byPid.keys()].sort()).toEqual([...here.byPid.keys()].sort());
    expect(answers(native, calls, ops)).toEqual(answers(here, calls, ops));
    expect(native.opCall).toEqual(here.opCall);
    expect([...native.threads.keys()]).toEqual([...here.threads.keys()]);
    for (const [key, list] of here.threads) expect(native.threads.get(key)).toEqual(list);
  });

  it('a process whose correlation ids are too sparse for an array: left to the JavaScript, which answers as before', () => {
    const calls = {
      length: 3,
      pid: Int32Array.of(7, 7, 9),
      tid: Int32Array.of(1, 2, 1),
      correlation: Uint32Array.of(5, 4_000_000_000, 6),
      domain: Uint8Array.of(1, 1, 1),
    } as unknown as CallColumns;
    const ops = { length: 2, pid: Int32Array.of(7, 9), correlation: Uint32Array.of(4_000_000_000, 6) } as unknown as OpColumns;
    expect(indexCalls(calls, ops)).toBeNull();
    // A column of another type is refused by name, not read past its end.
    expect(() => indexCalls({ ...calls, tid: new Float64Array(3) } as unknown as CallColumns, ops)).toThrow(/indexCalls: tid is not a typed array of its type/);
    const index = callIndexOf(ops, calls);
    expect([...index.opCall]).toEqual([1, 2]);
    expect([...index.threads.keys()]).toEqual(['7:1', '7:2', '9:1']);
  });
});
