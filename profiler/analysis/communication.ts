// Communication between GPUs (issue 13, part 3 and the first half of
// part 4): which GPU operations are NCCL collectives or peer copies, the
// collective each NCCL kernel runs, and per rank (process) how its GPU time
// splits into computation, communication, other copies and idle, with the
// share of communication hidden behind computation.
//
// What NCCL's kernel names and API calls mean is cuda/nccl.ts's; this file
// uses it over a loaded trace. NCCL's NVTX ranges (cuda/nccl.ts) say
// which call launched each NCCL kernel, with its message size.
//
// Peer copies are communication too: CUPTI's peer-to-peer copies (copy kind
// PtoP) and device-to-device copies whose source and destination are
// different GPUs (memcpys.src_device_id ≠ dst_device_id).
import type { Collective, CommKernel, CommKernelTime, Communication, RankDeviceTime, RankTime } from '../contract/communication.ts';
import type { Ns } from '../contract/time.ts';
import type { CallColumns } from '../native/addon.ts';
import { IdTable } from '../base/id-table.ts';
import { collectiveOfCall, commKernelOf, GROUP_END, GROUP_START } from '../cuda/nccl.ts';
import { readProcessFacts, type CommunicationInputs, type NcclRange, type ProcessFacts } from './load/communication.ts';
import { BusyUnion, deviceUnions } from './overlap.ts';
import { gpuOrdinals, OpCategory, OpKind, type DeviceRow, type Trace } from './trace.ts';

// What the analysis reads besides the loaded columns (small) is read by
// load/communication.ts: each process's facts, the peer copies, NCCL's NVTX
// ranges. Named here too, where the breakdown that takes them is.
export type { CommunicationInputs, NcclRange, ProcessFacts };
export { readProcessFacts };

// ---------------------------------------------------------------------------
// NCCL's NVTX ranges: which call launched an NCCL kernel

/** A group's calls are looked for this many ranges back at most (a group of thousands of sends is not split, only cut). */
const GROUP_CALLS_LOOKED_AT = 65536;

/** What NCCL's ranges say about the launch of a kernel. */
export interface NcclLaunch {
  /** The range the launch lies in: the call's, or ncclGroupEnd's for a group (nvtx_ranges.id). */
  rangeId: number;
  /** The call (ncclAllReduce, …); a group's when all its calls are one, else ncclGroupEnd. */
  call: string;
  /** The calls' collective; null where they are not of one kind. */
  collective: Collective | null;
  /** The calls' message sizes added up; null unless every call had one and they are of one kind. */
  bytes: number | null;
}

/** The calls behind the operations: Host's opCall and its calls' columns. */
export interface LaunchCalls {
  /** For each GPU op (trace order), the index of the API call that issued it, or -1. */
  opCall: Int32Array;
  calls: Pick<CallColumns, 'start' | 'pid' | 'tid'>;
}

/** One thread's NCCL ranges in start order (outer before inner at equal starts), each with the range that encloses it. */
class ThreadRanges {
  readonly ranges: NcclRange[];
  readonly parent: Int32Array;
  readonly launches = new Map<number, NcclLaunch | null>();
  constructor(ranges: NcclRange[]) {
    this.ranges = ranges;
    ranges.sort((a, b) => a.startNs - b.startNs || b.endNs - a.endNs || a.id - b.id);
    this.parent = new Int32Array(ranges.length);
    const open: number[] = [];
    for (let i = 0; i < ranges.length; i++) {
      while (open.length > 0 && ranges[open.at(-1)!]!.endNs < ranges[i]!.startNs) open.pop();
      this.parent[i] = open.at(-1) ?? -1;
      open.push(i);
    }
  }

