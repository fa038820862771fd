// Each device's busy time and union (native/addon/src/device_unions.cc)
// held to overlap.ts BusyUnion, which the other passes keep using, on ops
// that exercise it: devices interleaved, several processes on one device,
// every category, overlapping, nested, touching and malformed intervals.
// The fixtures go through it in every analysis (the Stats tab's tables, the
// rules' context).
import { describe, expect, it } from 'vitest';
import { deviceUnionsNatively } from '../../profiler/native/addon.ts';
import { BusyUnion } from '../../profiler/analysis/overlap.ts';
import { OpCategory } from '../../profiler/analysis/trace.ts';

function lcg(seed: number): () => number {
  let x = seed >>> 0;
  return () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}

/** n ops in start order: devices 3, 7 and 5 in runs, two processes on device 7, every category, some ending before they start. */
function ops(n: number, seed: number) {
  const r = lcg(seed);
  const device = new Int32Array(n);
  const pid = new Int32Array(n);
  const category = new Uint8Array(n);
  const start = new Float64Array(n);
  const end = new Float64Array(n);
  let t = 0;
  let d = 3;
  for (let i = 0; i < n; i++) {
    if (r() < 0.1) d = [3, 7, 5][Math.floor(r() * 3)]!;
    device[i] = d;
    pid[i] = d === 7 && r() < 0.3 ? 200 : 100;
    category[i] = Math.floor(r() * 8);
    t += Math.floor(r() * 50); // ties too
    start[i] = t;
    end[i] = r() < 0.05 ? t - 1 : t + Math.floor(r() * 120);
  }
  return { ops: n, device, pid, category, start, end };
}

describe('device unions natively', () => {
  it('measures each device as BusyUnion does, its union’s intervals too', () => {
    const o = ops(20_000, 7);
    const native = deviceUnionsNatively(o);
    expect(native.map((d) => d.deviceId)).toEqual([3, 7, 5].filter((id) => o.device.includes(id)).sort((a, b) => o.device.indexOf(a) - o.device.indexOf(b)));
    for (const d of native) {
      const mine = [...o.device.keys()].filter((i) => o.device[i] === d.deviceId);
      const union = (accept: (i: number) => boolean, room?: number) => {
        const u = new BusyUnion(room);
        for (const i of mine) if (accept(i)) u.add(o.start[i]!, o.end[i]!);
        return u;
      };
      const plain = (u: BusyUnion) => {
        const { count, sum, union } = u.busy();
        return { count, sum, union };
      };
      expect(d.compute).toEqual(plain(union((i) => o.category[i] === OpCategory.Compute)));
      expect(d.htod).toEqual(plain(union((i) => o.category[i] === OpCategory.HtoD)));
      expect(d.dtoh).toEqual(plain(union((i) => o.category[i] === OpCategory.DtoH)));
      const all = union(() => true, mine.length);
      expect(d.all).toEqual(plain(all));
      expect(d.union.subarray(0, d.length)).toEqual(all.intervals());
      expect(d.operations).toBe(mine.length);
      expect(d.pid).toBe(d.deviceId === 7 ? null : 100);
    }
  });

  it('refuses a column of the wrong type or too short, by name', () => {
    const o = ops(10, 1);
    expect(() => deviceUnionsNatively({ ...o, end: o.end.subarray(0, 9) })).toThrow(/deviceUnions: end is too short/);
    expect(() => deviceUnionsNatively({ ...o, category: new Int32Array(10) as never })).toThrow(/deviceUnions: category is not a typed array of its type/);
  });
});
