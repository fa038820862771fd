// The replay's resources per op (native/addon/src/op_resources.cc;
// profiler/analysis/replay/replay-resources.ts) on ops few enough to check
// by hand: each host copy's engine (one per direction, or one shared by
// both), which pinned copies take part in duplex contention, each kernel's
// share of its device's SMs (capped at 1; none for a communication kernel
// or a device of unknown SMs), the occupancy model asked once per shape.
// The fixtures' replays go through it in test/analysis/replay-identity.test.ts.
import { describe, expect, it } from 'vitest';
import { opResourcesNatively, type OpResourcesInputs } from '../../profiler/native/addon.ts';
import { OpCategory, OpKind } from '../../profiler/analysis/trace.ts';

const { Kernel: K, Memcpy: C, Memset: S } = OpKind;
const { HtoD, DtoH, DtoD, Compute, Memset } = OpCategory;
// A copy's memory kinds as ops.detail holds them (source × 16 + destination): CUPTI's pageable, pinned, device.
const PAGEABLE = 1;
const PINNED = 2;
const DEVICE = 3;
const detailOf = (src: number, dst: number) => src * 16 + dst;

/** Device 0: an engine per direction, 100 SMs; device 1: one engine for both, its SMs unknown. */
function inputs(asked: number[][]): OpResourcesInputs {
  const n = 12;
  return {
    ops: n,
    devices: 2,
    kind: Uint8Array.of(C, C, C, C, S, K, K, K, K, K, K, K),
    category: Uint8Array.of(HtoD, DtoH, DtoH, DtoD, Memset, Compute, Compute, Compute, Compute, Compute, Compute, Compute),
    detail: Int32Array.of(detailOf(PINNED, DEVICE), detailOf(DEVICE, PAGEABLE), detailOf(DEVICE, PINNED), detailOf(DEVICE, DEVICE), 0, 0, 0, 0, 0, 0, 0, 0),
    devOf: Int32Array.of(0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0),
    blocks: Float64Array.of(0, 0, 0, 0, 0, 8, 50, 1000, 30, 10, 10, 0),
    blockThreads: Int32Array.of(0, 0, 0, 0, 0, 64, 256, 256, 128, 256, 256, 256),
    registers: Int32Array.of(0, 0, 0, 0, 0, 16, 32, 32, 32, 32, 32, 32),
    sharedBytes: new Int32Array(n),
    commOps: Uint8Array.of(0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0),
    sharedEngine: Uint8Array.of(0, 1),
    smCount: Float64Array.of(100, 0),
    perSm: (device, threads, registers, shared) => {
      asked.push([device, threads, registers, shared]);
      return threads === 256 ? 4 : 3;
    },
    engine: new Int32Array(n),
    share: new Float32Array(n),
    duplex: new Uint8Array(n),
  };
}

describe('the replay’s resources per op, natively', () => {
  it('gives each host copy its engine, pinned copies of a two-engine device duplex, each kernel its share of the SMs', () => {
    const asked: number[][] = [];
    const r = inputs(asked);
    opResourcesNatively(r);
    // HtoD on device 0: engine 0; DtoH: engine 1; device 1's DtoH shares its one engine (2); DtoD and memsets: none.
    expect([...r.engine]).toEqual([0, 1, 2, -1, -1, -1, -1, -1, -1, -1, -1, -1]);
    // Only the pinned HtoD of the two-engine device: the DtoH is pageable, device 1's engine serves both directions.
    expect([...r.duplex]).toEqual([1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    // NCCL's kernel: no share; 50 / (100 × 4); 1000 blocks capped at 1; 30 / (100 × 3); 10 / 400; device 1 of unknown
    // SMs, and a kernel of no blocks: no limit (0).
    expect([...r.share]).toEqual([0, 0, 0, 0, 0, -1, 0.125, 1, Math.fround(0.1), 0.025, 0, 0].map(Math.fround));
    // Asked once per shape, though shape (256, 32, 0) comes back after another.
    expect(asked).toEqual([
      [0, 256, 32, 0],
      [0, 128, 32, 0],
    ]);
  });

  it('refuses an op on a device that is not there, by name', () => {
    const r = inputs([]);
    r.devOf[3] = 2;
    expect(() => opResourcesNatively(r)).toThrow(/opResources.*devOf/);
  });

  it('stops at an error the occupancy model throws', () => {
    const r = inputs([]);
    r.perSm = () => {
      throw new Error('no limits for this device');
    };
    expect(() => opResourcesNatively(r)).toThrow('no limits for this device');
  });
});