  /** The innermost range open at t (start ≤ t ≤ end), or -1. */
  at(t: Ns): number {
    let lo = 0;
    let hi = this.ranges.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.ranges[mid]!.startNs <= t) lo = mid + 1;
      else hi = mid;
    }
    let k = lo - 1;
    while (k >= 0 && this.ranges[k]!.endNs < t) k = this.parent[k]!;
    return k;
  }

  /** The call a launch at t belongs to: the innermost enclosing collective call or group end. */
  launchAt(t: Ns): NcclLaunch | null {
    let k = this.at(t);
    while (k >= 0 && collectiveOfCall(this.ranges[k]!.name) === null && this.ranges[k]!.name !== GROUP_END) k = this.parent[k]!;
    if (k < 0) return null;
    let launch = this.launches.get(k);
    if (launch === undefined) this.launches.set(k, (launch = this.#launchOf(k)));
    return launch;
  }

  #launchOf(k: number): NcclLaunch | null {
    const r = this.ranges[k]!;
    if (r.name !== GROUP_END) return { rangeId: r.id, call: r.name, collective: collectiveOfCall(r.name), bytes: r.bytes };
    // A group: its calls are the ranges before its end back to the matching ncclGroupStart (groups nest; only the outermost end launches).
    const calls: NcclRange[] = [];
    let depth = 0;
    for (let j = k - 1; j >= 0 && j >= k - GROUP_CALLS_LOOKED_AT; j--) {
      const name = this.ranges[j]!.name;
      if (name === GROUP_END) depth++;
      else if (name === GROUP_START) {
        if (depth === 0) break;
        depth--;
      } else if (collectiveOfCall(name) !== null && this.ranges[j]!.endNs <= r.startNs) calls.push(this.ranges[j]!);
    }
    if (calls.length === 0) return null;
    const kinds = new Set(calls.map((c) => collectiveOfCall(c.name)));
    const names = new Set(calls.map((c) => c.name));
    return {
      rangeId: r.id,
      call: names.size === 1 ? calls[0]!.name : GROUP_END,
      collective: kinds.size === 1 ? [...kinds][0]! : null,
      // Calls of several kinds launch kernels of several kinds: which bytes went with which kernel is not known.
      bytes: kinds.size === 1 && calls.every((c) => c.bytes !== null) ? calls.reduce((t, c) => t + c.bytes!, 0) : null,
    };
  }
}

/**
 * For each NCCL kernel of the trace (an op whose name `labels` knows), the
 * NCCL call that launched it: the innermost collective call (or group end)
 * among NCCL's ranges on the thread of its launching API call that is open
 * when that call starts. Kernels launched outside NCCL's ranges (or whose
 * launching call is not in the scope) have none.
 */
export function ncclLaunches(
  trace: Trace,
  labels: ReadonlyMap<number, CommKernel>,
  launchCalls: LaunchCalls | (() => LaunchCalls),
  ranges: readonly NcclRange[],
): Map<number, NcclLaunch> {
  const out = new Map<number, NcclLaunch>();
  if (ranges.length === 0 || labels.size === 0) return out;
  // Asked for only now: the host model behind them is built when first needed (analyze.ts), and most recordings have
  // no NCCL range.
  const launch = typeof launchCalls === 'function' ? launchCalls() : launchCalls;
  const byThread = new Map<string, NcclRange[]>();
  for (const r of ranges) {
    const key = `${r.pid}:${r.tid}`;
    const list = byThread.get(key);
    if (list) list.push(r);
    else byThread.set(key, [r]);
  }
  const threads = new Map([...byThread].map(([key, list]) => [key, new ThreadRanges([...list])]));
  const { ops } = trace;
  const { calls } = launch;
  for (let i = 0; i < ops.length; i++) {
    if (ops.kind[i] !== OpKind.Kernel || !labels.has(ops.detail[i]!)) continue;
    const call = launch.opCall[i]!;
    if (call < 0) continue;
    const found = threads.get(`${calls.pid[call]}:${calls.tid[call]}`)?.launchAt(calls.start[call]!);
    if (found) out.set(i, found);
  }
  return out;
}

// ---------------------------------------------------------------------------
// Which operations are communication

/** An operation's part in the breakdown. */
export const OpRole = { Compute: 0, Communication: 1, Copy: 2 } as const;
export type OpRoleValue = (typeof OpRole)[keyof typeof OpRole];

