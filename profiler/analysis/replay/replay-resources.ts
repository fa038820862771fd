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
// The scheduler (replay-scheduler.ts) decides when to ask; this only
// grants, queues and hands over.
import { isPinnedTransfer } from '../bandwidth.ts';
import { commKernelLabels } from '../communication.ts';
import { blocksPerSm } from '../occupancy.ts';
import type { EventHeap } from './replay-events.ts';
import type { HostModel } from './replay-host.ts';
import { OpCategory, OpKind, type DeviceRow, type Trace } from '../trace.ts';

// Enum values as module constants: the hot loops read them per op, and a test
// runner that rewrites imports into property reads (vitest) made each read a
// lookup on the imported module's namespace.
const KERNEL = OpKind.Kernel;
const MEMCPY = OpKind.Memcpy;
const HTOD = OpCategory.HtoD;
const DTOH = OpCategory.DtoH;

/** Two kernels' shares fit together up to this much above 1 (float error). */
const SHARE_SLACK = 1e-9;
/** The share of a kernel outside the SM model (NCCL's): it starts as soon as its dependencies allow. */
const NO_SHARE = -1;

/** The devices table's rows by the host model's dense device index (undefined: a device not in the table). */
function deviceRows(trace: Trace, model: HostModel): (DeviceRow | undefined)[] {
  const rows: (DeviceRow | undefined)[] = new Array(model.devIndex.size);
  for (const d of trace.devices) rows[model.devIndex.get(d.id)!] = d;
  return rows;
}

/**
 * What each op needs, looked up per op by every step of the scheduler:
 * the same for every replay of a recording (a fix moves ops between
 * streams and changes durations, never an op's kind, direction or device),
 * computed on its first.
 */
interface OpResources {
  /** The engine (device × 2 + direction) an HtoD or DtoH copy needs; -1 for every other op. */
  engine: Int32Array;
  /** Per kernel: the share of its device's SMs it occupies (NO_SHARE for a communication kernel). */
  share: Float32Array;
  /** 1 for a recorded pinned HtoD/DtoH copy on a device with an engine per direction: it takes part in duplex contention. */
  duplex: Uint8Array;
}

const resourcesOf = new WeakMap<HostModel, OpResources>();

export function opResources(trace: Trace, model: HostModel): OpResources {
  let r = resourcesOf.get(model);
  if (r) return r;
  const { kind, category, detail, blocks, blockThreads, registers, sharedBytes, length: n } = trace.ops;
  const devOf = model.devOf;
  const devRows = deviceRows(trace, model);
  const shared = sharedEngines(devRows);
  const comm = commKernelLabels(trace);
  const engine = new Int32Array(n);
  const share = new Float32Array(n);
  const duplex = new Uint8Array(n);
  // Kernels of one shape follow each other: the last shape's blocks per SM is kept.
  let lastDev = -1;
  let lastThreads = -1;
  let lastRegisters = -1;
  let lastShared = -1;
  let perSm = 0;
  for (let i = 0; i < n; i++) {
    const k = kind[i]!;
    const d = devOf[i]!;
    if (k === MEMCPY) {
      const cat = category[i]!;
      if (cat !== HTOD && cat !== DTOH) {
        engine[i] = -1;
        continue;
      }
      engine[i] = d * 2 + (shared[d] || cat === HTOD ? 0 : 1);
      if (!shared[d] && isPinnedTransfer(trace, i)) duplex[i] = 1;
      continue;
    }
    engine[i] = -1;
    if (k !== KERNEL) continue;
    if (comm.size > 0 && comm.has(detail[i]!)) {
      share[i] = NO_SHARE;
      continue;
    }
    const dev = devRows[d];
    if (!dev?.smCount || blocks[i]! <= 0) continue;
    if (d !== lastDev || blockThreads[i] !== lastThreads || registers[i] !== lastRegisters || sharedBytes[i] !== lastShared) {
      lastDev = d;
      lastThreads = blockThreads[i]!;
      lastRegisters = registers[i]!;
      lastShared = sharedBytes[i]!;
      perSm = blocksPerSm(dev, lastThreads, lastRegisters, lastShared);
    }
    share[i] = Math.min(1, blocks[i]! / (dev.smCount * perSm));
  }
  resourcesOf.set(model, (r = { engine, share, duplex }));
  return r;
}

/** Per dense device: 1 where one engine serves both directions (async_engine_count ≤ 1). */
function sharedEngines(devRows: (DeviceRow | undefined)[]): Uint8Array {
  return Uint8Array.from(devRows, (d) => ((d?.asyncEngineCount ?? 2) <= 1 ? 1 : 0));
}

