// Duplex contention's passes (native/addon/src/duplex_work.cc) on copies
// few enough to check by hand: which ops overlap pinned copies of the other
// direction and by how much, the rates sampled, each op's uncontended work;
// the native notion of a pinned copy held to bandwidth.ts's (each keeps its
// own); an input built wrong refused by name. Every real recording among the
// fixtures goes through them in the replay and what-if tests.
import { describe, expect, it } from 'vitest';
import { duplexSamplesNatively, uncontendedDurationsNatively, type UncontendedDurationsInputs } from '../../profiler/native/addon.ts';
import { isPinnedTransfer } from '../../profiler/analysis/bandwidth.ts';
import { OpCategory, OpKind, type Trace } from '../../profiler/analysis/trace.ts';

const PINNED_TO_DEVICE = 2 * 16 + 3; // detail: src pinned (2), dst device (3)
const DEVICE_TO_PINNED = 3 * 16 + 2;

/**
 * On device 7: A, a pinned HtoD copy [0, 100); B, a pinned DtoH copy [50, 150); K, a kernel [60, 70); C, a pinned
 * HtoD copy [120, 200); P, a pageable DtoH copy [130, 140) (its host side pageable: no part in contention). In start order.
 */
function columns() {
  return {
    ops: 5,
    kind: Uint8Array.of(OpKind.Memcpy, OpKind.Memcpy, OpKind.Kernel, OpKind.Memcpy, OpKind.Memcpy),
    category: Uint8Array.of(OpCategory.HtoD, OpCategory.DtoH, OpCategory.Compute, OpCategory.HtoD, OpCategory.DtoH),
    detail: Int32Array.of(PINNED_TO_DEVICE, DEVICE_TO_PINNED, 0, PINNED_TO_DEVICE, 3 * 16 + 1),
    device: Int32Array.of(7, 7, 7, 7, 7),
    start: Float64Array.of(0, 50, 60, 120, 130),
    end: Float64Array.of(100, 150, 70, 200, 140),
  };
}
const MB = 1 << 20;

/** The uncontended durations' inputs over columns(): device 7's factors 0.9 (HtoD) and 0.8 (DtoH), defaults 0.5, no streams; `over` replaces any. */
function durations(over: Partial<UncontendedDurationsInputs> = {}): UncontendedDurationsInputs {
  return {
    ...columns(),
    overlap: new Float64Array(5),
    out: new Float64Array(5),
    factorDevices: Int32Array.of(7),
    htod: Float64Array.of(0.9),
    dtoh: Float64Array.of(0.8),
    defaultHtoD: 0.5,
    defaultDtoH: 0.5,
    streamOf: null,
    streams: 0,
    ...over,
  };
}