/** A trace's NCCL kernels: the label of each of their names, and which operations they are. */
interface CommKernels {
  labels: Map<number, CommKernel>;
  /** Per operation (trace order): 1 for an NCCL kernel. */
  ops: Uint8Array;
}

const commKernelsOf = new WeakMap<Trace, CommKernels>();

/** Once per trace: the breakdown, the replay's resources, the collective groups and their rule all ask. */
function commKernels(trace: Trace): CommKernels {
  let found = commKernelsOf.get(trace);
  if (!found) commKernelsOf.set(trace, (found = readCommKernels(trace)));
  return found;
}

/** The label of every distinct NCCL kernel name of the trace (kernels.name_id → label). */
export function commKernelLabels(trace: Trace): ReadonlyMap<number, CommKernel> {
  return commKernels(trace).labels;
}

/**
 * Per operation of the trace (its order), 1 for an NCCL kernel: a kernel
 * whose name commKernelLabels labels. Found in the pass that finds the
 * names, where each loop over the operations would look each kernel's name
 * up again (a pass of ~10 ms per million operations, four of them).
 */
export function commKernelOps(trace: Trace): Uint8Array {
  return commKernels(trace).ops;
}

/** What each name id of a strings table is: 0 not yet seen, 1 not an NCCL kernel's, 2 an NCCL kernel's (an id outside the table has no name: 1); the labels of the 2s. */
interface NameKinds {
  kind: IdTable;
  labels: Map<number, CommKernel>;
  /** No string of the table has 'nccl' in it: no kernel is NCCL's (commKernelOf), and no operation need be looked at. */
  none: boolean;
}

/**
 * Per strings table, not per trace: the iterations build a trace per
 * instance over the same tables, and walking every string of the
 * recording for each (thousands of steps) would cost more than their
 * operations.
 */
const nameKindsOf = new WeakMap<ReadonlyMap<number, string>, NameKinds>();

function nameKinds(strings: ReadonlyMap<number, string>): NameKinds {
  let found = nameKindsOf.get(strings);
  if (!found) {
    const kind = IdTable.of(strings.keys(), 1);
    let none = true;
    for (const [id, value] of strings) {
      kind.set(id, 0);
      if (none && value.includes('nccl')) none = false;
    }
    nameKindsOf.set(strings, (found = { kind, labels: new Map(), none }));
  }
  return found;
}

function readCommKernels(trace: Trace): CommKernels {
  const { length, kind, detail } = trace.ops;
  const names = nameKinds(trace.strings);
  const labels = new Map<number, CommKernel>();
  const ops = new Uint8Array(length);
  // A recording without NCCL (one GPU's, most of them): its names say so, and 10 M operations need no pass (~80 ms).
  if (names.none) return { labels, ops };
  for (let i = 0; i < length; i++) {
    if (kind[i] !== OpKind.Kernel) continue;
    const id = detail[i]!;
    let name = names.kind.get(id);
    if (name === 0) {
      const label = commKernelOf(trace.strings.get(id)!);
      if (label) names.labels.set(id, label);
      names.kind.set(id, (name = label ? 2 : 1));
    }
    if (name === 2) {
      ops[i] = 1;
      // This trace's own names only: a trace without NCCL kernels has no labels.
      if (!labels.has(id)) labels.set(id, names.labels.get(id)!);
    }
  }
  return { labels, ops };
}

/** Each operation's role at (kind & 3) << 3 | category, but for NCCL kernels and peer copies between devices (opRoles): kernels compute, peer-to-peer copies communication, every other copy and memset a copy. */
const ROLE_BY_KIND_AND_CATEGORY = Uint8Array.from({ length: 4 << 3 }, (_, at) => {
  const kind = at >> 3;
  return kind === OpKind.Kernel ? OpRole.Compute : kind === OpKind.Memcpy && (at & 7) === OpCategory.PtoP ? OpRole.Communication : OpRole.Copy;
});

/**
 * Per operation (trace order): compute (a kernel that is not
 * communication), communication (an NCCL kernel or a peer copy) or copy
 * (any other copy, and memsets).
 */
