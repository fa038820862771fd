// Start-up: the part of a run before the program does its real work —
// CUDA initialisation and context creation, loading modules and compiling
// kernels (JIT: Numba, CuPy, Triton and PyTorch compile or load at first
// use), the first allocations — which in a Python program easily outlasts
// the work itself and would otherwise lead every report ("GPU idle 600 ms",
// "under 50% busy") with a cost nobody can remove from their loop.
//
// The rule (documented in docs/ANALYSIS.md, "Scopes"):
//   A start-up call is one that initialises CUDA or creates a context
//   (cuInit, cuDevicePrimaryCtxRetain, cuCtxCreate, ... and the first call
//   of a process that lasts 1 ms or more: the CUDA runtime creates its
//   context lazily, inside whichever call first needs one — cudaSetDevice,
//   cudaMalloc, cudaStreamCreate), or loads or links GPU code
//   (cuModuleLoad*, cuLibraryLoad*, cuLink*), or looks up a kernel for
//   1 ms or more (cudaFuncGetAttributes, cuModuleGetFunction, ...: a lookup
//   that long loaded a lazily loaded module).
//   Start-up ends where the last start-up call ends among those that begin
//   before the GPU has done a tenth of its compute work (the kernels'
//   summed durations; all operations' in a recording without kernels).
//   Copies do not count: a program typically moves its data in before its
//   first kernel is even loaded. A module loaded later, once the program is
//   well under way (a new kernel halfway through a run), is part of the
//   steady state.
// No start-up call before that point (imported traces carry no API calls
// of this kind): no start-up, and the steady state is the whole recording.
import type { CallColumns, OpColumns } from '../native/addon.ts';
import type { Ns } from '../contract/time.ts';
import type { Startup, StartupPart } from '../contract/scope.ts';
import { familiesByNameId } from '../cuda/call-families.ts';
import { type CallFamily } from '../contract/findings.ts';

/** Start-up ends before this share of the GPU's compute work is done. */
export const STARTUP_WORK_SHARE = 0.1;
/** OpColumns.kind of a kernel (trace.ts OpKind). */
const KERNEL = 1;
/** A lookup or first runtime call this long did more than look something up. */
export const SLOW_CALL_NS = 1_000_000;
/** Families whose calls are start-up calls (function lookups only when slow): a job read rank by rank reads only these, and slow calls, to find start-up (job-scope.ts). */
export const STARTUP_FAMILIES: ReadonlySet<CallFamily> = new Set(['module-load', 'context', 'function-lookup']);

const PART_LABEL: Record<StartupPart['what'], string> = {
  context: 'CUDA initialisation and context creation',
  modules: 'loading modules and compiling kernels (JIT)',
  memory: 'allocating and pinning memory',
  'other-calls': 'other CUDA calls',
  host: 'host code between CUDA calls (interpreter, imports, compilation)',
};

/** Priority when calls nest (a driver call inside a runtime call): the more specific wins. */
const PART_OF_FAMILY: Partial<Record<CallFamily, StartupPart['what']>> = {
  'module-load': 'modules',
  'function-lookup': 'modules',
  context: 'context',
  alloc: 'memory',
  'pinned-alloc': 'memory',
  register: 'memory',
};
const PRIORITY: StartupPart['what'][] = ['modules', 'context', 'memory', 'other-calls'];

/**
 * Detects start-up in a recording's loaded columns (both in start order).
 * `names`: call name by strings id (at least the calls' names).
 */
export function detectStartup(ops: OpColumns, calls: CallColumns, names: Map<number, string>, meta: Map<string, string>): Startup | null {
  const startup = startupOfCalls(calls, names, meta, workProgress(ops), ops.length ? ops.start[0]! : Infinity);
  // The operations left out: those that start before the cut (start order).
  if (startup) while (startup.ops < ops.length && ops.start[startup.ops]! < startup.endNs) startup.ops++;
  return startup;
}

/**
 * The GPU's work as start-up detection counts it (the kernels' summed
 * durations; all operations' where no kernel lasts), and where a tenth of
 * it is done: `limitStart`, the start of the operation (in start order) at
 * which the work done so far first exceeds the tenth. A call that starts
 * after it starts after a tenth of the work (Infinity: no work at all).
 * From the whole recording's operations; a job analysed rank by rank
 * finds the same from its zones (job-scope.ts).
 */
export interface WorkProgress {
  limitStart: Ns;
}

export function workProgress(ops: Pick<OpColumns, 'length' | 'kind' | 'start' | 'end'>): WorkProgress {
  // Columns in locals: read through `ops` on every op, this pass took ~0.19 s of 10 M operations on the analysing
  // thread, 0.04 s so. A kernel's duration added without a branch (0 for any other op: the same sum to the bit, it
  // starting at +0): the branch on the kind, mispredicted at every copy between kernels, took 0.04 s, this 0.02 s.
  const { kind, start, end, length: n } = ops;
  let kernelWork = 0;
  let allWork = 0;
  for (let i = 0; i < n; i++) {
    const d = end[i]! - start[i]!;
    allWork += d;
    kernelWork += kind[i] === KERNEL ? d : 0;
  }
  const onlyKernels = kernelWork > 0;
  return { limitStart: tenthDoneAt(ops, onlyKernels, (onlyKernels ? kernelWork : allWork) * STARTUP_WORK_SHARE, onlyKernels ? kernelWork : allWork) };
}

