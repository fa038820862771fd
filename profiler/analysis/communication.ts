// Communication between GPUs (issue 13, part 3 and the first half of
// part 4): which GPU operations are NCCL collectives or peer copies, the
// collective each NCCL kernel runs, and per rank (process) how its GPU time
// splits into computation, communication, other copies and idle, with the
// share of communication hidden behind computation.
//
// NCCL kernel names, in every form NCCL has used (NVIDIA/nccl on GitHub):
//
//   2.3        ncclAllReduceLLKernel_sum_f32, ncclAllReduceKernel_sum_f32
//              (src/collectives/collectives.h: NCCL_KERN_NAME(coll, op, dtype)
//              = coll##Kernel_##op##_##dtype, coll = ncclAllReduce[LL])
//   2.4 – 2.7  ncclAllReduceRingLLKernel_sum_f32, ncclAllReduceTreeLLKernel_…,
//              ncclAllReduceCollNetLLKernel_… (2.7), ncclAllGatherRingLLKernel_copy_i8,
//              ncclSendRecvKernel_copy_i8 (2.7) (src/include/collectives.h, the same
//              macro over coll##Ring/Tree/CollNet##LL; src/collectives/device/common.h)
//   2.8 – 2.18 ncclKernel_AllReduce_RING_LL_Sum_float, …_COLLNET_DIRECT_LL_…,
//              ncclKernel_AllGather_RING_LL_Sum_int8_t, ncclKernel_SendRecv_RING_SIMPLE_Sum_int8_t
//              (src/include/collectives.h: NCCL_KERN_NAME(func, algo, proto, redop, type)
//              = ncclKernel_##func##_##algo##_##proto##_##redop##_##type; type is the C type,
//              and AllGather, Broadcast and SendRecv carry Sum/int8_t as placeholders)
//   2.19 –     ncclDevKernel_AllReduce_Sum_f32_RING_LL, ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL,
//              ncclDevKernel_AllGather_RING_LL, ncclDevKernel_Broadcast_RING_LL,
//              ncclDevKernel_SendRecv, ncclDevKernel_Generic (src/device/generate.py:
//              paste("_", "ncclDevKernel", coll, redop, ty, algo, proto) over best_kernel();
//              Generic in src/device/common.cu runs any collective)
//   2.27       ncclSymDevKernel_AllReduce_AGxLL_R_sum_f32, ncclSymDevKernel_AllGather_LL
//   2.28 –     ncclSymkDevKernel_… (symmetric-memory kernels: src/device/symmetric/generate.py,
//              kernel_cname(): coll, algo, red, ty; algorithm names hold underscores)
//
// RCCL (AMD's fork, ROCm/rccl src/device/common.h) adds ncclDevKernel_Generic_1/_2/_4
// (unroll variants) and ncclDevKernelDebug_…: read as 'other'. CUPTI stores
// the mangled symbol (`_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE`),
// Kineto and Nsight Systems the demangled one
// (`ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)`):
// both read the same. Any other kernel whose function name starts with
// `nccl` is communication of collective 'other', as Holistic Trace
// Analysis counts it (hta/common/types.py, CommunicateKernelGroupingPattern
// `^nccl.*`). NCCL runs all-to-all (and gather, scatter) in its SendRecv
// kernel, so a kernel name never says 'all-to-all'; NCCL's NVTX ranges would.
//
// Peer copies are communication too: CUPTI's peer-to-peer copies (copy kind
// PtoP) and device-to-device copies whose source and destination are
// different GPUs (memcpys.src_device_id ≠ dst_device_id).
import type { Db } from '../store/database.ts';
import { ZONED_TABLES } from '../store/zone-tables.ts';
import type { Collective, CommKernel, CommKernelTime, Communication, RankDeviceTime, RankTime } from '../contract/communication.ts';
import type { Ns } from '../contract/time.ts';
import { intersectionLength, lengthOf, unionOfLists, type IntervalList } from './intervals.ts';
import { gpuOrdinals, OpCategory, OpKind, type Trace } from './trace.ts';