export function opRoles(trace: Trace, peerCopyIds: ReadonlySet<number>): Uint8Array {
  const { length, kind, category, rowId } = trace.ops;
  const roles = new Uint8Array(length);
  const nccl = commKernelOps(trace);
  // A role by one table lookup on (kind, category), with NCCL kernels and peer device-to-device copies (both rare: their
  // branches are foreseen) set apart; a branch on the kind mispredicts where a stream's kernels and copies interleave
  // (a generated rank's 1 M operations: 5.8 ms with it, 4.2 without).
  for (let i = 0; i < length; i++) {
    const c = category[i]!;
    let role = ROLE_BY_KIND_AND_CATEGORY[((kind[i]! & 3) << 3) | (c & 7)]!;
    if (nccl[i] === 1) role = OpRole.Communication;
    else if (c === OpCategory.DtoD && kind[i] === OpKind.Memcpy && peerCopyIds.has(rowId[i]!)) role = OpRole.Communication;
    roles[i] = role;
  }
  return roles;
}

// ---------------------------------------------------------------------------
// The breakdown

/**
 * Busy time of one process on one device, per role, measured in one pass in
 * start order: the unions' lengths, not their intervals (each role's list of
 * intervals, then their intersection and unions walked, were 0.5 s of the
 * Stats tab's tables at 10 M kernels). Compute or communication, and any
 * operation, are unions of their own; the communication hidden behind
 * compute is |compute| + |communication| − |compute ∪ communication|, which
 * times in whole nanoseconds make exactly the length of their intersection.
 */
class RoleBusy {
  readonly #compute = new BusyUnion();
  readonly #communication = new BusyUnion();
  readonly #computeOrComm = new BusyUnion();
  readonly #any = new BusyUnion();
  add(role: number, a: number, b: number): void {
    if (role === OpRole.Compute) this.#compute.add(a, b);
    else if (role === OpRole.Communication) this.#communication.add(a, b);
    if (role !== OpRole.Copy) this.#computeOrComm.add(a, b);
    this.#any.add(a, b);
  }
  busy(pid: number, deviceId: number): DeviceBusy {
    const computeNs = this.#compute.busy().union;
    const communicationNs = this.#communication.busy().union;
    const computeOrCommNs = this.#computeOrComm.busy().union;
    return {
      pid,
      deviceId,
      computeNs,
      communicationNs,
      hiddenNs: computeNs + communicationNs - computeOrCommNs,
      computeOrCommNs,
      busyNs: this.#any.busy().union,
    };
  }
}

/**
 * One process's busy time on one device, without the span: what the
 * breakdown needs of its role unions, added up by the time the span is
 * known (finishCommunication; a job analysed rank by rank learns the span
 * from every rank).
 */
export interface DeviceBusy {
  pid: number;
  deviceId: number;
  computeNs: Ns;
  communicationNs: Ns;
  hiddenNs: Ns;
  /** Compute or communication. */
  computeOrCommNs: Ns;
  /** Any of its operations. */
  busyNs: Ns;
}

/** A process's busy time on a device as its breakdown over `spanNs` (the scope's GPU span; an iteration's own: iterations.ts). */
export function deviceTime(b: DeviceBusy, gpu: number, spanNs: Ns): RankDeviceTime {
  return {
    deviceId: b.deviceId,
    gpu,
    spanNs,
    computeNs: b.computeNs,
    communicationNs: b.communicationNs,
    hiddenNs: b.hiddenNs,
    exposedNs: b.communicationNs - b.hiddenNs,
    copyNs: b.busyNs - b.computeOrCommNs,
    idleNs: spanNs - b.busyNs,
    overlap: b.communicationNs > 0 ? b.hiddenNs / b.communicationNs : null,
  };
}

/** Kernel time and bytes of one NCCL kernel name run as one collective, or of one collective. */
export interface Tally {
  count: number;
  totalNs: number;
  /** Bytes of the calls that launched them, each call counted once; null until one had a size. */
  bytes: number | null;
  /** Time of the kernels whose call had a size: what `bytes` moved in. */
  sizedNs: number;
}

function tally(): Tally {
  return { count: 0, totalNs: 0, bytes: null, sizedNs: 0 };
}