describe('duplex contention natively', () => {
  it('sums each pinned copy’s overlap with the other direction, for both copies of a pair, and samples the large ones', () => {
    const overlap = new Float64Array(5).fill(99); // any content: each op's entry is cleared when the pass reaches it
    const s = duplexSamplesNatively({
      ...columns(),
      bytes: Float64Array.of(100 * MB, 10 * MB, 0, 80 * MB, 10 * MB),
      overlap,
      largeBytes: MB,
      aloneBelow: 0.05,
      overAbove: 0.4,
      samples: 10,
    });
    // A–B overlap 50 ns, B–C 30 ns; the kernel and the pageable copy none.
    expect([...overlap]).toEqual([50, 80, 0, 30, 0]);
    expect(s.devices).toEqual([7]);
    expect(s.slots).toEqual([7]);
    // Shares: A 0.5, B 0.8 (over 0.4: sampled as overlapped), C 0.375 (between: neither); the pageable copy none.
    expect(s.over).toEqual([[(100 * MB) / 100], [(10 * MB) / 100]]);
    expect(s.alone).toEqual([[], []]);
  });

  it('takes the overlapped share of each pinned copy back by its direction’s factor, an overlap above the duration as the duration', () => {
    const c = columns();
    // A 60 ns long, overlapped 70 ns (as where copies of the other direction overlap each other): clamped to 60.
    c.end[0] = 60;
    const out = new Float64Array(5);
    const overlap = Float64Array.of(70, 10, 0, 30, 0);
    uncontendedDurationsNatively(durations({ ...c, overlap, out }));
    // A: 60 ns, overlap 70 clamped to 60: 60 − 60 × 0.1; B: 100 − 10 × 0.2; K: its 10 ns; C: 80 − 30 × 0.1; P: its 10 ns.
    expect([...out]).toEqual([60 - 60 * (1 - 0.9), 100 - 10 * (1 - 0.8), 10, 80 - 30 * (1 - 0.9), 10]);
    // A device without factors of its own: the defaults.
    // Written over its own input.
    uncontendedDurationsNatively(durations({ ...c, overlap, out: overlap, factorDevices: Int32Array.of(3) }));
    expect([...overlap]).toEqual([60 - 60 * 0.5, 100 - 10 * 0.5, 10, 80 - 30 * 0.5, 10]);
  });

  it('ends an op’s work where the next on its stream began, where the streams are given (the replay’s work)', () => {
    const work = (streamOf: Int32Array) => {
      const inputs = durations({ streamOf, streams: 2 });
      uncontendedDurationsNatively(inputs);
      return [...inputs.out];
    };
    // One stream: A ends where B began (50), B where K began (10), C where P began (10); K and P run whole.
    expect(work(Int32Array.of(0, 0, 0, 0, 0))).toEqual([50, 10, 10, 10, 10]);
    // A, K, P on one stream, B and C on another: A ends where K began (60), B where C began (70); K ended before P.
    expect(work(Int32Array.of(0, 1, 0, 1, 0))).toEqual([60, 70, 10, 80, 10]);
    expect(() => work(Int32Array.of(0, 2, 0, 1, 0))).toThrow(/uncontendedDurations: streamOf\[1\] = 2 is outside 0\.\.1/);
  });

  it('counts as pinned exactly the copies bandwidth.ts does, in the same direction', () => {
    let pinned = 0;
    for (const kind of [OpKind.Kernel, OpKind.Memcpy, OpKind.Memset])
      for (const category of Object.values(OpCategory))
        for (let src = 0; src < 6; src++)
          for (let dst = 0; dst < 6; dst++) {
            const detail = src * 16 + dst;
            const trace = { ops: { kind: [kind], category: [category], detail: [detail] } } as unknown as Trace;
            const s = duplexSamplesNatively({
              ops: 1,
              kind: Uint8Array.of(kind),
              category: Uint8Array.of(category),
              detail: Int32Array.of(detail),
              device: Int32Array.of(0),
              start: Float64Array.of(0),
              end: Float64Array.of(10),
              bytes: Float64Array.of(MB),
              overlap: new Float64Array(1),
              largeBytes: MB,
              aloneBelow: 0.05,
              overAbove: 0.95,
              samples: 1,
            });
            // A pinned copy alone: one sample, in its direction's slot.
            const sampled = s.alone.findIndex((l) => l.length > 0);
            expect(sampled >= 0, `kind ${kind}, category ${category}, detail ${detail}`).toBe(isPinnedTransfer(trace, 0));
            if (sampled >= 0) {
              pinned++;
              expect(sampled).toBe(category === OpCategory.HtoD ? 0 : 1);
            }
          }
    expect(pinned).toBeGreaterThan(0);
  });

  it('refuses an array of the wrong type or too short, by name', () => {
    const inputs = {
      ...columns(),
      overlap: new Float64Array(5),
      factorDevices: Int32Array.of(7),
      htod: Float64Array.of(1),
      dtoh: Float64Array.of(1),
      defaultHtoD: 1,
      defaultDtoH: 1,
      streamOf: null,
      streams: 0,
    };
    expect(() => uncontendedDurationsNatively({ ...inputs, out: new Float64Array(4) })).toThrow(/uncontendedDurations: out is too short/);
    expect(() => uncontendedDurationsNatively({ ...inputs, out: new Float64Array(5), device: new Float64Array(5) as never })).toThrow(
      /uncontendedDurations: device is not a typed array of its type/,
    );
    expect(() => uncontendedDurationsNatively({ ...inputs, out: new Float64Array(5), htod: new Float64Array(0) })).toThrow(
      /uncontendedDurations: htod is too short/,
    );
  });
});