/**
 * The start of the first operation (in start order; kernels only when
 * `onlyKernels`) at which the work done, counted from `doneBefore`, exceeds
 * `limit`; Infinity where it never does or there is no work.
 */
export function tenthDoneAt(
  ops: Pick<OpColumns, 'length' | 'kind' | 'start' | 'end'>,
  onlyKernels: boolean,
  limit: number,
  totalWork: number,
  doneBefore = 0,
): Ns {
  if (!(totalWork > 0)) return Infinity;
  const { kind, start, end, length: n } = ops;
  let done = doneBefore;
  for (let j = 0; j < n; j++) {
    if (onlyKernels && kind[j] !== KERNEL) continue;
    done += end[j]! - start[j]!;
    if (done > limit) return start[j]!;
  }
  return Infinity;
}

/**
 * Start-up from the calls (start order) and where a tenth of the GPU's work
 * is done: the calls that start after `progress.limitStart` are not looked
 * at, so `calls` may stop there (or at the cut, for the breakdown of what
 * start-up was spent on). `firstOpStart`: the first operation's start.
 * `ops` of the result is 0: the caller counts the operations before the cut.
 */
export function startupOfCalls(
  calls: CallColumns,
  names: Map<number, string>,
  meta: Map<string, string>,
  progress: WorkProgress,
  firstOpStart: Ns,
): Startup | null {
  const families = familiesByNameId(names);
  const contextCreated = firstSlowCall(calls);
  let cut = -Infinity;
  let lastCall = -1;
  for (let k = 0; k < calls.length; k++) {
    const start = calls.start[k]!;
    // A tenth of the work is done before this call: start-up is over.
    if (start > progress.limitStart) break;
    const duration = calls.end[k]! - start;
    const family = families.family(calls.nameId[k]!);
    let startupCall = family === 'module-load' || family === 'context' || (family === 'function-lookup' && duration >= SLOW_CALL_NS);
    if (contextCreated(k)) startupCall = true;
    if (startupCall && calls.end[k]! > cut) {
      cut = calls.end[k]!;
      lastCall = k;
    }
  }
  if (lastCall < 0) return null;

  const first = Math.min(calls.length ? calls.start[0]! : Infinity, firstOpStart);
  const startNs = Math.min(first, cut);
  return {
    startNs,
    endNs: cut,
    lastCall: names.get(calls.nameId[lastCall]!) ?? '?',
    spentOn: breakdown(calls, families, startNs, cut),
    ops: 0,
    beforeCudaNs: beforeCuda(meta),
  };
}

/** Each instant of [from, to) to the most specific kind of call running then (any thread), or to host code. */
function breakdown(calls: CallColumns, families: ReturnType<typeof familiesByNameId>, from: Ns, to: Ns): StartupPart[] {
  type Edge = { t: number; part: number; delta: 1 | -1 };
  const edges: Edge[] = [];
  const contextCreated = firstSlowCall(calls);
  for (let k = 0; k < calls.length && calls.start[k]! < to; k++) {
    const s = Math.max(calls.start[k]!, from);
    const e = Math.min(calls.end[k]!, to);
    let what = PART_OF_FAMILY[families.family(calls.nameId[k]!)] ?? 'other-calls';
    if (contextCreated(k) && what === 'other-calls') what = 'context';
    if (e <= s) continue;
    const part = PRIORITY.indexOf(what);
    edges.push({ t: s, part, delta: 1 }, { t: e, part, delta: -1 });
  }
  edges.sort((a, b) => a.t - b.t);
  const active = new Int32Array(PRIORITY.length);
  const ns = new Float64Array(PRIORITY.length + 1); // last slot: host code
  let t = from;
  for (const edge of edges) {
    if (edge.t > t) {
      const top = active.findIndex((n) => n > 0);
      ns[top < 0 ? PRIORITY.length : top]! += edge.t - t;
      t = edge.t;
    }
    active[edge.part]! += edge.delta;
  }
  if (to > t) ns[PRIORITY.length]! += to - t;
  const whats: StartupPart['what'][] = [...PRIORITY, 'host'];
  return whats
    .map((what, x) => ({ what, label: PART_LABEL[what], ns: ns[x]! }))
    .filter((p) => p.ns > 0)
    .sort((a, b) => b.ns - a.ns);
}

/**
 * For calls visited in start order from the first: whether call k is its
 * process's first call of SLOW_CALL_NS or more, the one inside which the
 * CUDA runtime created the process's context.
 */
function firstSlowCall(calls: CallColumns): (k: number) => boolean {
  const seen = new Set<number>();
  return (k) => {
    if (calls.end[k]! - calls.start[k]! < SLOW_CALL_NS || seen.has(calls.pid[k]!)) return false;
    seen.add(calls.pid[k]!);
    return true;
  };
}

/** The recorder's start of the process (started_at, ms) to the collector's start (origin_wall_ns). */
function beforeCuda(meta: Map<string, string>): Ns | null {
  const started = Date.parse(meta.get('started_at') ?? '');
  const origin = Number(meta.get('origin_wall_ns'));
  if (!Number.isFinite(started) || !Number.isFinite(origin) || origin <= 0) return null;
  const ns = origin - started * 1e6;
  // Clocks of one machine: a negative or absurd value means the fields are not what we think.
  return ns >= 0 && ns < 3600e9 ? ns : null;
}