/** `from` added into `into`: a call's bytes were counted once by the part that held its kernels (a process's calls are in one part). */
function addTally(into: Tally, from: Tally): void {
  into.count += from.count;
  into.totalNs += from.totalNs;
  if (from.bytes !== null) into.bytes = (into.bytes ?? 0) + from.bytes;
  into.sizedNs += from.sizedNs;
}

/** Bytes per second of `t`'s sized kernels: NCCL's algorithm bandwidth (nccl-tests' algbw: the call's size over its time). */
function algorithmBandwidth(t: Tally): number | null {
  return t.bytes !== null && t.sizedNs > 0 ? t.bytes / (t.sizedNs / 1e9) : null;
}

/**
 * Communication in a trace, before the span is known: each process's busy
 * time per device and role, NCCL kernel time by name and collective, peer
 * copies. Parts of disjoint sets of processes add up (mergeCommunicationParts)
 * to the part of all of them: a job analysed rank by rank.
 */
export interface CommunicationPart {
  busy: DeviceBusy[];
  kernels: { nameId: number; collective: Collective; t: Tally }[];
  collectives: { collective: Collective; t: Tally }[];
  peerCopies: { count: number; bytes: number; totalNs: Ns };
  ncclRanges: { kernels: number; fromRanges: number; withBytes: number };
}

/**
 * The part of communicationOf that needs no span (see there): one pass over
 * the trace's operations, or none where the devices' unions tell it.
 */
export function communicationPart(trace: Trace, inputs: CommunicationInputs, launch?: LaunchCalls | (() => LaunchCalls)): CommunicationPart {
  const { ops } = trace;
  const labels = commKernelLabels(trace);
  const roles = opRoles(trace, inputs.peerCopyIds);
  const busy = busyOfDevices(trace, roles);
  if (busy)
    return {
      busy,
      kernels: [],
      collectives: [],
      peerCopies: { count: 0, bytes: 0, totalNs: 0 },
      ncclRanges: { kernels: 0, fromRanges: 0, withBytes: 0 },
    };
  const launches = launch ? ncclLaunches(trace, labels, launch, inputs.ncclRanges) : new Map<number, NcclLaunch>();

  // One pass: busy unions per (process, device) and role; kernel times by name and collective; peer copies.
  const unions = new Map<number, Map<number, RoleBusy>>();
  const byKernel = new Map<string, { nameId: number; collective: Collective; t: Tally }>();
  const byCollective = new Map<Collective, Tally>();
  const counted = new Set<number>(); // ranges whose bytes are added already: a call's bytes count once, however many kernels it launched
  const nccl = { kernels: 0, fromRanges: 0, withBytes: 0 };
  const peerCopies = { count: 0, bytes: 0, totalNs: 0 };
  let lastPid = NaN;
  let lastDevice = NaN;
  let current: RoleBusy | undefined;
  for (let i = 0; i < ops.length; i++) {
    const a = ops.start[i]!;
    const b = ops.end[i]!;
    if (b < a) continue; // malformed: counts for nothing, as everywhere in the analysis
    const pid = ops.pid[i]!;
    const device = ops.device[i]!;
    if (pid !== lastPid || device !== lastDevice || !current) {
      let perDevice = unions.get(pid);
      if (!perDevice) unions.set(pid, (perDevice = new Map()));
      current = perDevice.get(device);
      if (!current) perDevice.set(device, (current = new RoleBusy()));
      lastPid = pid;
      lastDevice = device;
    }
    const role = roles[i]!;
    current.add(role, a, b);
    if (role !== OpRole.Communication) continue;
    if (ops.kind[i] === OpKind.Kernel) {
      const id = ops.detail[i]!;
      const call = launches.get(i);
      const collective = call?.collective ?? labels.get(id)!.collective;
      const key = `${id}:${collective}`;
      let k = byKernel.get(key);
      if (!k) byKernel.set(key, (k = { nameId: id, collective, t: tally() }));
      let c = byCollective.get(collective);
      if (!c) byCollective.set(collective, (c = tally()));
      nccl.kernels++;
      if (call) nccl.fromRanges++;
      for (const t of [k.t, c]) {
        t.count++;
        t.totalNs += b - a;
      }
      if (call?.bytes != null) {
        nccl.withBytes++;
        const first = !counted.has(call.rangeId);
        counted.add(call.rangeId);
        for (const t of [k.t, c]) {
          t.sizedNs += b - a;
          if (first) t.bytes = (t.bytes ?? 0) + call.bytes;
        }
      }
    } else {
      peerCopies.count++;
      peerCopies.bytes += ops.bytes[i]!;
      peerCopies.totalNs += b - a;
    }
  }
  return {
    busy: [...unions].flatMap(([pid, perDevice]) => [...perDevice].map(([deviceId, u]) => u.busy(pid, deviceId))),
    kernels: [...byKernel.values()],
    collectives: [...byCollective].map(([collective, t]) => ({ collective, t })),
    peerCopies,
    ncclRanges: nccl,
  };
}

