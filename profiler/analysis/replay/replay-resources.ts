// The what-if replay's resource model (replay.ts): what a GPU operation
// must hold to run, besides its dependencies (replay-graph.ts), and how fast
// it runs while it does.
//  * Copy engines: one per direction and device (HtoD, DtoH), or one shared
//    by both where async_engine_count ≤ 1. Same-engine copies run one at a
//    time, first come first served.
//  * SMs: each kernel occupies blocks / (SMs × resident blocks per SM) of
//    its device (capped at 1; 0 where its shape or the device's limits are
//    unknown: no limit). A kernel starts when its share fits beside the
//    running ones, in arrival order: a big kernel at the head of the queue
//    holds back later small ones, as the block scheduler does. NCCL's
//    kernels stand outside this: a collective runs a handful of blocks
//    (one per channel) that take SMs as soon as blocks of the kernels
//    beside it retire, and it then spins until its peers' data arrives, so
//    it is seen running beside a full-GPU GEMM for most of the GEMM's
//    length (PyTorch overlaps its all-reduces exactly so); queued behind
//    the GEMM, the model would forbid the overlap the recording shows.
//  * Duplex: while a pinned HtoD and a pinned DtoH copy of one device run
//    together, each progresses at its direction's duplex factor
//    (bandwidth.ts), so its end moves when the other starts or ends.
// Other ops (DtoD, PtoP, HtoH copies, memsets) take no modelled resource.
// This module says what each op needs (opResources); the scheduler
// (native/addon/src/replay_scheduler.cc) grants, queues and hands over,
// and decides when to ask.
import { commKernelOps } from '../communication.ts';
import { opResourcesNatively } from '../../native/addon.ts';
import { blocksPerSm } from '../occupancy.ts';
import type { HostModel } from './replay-host.ts';
import type { DeviceRow, Trace } from '../trace.ts';

/**
 * The share of a kernel outside the SM model (NCCL's): it starts as soon as
 * its dependencies allow (the scheduler's kNoShare). Two kernels' shares fit
 * together up to 1e-9 above 1, float error (its kShareSlack).
 */
export const NO_SHARE = -1;

/** The devices table's rows by the host model's dense device index (undefined: a device not in the table). */
function deviceRows(trace: Trace, model: HostModel): (DeviceRow | undefined)[] {
  const rows: (DeviceRow | undefined)[] = new Array(model.devIndex.size);
  for (const d of trace.devices) rows[model.devIndex.get(d.id)!] = d;
  return rows;
}

/**
 * What each op needs, looked up per op by every step of the scheduler
 * (replay.ts hands it over):
 * the same for every replay of a recording (a fix moves ops between
 * streams and changes durations, never an op's kind, direction or device),
 * computed on its first.
 */
export interface OpResources {
  /** The engine (device × 2 + direction) an HtoD or DtoH copy needs; -1 for every other op. */
  engine: Int32Array;
  /** Per kernel: the share of its device's SMs it occupies (NO_SHARE for a communication kernel). */
  share: Float32Array;
  /** 1 for a recorded pinned HtoD/DtoH copy on a device with an engine per direction: it takes part in duplex contention. */
  duplex: Uint8Array;
  /** Per dense device: 1 where one engine serves both directions (async_engine_count ≤ 1). */
  sharedEngine: Uint8Array;
}

const resourcesOf = new WeakMap<HostModel, OpResources>();

export function opResources(trace: Trace, model: HostModel): OpResources {
  let r = resourcesOf.get(model);
  if (r) return r;
  const { ops } = trace;
  const n = ops.length;
  const devRows = deviceRows(trace, model);
  const shared = sharedEngines(devRows);
  const engine = new Int32Array(n);
  const share = new Float32Array(n);
  const duplex = new Uint8Array(n);
  // One pass over every op, native (native/addon/src/op_resources.cc: ~0.1 s of JavaScript at 10 M); the occupancy
  // model stays here, asked once per kernel shape.
  opResourcesNatively({
    ops: n,
    devices: devRows.length,
    kind: ops.kind,
    category: ops.category,
    detail: ops.detail,
    devOf: model.devOf,
    blocks: ops.blocks,
    blockThreads: ops.blockThreads,
    registers: ops.registers,
    sharedBytes: ops.sharedBytes,
    commOps: commKernelOps(trace),
    sharedEngine: shared,
    // `!dev?.smCount`: a device without a row or an SM count (NaN too) has no SM limit.
    smCount: Float64Array.from(devRows, (d) => d?.smCount || 0),
    perSm: (d, threads, registers, sharedBytes) => blocksPerSm(devRows[d]!, threads, registers, sharedBytes),
    engine,
    share,
    duplex,
  });
  resourcesOf.set(model, (r = { engine, share, duplex, sharedEngine: shared }));
  return r;
}

/** Per dense device: 1 where one engine serves both directions (async_engine_count ≤ 1). */
function sharedEngines(devRows: (DeviceRow | undefined)[]): Uint8Array {
  return Uint8Array.from(devRows, (d) => ((d?.asyncEngineCount ?? 2) <= 1 ? 1 : 0));
}