/**
 * The engines and SMs of every device of one replay. Engines are indexed
 * device × 2 + direction (0 HtoD, or both on a shared engine; 1 DtoH);
 * devices by the host model's dense index. Waiting ops form one FIFO per
 * engine and per device's SMs, linked through `queueNext` (an op waits in
 * one queue at most; its entry is set when it joins one, so the array
 * needs no clearing between replays).
 */
export class Resources {
  private readonly kind: Uint8Array;
  private readonly devOf: Int32Array;
  /** Per op: its engine, -1 for none (OpResources). */
  private readonly engine: Int32Array;
  /** Per op: 1 = a recorded pinned copy, which takes part in duplex contention (OpResources). */
  private readonly duplex: Uint8Array;
  /** Per op: 1 = a copy that now uses pinned host memory (a fix's, so it takes part too), null: none. */
  private readonly pinned: Uint8Array | null;
  /** Per op: the next op in the same queue, -1 for none. */
  private readonly queueNext: Int32Array;

  /** Per device: 1 where one engine serves both directions. */
  private readonly sharedEngine: Uint8Array;
  /** Per engine: 1 while a copy holds it (or is about to begin on it), and its queue. */
  private readonly engineBusy: Uint8Array;
  private readonly engineHead: Int32Array;
  private readonly engineTail: Int32Array;

  /**
   * Duplex, per engine: the pinned copy running on it (-1: none), its work
   * left at full speed (ns), when that was last brought up to date, its
   * current speed (1, or the direction's duplex factor), and the factor.
   */
  private readonly duplexOp: Int32Array;
  private readonly duplexLeft: Float64Array;
  private readonly duplexAt: Float64Array;
  private readonly duplexSpeed: Float64Array;
  private readonly duplexFactor: Float64Array;
  /** Where a duplex copy's end, once moved, is written and queued: the scheduler's (its heap of duplex completions). */
  private readonly end: Float64Array;
  private readonly heap: EventHeap;
  /**
   * [0]: the scheduler's clock, the time of the event it processes (read
   * by endContended); [1]: progress()'s time, set by its callers. Times
   * travel here rather than as arguments: a number that is not a small
   * integer, passed to a call the compiler did not inline, is boxed, a heap
   * number per call (millions per replay) for the garbage collector.
   */
  private readonly clock: Float64Array;

  /** Per kernel: its share of its device's SMs; per device: the shares running, how many, and the queue. */
  private readonly share: Float32Array;
  private readonly smUsed: Float64Array;
  private readonly smRunning: Int32Array;
  private readonly smHead: Int32Array;
  private readonly smTail: Int32Array;

  constructor(
    trace: Trace,
    model: HostModel,
    pinned: Uint8Array | null,
    queueNext: Int32Array,
    end: Float64Array,
    heap: EventHeap,
    clock: Float64Array = new Float64Array(2),
  ) {
    const D = model.devIndex.size;
    const ops = opResources(trace, model);
    this.kind = trace.ops.kind;
    this.devOf = model.devOf;
    this.engine = ops.engine;
    this.duplex = ops.duplex;
    this.pinned = pinned;
    this.queueNext = queueNext;
    this.sharedEngine = sharedEngines(deviceRows(trace, model));
    this.engineBusy = new Uint8Array(D * 2);
    this.engineHead = new Int32Array(D * 2).fill(-1);
    this.engineTail = new Int32Array(D * 2).fill(-1);
    this.duplexOp = new Int32Array(D * 2).fill(-1);
    this.duplexLeft = new Float64Array(D * 2);
    this.duplexAt = new Float64Array(D * 2);
    this.duplexSpeed = new Float64Array(D * 2).fill(1);
    this.duplexFactor = model.duplex;
    this.end = end;
    this.heap = heap;
    this.clock = clock;
    this.share = ops.share;
    this.smUsed = new Float64Array(D);
    this.smRunning = new Int32Array(D);
    this.smHead = new Int32Array(D).fill(-1);
    this.smTail = new Int32Array(D).fill(-1);
  }

  /** The engine op i needs: HtoD and DtoH copies only; -1 for every other op. */
  engineOf(i: number): number {
    return this.engine[i]!;
  }