/**
 * Each process's busy time per device read from the devices' unions
 * (overlap.ts deviceUnions: the analysis built them), where they are the
 * breakdown's: no operation is communication, every kernel is the device's
 * compute (category) and nothing else is, each device ran one process's
 * operations and none malformed (the breakdown leaves those out before it
 * meets their device). The usual program of one process: its 10 M
 * operations took the breakdown's pass 0.25 s to measure again. Null
 * otherwise. In the order that pass gives: processes as their first
 * operation comes, each one's devices likewise.
 */
function busyOfDevices(trace: Trace, roles: Uint8Array): DeviceBusy[] | null {
  if (roles.includes(OpRole.Communication)) return null;
  const devices = deviceUnions(trace);
  for (const d of devices.values()) if (d.pid === null || d.all.count !== d.operations) return null;
  const { category, length } = trace.ops;
  for (let i = 0; i < length; i++) if ((roles[i] === OpRole.Compute) !== (category[i] === OpCategory.Compute)) return null;
  const byPid = new Map<number, DeviceBusy[]>();
  for (const [deviceId, d] of devices) {
    const computeNs = d.compute.union;
    const b: DeviceBusy = { pid: d.pid!, deviceId, computeNs, communicationNs: 0, hiddenNs: 0, computeOrCommNs: computeNs, busyNs: d.all.union };
    const list = byPid.get(d.pid!);
    if (list) list.push(b);
    else byPid.set(d.pid!, [b]);
  }
  return [...byPid.values()].flat();
}

/** The parts of disjoint sets of processes as one (in the order given: the result does not depend on it). */
export function mergeCommunicationParts(parts: CommunicationPart[]): CommunicationPart {
  const kernels = new Map<string, { nameId: number; collective: Collective; t: Tally }>();
  const collectives = new Map<Collective, Tally>();
  const out: CommunicationPart = {
    busy: [],
    kernels: [],
    collectives: [],
    peerCopies: { count: 0, bytes: 0, totalNs: 0 },
    ncclRanges: { kernels: 0, fromRanges: 0, withBytes: 0 },
  };
  for (const p of parts) {
    for (const b of p.busy) out.busy.push(b);
    for (const k of p.kernels) {
      const key = `${k.nameId}:${k.collective}`;
      let into = kernels.get(key);
      if (!into) kernels.set(key, (into = { nameId: k.nameId, collective: k.collective, t: tally() }));
      addTally(into.t, k.t);
    }
    for (const c of p.collectives) {
      let into = collectives.get(c.collective);
      if (!into) collectives.set(c.collective, (into = tally()));
      addTally(into, c.t);
    }
    out.peerCopies.count += p.peerCopies.count;
    out.peerCopies.bytes += p.peerCopies.bytes;
    out.peerCopies.totalNs += p.peerCopies.totalNs;
    out.ncclRanges.kernels += p.ncclRanges.kernels;
    out.ncclRanges.fromRanges += p.ncclRanges.fromRanges;
    out.ncclRanges.withBytes += p.ncclRanges.withBytes;
  }
  out.kernels = [...kernels.values()];
  out.collectives = [...collectives].map(([collective, t]) => ({ collective, t }));
  return out;
}

