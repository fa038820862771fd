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
import { commKernelLabels } from '../communication.ts';
import { opResourcesNatively } from '../../native/addon.ts';
import type { HostModel } from './replay-host.ts';
import type { DeviceRow, Trace } from '../trace.ts';

/** The devices table's rows by the host model's dense device index (undefined: a device not in the table). */
function deviceRows(trace: Trace, model: HostModel): (DeviceRow | undefined)[] {
  const rows: (DeviceRow | undefined)[] = new Array(model.devIndex.size);
  for (const d of trace.devices) rows[model.devIndex.get(d.id)!] = d;
  return rows;
}

/**
 * What each op needs, looked up per op by every step of the scheduler
 * (replay.ts hands it over): the same for every replay of a recording (a
 * fix moves ops between streams and changes durations, never an op's kind,
 * direction or device), computed on its first, natively
 * (native/addon/src/op_resources.cc: the engine by direction, the share as
 * occupancy.ts blocksPerSm counts blocks per SM, duplex as bandwidth.ts
 * isPinnedTransfer says).
 */
export interface OpResources {
  /** The engine (device × 2 + direction) an HtoD or DtoH copy needs; -1 for every other op. */
  engine: Int32Array;
  /**
   * Per kernel: the share of its device's SMs it occupies; -1 for a
   * communication kernel (NCCL's), outside the SM model: it starts as soon
   * as its dependencies allow (the scheduler's kNoShare; two kernels' shares
   * fit together up to 1e-9 above 1, float error: its kShareSlack).
   */
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
  const { kind, category, detail, blocks, blockThreads, registers, sharedBytes, length: n } = trace.ops;
  const devRows = deviceRows(trace, model);
  const shared = sharedEngines(devRows);
  // Per dense device its per-SM limits as occupancy.ts blocksPerSm reads them (an unknown one 0, falsy as null is;
  // max blocks 32 where unknown); smCount 0 for a device not in the table (its kernels hold no share).
  const limits = new Float64Array(devRows.length * 5);
  devRows.forEach((d, x) => {
    if (!d) return;
    limits.set([d.smCount ?? 0, d.maxBlocksPerSm ?? 32, d.maxThreadsPerSm ?? 0, d.maxRegistersPerSm ?? 0, d.maxSharedMemoryPerSm ?? 0], x * 5);
  });
  // The names of NCCL's kernels, by name id: theirs take no share.
  const comm = commKernelLabels(trace);
  let commNames: Uint8Array | null = null;
  if (comm.size > 0) {
    let top = 0;
    for (const id of comm.keys()) top = Math.max(top, id);
    commNames = new Uint8Array(top + 1);
    for (const id of comm.keys()) if (id >= 0) commNames[id] = 1;
  }
  const engine = new Int32Array(n);
  const share = new Float32Array(n);
  const duplex = new Uint8Array(n);
  // One pass over every op, native (native/addon/src/op_resources.cc: ~0.14 s of JavaScript at 10 M).
  opResourcesNatively({
    ops: n,
    kind,
    category,
    detail,
    blocks,
    blockThreads,
    registers,
    sharedBytes,
    devOf: model.devOf,
    sharedEngine: shared,
    limits,
    commNames,
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