  /**
   * Op i asks to run: it takes its engine or its share of the SMs and gets
   * true (ops that need neither always do), or joins the queue and gets
   * false (a later handover starts it).
   */
  acquire(i: number): boolean {
    const eng = this.engine[i]!;
    if (eng >= 0) {
      if (!this.engineBusy[eng]) {
        this.engineBusy[eng] = 1;
        return true;
      }
      const tail = this.engineTail[eng]!;
      this.queueNext[i] = -1;
      if (tail >= 0) this.queueNext[tail] = i;
      else this.engineHead[eng] = i;
      this.engineTail[eng] = i;
      return false;
    }
    if (this.kind[i] === KERNEL && this.share[i] !== NO_SHARE) {
      const d = this.devOf[i]!;
      const share = this.share[i]!;
      if (this.smHead[d]! < 0 && (this.smRunning[d] === 0 || this.smUsed[d]! + share <= 1 + SHARE_SLACK)) {
        this.smUsed[d]! += share;
        this.smRunning[d]!++;
        return true;
      }
      const tail = this.smTail[d]!;
      this.queueNext[i] = -1;
      if (tail >= 0) this.queueNext[tail] = i;
      else this.smHead[d] = i;
      this.smTail[d] = i;
      return false;
    }
    return true;
  }

  /** Engine `eng` is done with its copy: the next copy queued for it, which now holds it, or -1 (the engine is idle). */
  nextCopy(eng: number): number {
    const q = this.engineHead[eng]!;
    if (q < 0) {
      this.engineBusy[eng] = 0;
      return -1;
    }
    this.engineHead[eng] = this.queueNext[q]!;
    if (this.engineHead[eng]! < 0) this.engineTail[eng] = -1;
    return q;
  }

  /** Kernel i has completed: its share of device d's SMs is free. */
  releaseSms(i: number, d: number): void {
    if (this.share[i] === NO_SHARE) return;
    this.smUsed[d]! -= this.share[i]!;
    this.smRunning[d]!--;
    if (this.smRunning[d] === 0) this.smUsed[d] = 0; // no drift
  }

  /** The kernel at the head of device d's queue if it now fits, taking its share; else -1. Call until -1. */
  nextKernel(d: number): number {
    const q = this.smHead[d]!;
    if (q < 0) return -1;
    const share = this.share[q]!;
    if (this.smRunning[d]! > 0 && this.smUsed[d]! + share > 1 + SHARE_SLACK) return -1;
    this.smHead[d] = this.queueNext[q]!;
    if (this.smHead[d]! < 0) this.smTail[d] = -1;
    this.smUsed[d]! += share;
    this.smRunning[d]!++;
    return q;
  }

  /**
   * Op i begins at t and would take `alone` ns by itself. A pinned copy on
   * a device with an engine per direction shares the link with the other
   * direction's copy: its end is set and queued here, and moves as that
   * copy comes and goes (true). Every other op runs at full speed: false,
   * the caller sets its end.
   */
  beginContended(i: number, t: number, alone: number): boolean {
    const eng = this.engine[i]!;
    if (eng < 0 || this.sharedEngine[this.devOf[i]!] || !(this.duplex[i] === 1 || (this.pinned !== null && this.pinned[i] === 1))) return false;
    const other = eng ^ 1;
    const both = this.duplexOp[other]! >= 0;
    this.duplexOp[eng] = i;
    this.duplexLeft[eng] = alone;
    this.duplexAt[eng] = t;
    this.duplexSpeed[eng] = 1;
    this.end[i] = -Infinity; // nothing queued for it yet: progress() queues it
    this.clock[1] = t;
    if (both) this.progress(other, 1);
    this.progress(eng, both ? 1 : 0);
    return true;
  }

  /** Copy i, on engine `eng`, has completed at the scheduler's clock: the other direction's copy, if any, goes on at full speed. */
  endContended(i: number, eng: number): void {
    if (this.duplexOp[eng] !== i) return;
    this.duplexOp[eng] = -1;
    if (this.duplexOp[eng ^ 1]! >= 0) {
      this.clock[1] = this.clock[0]!;
      this.progress(eng ^ 1, 0);
    }
  }

  /**
   * Brings engine e's copy up to clock[1] (t) at its old speed, then lets
   * it go on at full speed (contended 0) or its direction's duplex factor
   * (1): its end moves.
   */
  private progress(e: number, contended: number): void {
    const t = this.clock[1]!;
    const speed = contended ? this.duplexFactor[e]! : 1;
    const i = this.duplexOp[e]!;
    this.duplexLeft[e]! -= (t - this.duplexAt[e]!) * this.duplexSpeed[e]!;
    if (this.duplexLeft[e]! < 0) this.duplexLeft[e] = 0;
    this.duplexAt[e] = t;
    this.duplexSpeed[e] = speed;
    const moved = t + this.duplexLeft[e]! / speed;
    // Later than planned: the completion already queued finds that its op's
    // end moved and takes the new time (Simulation.run); earlier: queue it now.
    const queued = this.end[i]!;
    this.end[i] = moved;
    if (moved < queued || !(queued > t)) this.heap.push(moved, i);
  }
}