// ---------------------------------------------------------------------------
// Kernel names

/**
 * The function's name in a kernel name as stored: `_Z<length><name>…`
 * (a mangled function at global scope, as NCCL's kernels are), or a
 * demangled declaration without its return type, template arguments and
 * parameters.
 */
export function kernelSymbol(name: string): string {
  const mangled = /^_ZL?(\d+)/.exec(name);
  if (mangled) {
    const from = mangled[0].length;
    return name.slice(from, from + Number(mangled[1]));
  }
  let s = name.trim();
  if (s.startsWith('void ')) s = s.slice(5);
  const cut = s.search(/[(<]/);
  return (cut >= 0 ? s.slice(0, cut) : s).trim();
}

const COLLECTIVE_OF: Record<string, Collective> = {
  AllReduce: 'all-reduce',
  AllGather: 'all-gather',
  AllGatherV: 'all-gather',
  ReduceScatter: 'reduce-scatter',
  Reduce: 'reduce',
  Broadcast: 'broadcast',
  SendRecv: 'send-recv',
};
/** The collectives whose kernels carry a reduction and a data type that mean something. */
const REDUCING = new Set(['AllReduce', 'Reduce', 'ReduceScatter']);
const PROTOCOLS = new Set(['LL', 'LL128', 'SIMPLE']);
/** NCCL 2.8–2.18 name the C type; everything else uses NCCL's short names (generate.py all_tys). */
const SHORT_TYPE: Record<string, string> = {
  int8_t: 'i8',
  uint8_t: 'u8',
  int32_t: 'i32',
  uint32_t: 'u32',
  int64_t: 'i64',
  uint64_t: 'u64',
  half: 'f16',
  float: 'f32',
  double: 'f64',
  __nv_bfloat16: 'bf16',
  __nv_fp8_e4m3: 'f8e4m3',
  __nv_fp8_e5m2: 'f8e5m2',
};
const OLD_ALGORITHM: Record<string, string> = { Ring: 'RING', Tree: 'TREE', CollNet: 'COLLNET' };

/** NCCL ≥ 2.19: ncclDevKernel_<Coll>[_<Redop>_<ty>]_<ALGO>_<PROTO>, ncclDevKernel_SendRecv, ncclDevKernel_Generic. */
function devKernel(sym: string): CommKernel | null {
  const m = /^ncclDevKernel(?:Debug)?_([A-Za-z]+)(?:_(.*))?$/.exec(sym);
  if (!m) return null;
  const coll = m[1]!;
  if (coll === 'Generic') return { collective: 'other' };
  const collective = COLLECTIVE_OF[coll];
  if (!collective) return null;
  const t = m[2] ? m[2].split('_') : [];
  const proto = t.at(-1);
  if (coll === 'SendRecv' || !proto || !PROTOCOLS.has(proto)) return { collective };
  if (REDUCING.has(coll)) {
    if (t.length < 4) return { collective };
    return { collective, algorithm: t.slice(2, -1).join('_'), protocol: proto, dtype: t[1]!, op: t[0]!.toLowerCase() };
  }
  if (t.length < 2) return { collective };
  return { collective, algorithm: t.slice(0, -1).join('_'), protocol: proto };
}

/** NCCL ≥ 2.27, symmetric memory: ncclSym[k]DevKernel_<Coll>_<algo>[_<red>_<ty>]. */
function symKernel(sym: string): CommKernel | null {
  const m = /^ncclSymk?DevKernel_([A-Za-z]+)_(.+)$/.exec(sym);
  if (!m) return null;
  const collective = COLLECTIVE_OF[m[1]!];
  if (!collective) return null;
  const t = m[2]!.split('_');
  if (REDUCING.has(m[1]!) && t.length >= 3) {
    return { collective, algorithm: t.slice(0, -2).join('_'), dtype: t.at(-1)!, op: t.at(-2)!.toLowerCase() };
  }
  return { collective, algorithm: m[2]! };
}

/** NCCL 2.8–2.18: ncclKernel_<Func>_<ALGO>_<PROTO>_<Redop>_<C type>. */
function kernel28(sym: string): CommKernel | null {
  const m = /^ncclKernel_([A-Za-z]+)_(.+)$/.exec(sym);
  if (!m) return null;
  const coll = m[1]!;
  const collective = COLLECTIVE_OF[coll];
  if (!collective) return null;
  if (coll === 'SendRecv') return { collective };
  const t = m[2]!.split('_');
  const p = t.findIndex((x, k) => k > 0 && PROTOCOLS.has(x));
  if (p < 0) return { collective };
  const info: CommKernel = { collective, algorithm: t.slice(0, p).join('_'), protocol: t[p]! };
  if (REDUCING.has(coll) && t.length > p + 2) {
    const type = t.slice(p + 2).join('_');
    info.dtype = SHORT_TYPE[type] ?? type;
    info.op = t[p + 1]!.toLowerCase();
  }
  return info;
}

/** NCCL 2.3–2.7: nccl<Coll>[Ring|Tree|CollNet][LL|LL128]Kernel_<op>_<ty>. */
function kernel23(sym: string): CommKernel | null {
  const m = /^nccl(AllReduce|AllGather|ReduceScatter|Reduce|Broadcast|SendRecv)(Ring|Tree|CollNet)?(LL128|LL)?Kernel_([a-z]+)_([a-z0-9]+)$/.exec(sym);
  if (!m) return null;
  const coll = m[1]!;
  const collective = COLLECTIVE_OF[coll]!;
  if (coll === 'SendRecv') return { collective };
  const info: CommKernel = { collective };
  if (m[2]) info.algorithm = OLD_ALGORITHM[m[2]]!;
  // The kernel without LL in its name is the simple protocol's (2.3; declared only, from 2.4).
  info.protocol = m[3] ?? 'SIMPLE';
  if (REDUCING.has(coll)) {
    info.dtype = m[5]!;
    info.op = m[4]!;
  }
  return info;
}

/**
 * The collective an NCCL kernel runs, with the variant its name gives;
 * null for a kernel that is not communication. `name` as stored (mangled)
 * or demangled.
 */
export function commKernelOf(name: string): CommKernel | null {
  const sym = kernelSymbol(name);
  if (!sym.startsWith('nccl')) return null;
  return devKernel(sym) ?? symKernel(sym) ?? kernel28(sym) ?? kernel23(sym) ?? { collective: 'other' };
}

// ---------------------------------------------------------------------------
// What the analysis reads besides the loaded columns (small)

export interface ProcessFacts {
  pid: number;
  rank: number | null;
  localRank: number | null;
  worldSize: number | null;
  host: string | null;
}

export interface CommunicationInputs {
  processes: Map<number, ProcessFacts>;
  /** memcpys.id of the device-to-device copies between two different GPUs. */
  peerCopyIds: Set<number>;
}

/** Each process's rank, local rank, world size (null when not launched as a rank) and host. */
export function readProcessFacts(db: Db): Map<number, ProcessFacts> {
  // Every recording has the rank columns once open: schema 8 added them, and opening migrates.
  const rows = db.prepare('SELECT pid, rank, local_rank AS localRank, world_size AS worldSize, host FROM processes').all() as ProcessFacts[];
  return new Map(rows.map((r) => [r.pid, r]));
}

/** CUPTI's device-to-device copy kind (memcpys.copy_kind). */
const COPY_KIND_DTOD = 8;

/**
 * The ids of device-to-device copies between two different GPUs. Only
 * the blocks of memcpys whose zones count DtoD rows are read (zones'
 * copy_kind_rows; a zone without the count is read).
 */
export function readPeerCopyIds(db: Db): Set<number> {
  const zones = db.prepare('SELECT first_id, last_id, copy_kind_rows FROM zones WHERE table_id = ? ORDER BY first_id').raw().all(ZONED_TABLES.memcpys.id) as [
    number,
    number,
    string | null,
  ][];
  const ids = new Set<number>();
  const read = db.prepare(
    `SELECT id FROM memcpys WHERE id BETWEEN ? AND ? AND copy_kind = ${COPY_KIND_DTOD}
      AND src_device_id IS NOT NULL AND dst_device_id IS NOT NULL AND src_device_id <> dst_device_id`,
  );
  // Adjacent blocks are read as one range.
  let from = -1;
  let to = -1;
  const flush = () => {
    if (from >= 0) for (const id of read.pluck().iterate(from, to) as Iterable<number>) ids.add(id);
  };
  for (const [first, last, kinds] of zones) {
    if (kinds !== null && !kinds.includes(`"${COPY_KIND_DTOD}":`)) continue;
    if (from >= 0 && first <= to + 1) to = Math.max(to, last);
    else {
      flush();
      from = first;
      to = last;
    }
  }
  flush();
  return ids;
}

export function readCommunicationInputs(db: Db): CommunicationInputs {
  return { processes: readProcessFacts(db), peerCopyIds: readPeerCopyIds(db) };
}

// ---------------------------------------------------------------------------
// Which operations are communication

/** An operation's part in the breakdown. */
export const OpRole = { Compute: 0, Communication: 1, Copy: 2 } as const;
export type OpRoleValue = (typeof OpRole)[keyof typeof OpRole];

/** The label of every distinct NCCL kernel name of the trace (kernels.name_id → label). */
export function commKernelLabels(trace: Trace): Map<number, CommKernel> {
  const { ops } = trace;
  const seen = new Set<number>();
  const labels = new Map<number, CommKernel>();
  for (let i = 0; i < ops.length; i++) {
    if (ops.kind[i] !== OpKind.Kernel) continue;
    const id = ops.detail[i]!;
    if (seen.has(id)) continue;
    seen.add(id);
    const label = commKernelOf(trace.strings.get(id) ?? '');
    if (label) labels.set(id, label);
  }
  return labels;
}

/**
 * Per operation (trace order): compute (a kernel that is not
 * communication), communication (an NCCL kernel or a peer copy) or copy
 * (any other copy, and memsets).
 */
export function opRoles(trace: Trace, peerCopyIds: ReadonlySet<number>, labels = commKernelLabels(trace)): Uint8Array {
  const { ops } = trace;
  const roles = new Uint8Array(ops.length);
  for (let i = 0; i < ops.length; i++) {
    const kind = ops.kind[i]!;
    if (kind === OpKind.Kernel) roles[i] = labels.has(ops.detail[i]!) ? OpRole.Communication : OpRole.Compute;
    else if (kind === OpKind.Memcpy) {
      const c = ops.category[i]!;
      roles[i] = c === OpCategory.PtoP || (c === OpCategory.DtoD && peerCopyIds.has(ops.rowId[i]!)) ? OpRole.Communication : OpRole.Copy;
    } else roles[i] = OpRole.Copy;
  }
  return roles;
}

// ---------------------------------------------------------------------------
// The breakdown

/** Busy intervals of one process on one device, per role, built in one pass in start order. */
class RoleUnions {
  readonly lists: number[][] = [[], [], []];
  readonly s = [0, 0, 0];
  readonly e = [-Infinity, -Infinity, -Infinity];
  add(role: number, a: number, b: number): void {
    // As unionOf (intervals.ts): touching intervals merge, empty ones count for nothing.
    if (a > this.e[role]!) {
      if (this.e[role]! > this.s[role]!) this.lists[role]!.push(this.s[role]!, this.e[role]!);
      this.s[role] = a;
      this.e[role] = b;
    } else if (b > this.e[role]!) this.e[role] = b;
  }
  done(): IntervalList[] {
    return this.lists.map((l, r) => {
      if (this.e[r]! > this.s[r]!) l.push(this.s[r]!, this.e[r]!);
      return Float64Array.from(l);
    });
  }
}

function deviceTime(deviceId: number, gpu: number, spanNs: Ns, [compute, comm, copy]: IntervalList[]): RankDeviceTime {
  const computeNs = lengthOf(compute!);
  const communicationNs = lengthOf(comm!);
  const hiddenNs = intersectionLength(comm!, compute!);
  const computeOrComm = lengthOf(unionOfLists([compute!, comm!]));
  const busy = lengthOf(unionOfLists([compute!, comm!, copy!]));
  return {
    deviceId,
    gpu,
    spanNs,
    computeNs,
    communicationNs,
    hiddenNs,
    exposedNs: communicationNs - hiddenNs,
    copyNs: busy - computeOrComm,
    idleNs: spanNs - busy,
    overlap: communicationNs > 0 ? hiddenNs / communicationNs : null,
  };
}

/**
 * Communication in a trace: every process's time breakdown on each GPU it
 * used, over `span` (the scope's GPU span: Context.gpuSpan), NCCL kernels
 * by collective, peer copies.
 */
export function communicationOf(trace: Trace, inputs: CommunicationInputs, span: { start: Ns; end: Ns }): Communication {
  const { ops } = trace;
  const labels = commKernelLabels(trace);
  const roles = opRoles(trace, inputs.peerCopyIds, labels);
  const spanNs = Math.max(0, span.end - span.start);

  // One pass: busy unions per (process, device) and role; kernel times by name; peer copies.
  const unions = new Map<number, Map<number, RoleUnions>>();
  const byName = new Map<number, { count: number; totalNs: number }>();
  const peerCopies = { count: 0, bytes: 0, totalNs: 0 };
  let lastPid = NaN;
  let lastDevice = NaN;
  let current: RoleUnions | undefined;
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
      if (!current) perDevice.set(device, (current = new RoleUnions()));
      lastPid = pid;
      lastDevice = device;
    }
    const role = roles[i]!;
    current.add(role, a, b);
    if (role !== OpRole.Communication) continue;
    if (ops.kind[i] === OpKind.Kernel) {
      const id = ops.detail[i]!;
      const k = byName.get(id);
      if (k) {
        k.count++;
        k.totalNs += b - a;
      } else byName.set(id, { count: 1, totalNs: b - a });
    } else {
      peerCopies.count++;
      peerCopies.bytes += ops.bytes[i]!;
      peerCopies.totalNs += b - a;
    }
  }

  const gpu = gpuOrdinals(trace.devices);
  const ranks: RankTime[] = [...unions].map(([pid, perDevice]) => {
    const devices = [...perDevice]
      .map(([deviceId, u]) => deviceTime(deviceId, gpu(deviceId), spanNs, u.done()))
      .sort((x, y) => x.gpu - y.gpu || x.deviceId - y.deviceId);
    const sum = (k: 'spanNs' | 'computeNs' | 'communicationNs' | 'hiddenNs' | 'exposedNs' | 'copyNs' | 'idleNs') => devices.reduce((t, d) => t + d[k], 0);
    const communicationNs = sum('communicationNs');
    const hiddenNs = sum('hiddenNs');
    const facts = inputs.processes.get(pid);
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

  const kernels: CommKernelTime[] = [...byName]
    .map(([id, k]) => ({
      name: trace.strings.get(id) ?? `<string ${id}>`,
      demangledName: trace.demangled.get(id) ?? null,
      ...labels.get(id)!,
      count: k.count,
      totalNs: k.totalNs,
    }))
    .sort((x, y) => y.totalNs - x.totalNs || (x.name < y.name ? -1 : 1));
  const collectives = new Map<Collective, { count: number; totalNs: number }>();
  for (const k of kernels) {
    const c = collectives.get(k.collective) ?? { count: 0, totalNs: 0 };
    c.count += k.count;
    c.totalNs += k.totalNs;
    collectives.set(k.collective, c);
  }
  return {
    present: kernels.length > 0 || peerCopies.count > 0,
    ranks,
    collectives: [...collectives].map(([collective, c]) => ({ collective, ...c })).sort((x, y) => y.totalNs - x.totalNs),
    peerCopies,
    kernels,
  };
}