/** What finishCommunication names kernels, GPUs and ranks with: a trace's tables (TraceTables) and the processes. */
export interface CommunicationNames {
  strings: Map<number, string>;
  demangled: Map<number, string>;
  devices: DeviceRow[];
  processes: ReadonlyMap<number, ProcessFacts>;
}

/** A part as the Communication the report and the API give, over `span` (the scope's GPU span). */
export function finishCommunication(part: CommunicationPart, names: CommunicationNames, span: { start: Ns; end: Ns }): Communication {
  const spanNs = Math.max(0, span.end - span.start);
  const gpu = gpuOrdinals(names.devices);
  const byPid = new Map<number, DeviceBusy[]>();
  for (const b of part.busy) {
    const list = byPid.get(b.pid);
    if (list) list.push(b);
    else byPid.set(b.pid, [b]);
  }
  const ranks: RankTime[] = [...byPid].map(([pid, busy]) => {
    const devices = busy.map((b) => deviceTime(b, gpu(b.deviceId), spanNs)).sort((x, y) => x.gpu - y.gpu || x.deviceId - y.deviceId);
    const sum = (k: 'spanNs' | 'computeNs' | 'communicationNs' | 'hiddenNs' | 'exposedNs' | 'copyNs' | 'idleNs') => devices.reduce((t, d) => t + d[k], 0);
    const communicationNs = sum('communicationNs');
    const hiddenNs = sum('hiddenNs');
    const facts = names.processes.get(pid);
    return {
      pid,
      rank: facts?.rank ?? null,
      localRank: facts?.localRank ?? null,
      worldSize: facts?.worldSize ?? null,
      host: facts?.host ?? null,
      devices,
      total: {
        spanNs: sum('spanNs'),
        computeNs: sum('computeNs'),
        communicationNs,
        hiddenNs,
        exposedNs: sum('exposedNs'),
        copyNs: sum('copyNs'),
        idleNs: sum('idleNs'),
        overlap: communicationNs > 0 ? hiddenNs / communicationNs : null,
      },
    };
  });
  ranks.sort((x, y) => (x.rank ?? Infinity) - (y.rank ?? Infinity) || x.pid - y.pid);

  const kernels: CommKernelTime[] = part.kernels
    .map(({ nameId, collective, t }) => {
      const name = names.strings.get(nameId) ?? `<string ${nameId}>`;
      return {
        name,
        demangledName: names.demangled.get(nameId) ?? null,
        ...commKernelOf(name)!,
        collective,
        count: t.count,
        totalNs: t.totalNs,
        bytes: t.bytes,
      };
    })
    .sort((x, y) => y.totalNs - x.totalNs || (x.name < y.name ? -1 : x.name > y.name ? 1 : x.collective < y.collective ? -1 : 1));
  return {
    present: kernels.length > 0 || part.peerCopies.count > 0,
    ranks,
    collectives: part.collectives
      .map(({ collective, t }) => ({ collective, count: t.count, totalNs: t.totalNs, bytes: t.bytes, algorithmBandwidth: algorithmBandwidth(t) }))
      .sort((x, y) => y.totalNs - x.totalNs || (x.collective < y.collective ? -1 : 1)),
    peerCopies: { ...part.peerCopies },
    kernels,
    ncclRanges: { ...part.ncclRanges },
  };
}

/**
 * Communication in a trace: every process's time breakdown on each GPU it
 * used, over `span` (the scope's GPU span: Context.gpuSpan), NCCL kernels
 * by collective, peer copies. With `launch` (the host's calls behind the
 * operations, or what gives them: read only where NCCL's ranges were
 * recorded), each NCCL kernel whose launch lies in one of NCCL's NVTX
 * ranges takes its collective and bytes from the call (ncclLaunches).
 */
export function communicationOf(
  trace: Trace,
  inputs: CommunicationInputs,
  span: { start: Ns; end: Ns },
  launch?: LaunchCalls | (() => LaunchCalls),
): Communication {
  return finishCommunication(communicationPart(trace, inputs, launch), { ...trace, processes: inputs.processes }, span);
}
