// Communication between GPUs: which operations are NCCL collectives or peer
// copies, and per rank (process) how its GPU time splits into computation,
// communication, other copies and idle, with how much of the communication
// ran hidden behind computation. analysis/communication.ts computes it; the
// report (`report`, `report --json`: docs/FORMATS.md) and the API's
// stats() carry it.
import type { Ns } from './time.ts';

/**
 * The collectives a communication kernel can be labelled with. A kernel's
 * name gives all but all-to-all, gather and scatter, which NCCL runs in its
 * SendRecv kernel: those come from NCCL's NVTX range of the call that
 * launched it. Appended to, never reordered: the position is a collective's
 * code (analysis/collective-order.ts).
 */
export const COLLECTIVES = [
  'all-reduce',
  'all-gather',
  'reduce-scatter',
  'broadcast',
  'reduce',
  'send-recv',
  'all-to-all',
  'other',
  'gather',
  'scatter',
] as const;
export type Collective = (typeof COLLECTIVES)[number];

/**
 * What a communication kernel's name says (analysis/communication.ts reads
 * every form NCCL has used since 2.3). `algorithm`, `protocol`, `dtype` and
 * `op` are the variant the kernel was compiled for, as its name gives it:
 * since NCCL 2.4 one kernel per collective and data type is specialised
 * (for the LL protocol, and since 2.19 for Sum and the RING or TREE
 * algorithm) and runs the collective's other variants too, so they say
 * what the kernel is, not necessarily what ran; the collective and the
 * data type are what ran. Left out where the name holds a placeholder
 * (AllGather's `Sum_int8_t`) or nothing.
 */
export interface CommKernel {
  collective: Collective;
  /** NCCL's names: RING, TREE, COLLNET_DIRECT, NVLS, PAT, …; symmetric-memory kernels: AGxLL_R, RSxLD_AGxST, … */
  algorithm?: string;
  /** LL, LL128 or SIMPLE. */
  protocol?: string;
  /** NCCL's short names: i8, u8, i32, u32, i64, u64, f16, bf16, f32, f64, f8e4m3, f8e5m2. */
  dtype?: string;
  /** The reduction, lower case: sum, prod, min, max, minmax, premulsum, sumpostdiv, avg. */
  op?: string;
}

/**
 * One rank's time on one GPU, over the analysis scope's GPU span (first
 * operation start to last operation end of the whole recording in the
 * scope, the same for every rank). Each part counts the process's own
 * operations on the device only, as busy time (the union of their
 * intervals):
 *
 *   computeNs + exposedNs + copyNs + idleNs = spanNs
 *
 * computeNs: kernels that are not communication; communicationNs: NCCL
 * kernels and peer copies, of which hiddenNs ran while compute ran too and
 * exposedNs (= communicationNs − hiddenNs) did not; copyNs: other copies
 * and memsets while neither compute nor communication ran; idleNs: none of
 * the process's operations ran on the device.
 */
export interface RankDeviceTime {
  deviceId: number;
  /** The CUDA ordinal, as every output names a GPU. */
  gpu: number;
  spanNs: Ns;
  computeNs: Ns;
  communicationNs: Ns;
  hiddenNs: Ns;
  exposedNs: Ns;
  copyNs: Ns;
  idleNs: Ns;
  /** hiddenNs / communicationNs: the share of communication hidden behind computation; null without communication. */
  overlap: number | null;
}

export interface RankTime {
  pid: number;
  /** From the recording's processes table (RANK, LOCAL_RANK, WORLD_SIZE of the process); null where not recorded. */
  rank: number | null;
  localRank: number | null;
  worldSize: number | null;
  host: string | null;
  /** The GPUs the process ran operations on in the scope, by ordinal. */
  devices: RankDeviceTime[];
  /** The devices' times added up (GPU time: two GPUs for a second are 2 s), overlap from the sums. */
  total: Omit<RankDeviceTime, 'deviceId' | 'gpu'>;
}

export interface CollectiveTime {
  collective: Collective;
  /** Kernel executions. */
  count: number;
  /** Sum of their durations (every rank and device). */
  totalNs: Ns;
  /**
   * Bytes of the NCCL calls that launched them (every rank), each call once:
   * the message size NCCL's NVTX range carried in its payload (NCCL ≥ 2.19,
   * recorded since schema 10): the call's count × its type's size, so for
   * all-gather each rank's contribution and for reduce-scatter each rank's
   * result, as nccl-tests' "size". null when no kernel's call had one.
   */
  bytes: number | null;
  /**
   * bytes / the duration of the kernels those calls launched, in bytes per
   * second: NCCL's algorithm bandwidth (nccl-tests' algbw), over the kernels
   * whose call had a size; null without.
   */
  algorithmBandwidth: number | null;
}

export interface CommKernelTime extends CommKernel {
  /** As stored (mangled for C++ kernels, as CUPTI names them). */
  name: string;
  demangledName: string | null;
  count: number;
  totalNs: Ns;
  /** Bytes of the calls that launched it (CollectiveTime.bytes); null when none had a size. */
  bytes: number | null;
}

export interface Communication {
  /** Whether the scope holds any communication (an NCCL kernel or a peer copy). */
  present: boolean;
  /** Every process with GPU operations in the scope, by rank (then pid). */
  ranks: RankTime[];
  /** NCCL kernels by collective, most time first. */
  collectives: CollectiveTime[];
  /** Copies between GPUs: CUPTI's peer-to-peer copies, and device-to-device copies whose source and destination are different GPUs. */
  peerCopies: { count: number; bytes: number; totalNs: Ns };
  /**
   * Each distinct NCCL kernel with its label, most time first: one row per
   * name and collective, the collective from the NCCL call that launched
   * it where NCCL's NVTX ranges say (a SendRecv kernel of ncclAlltoAll is
   * all-to-all), else from the name.
   */
  kernels: CommKernelTime[];
  /**
   * How many NCCL kernels were launched inside one of NCCL's NVTX ranges
   * (domain NCCL, a collective call or a group's end, on the launching
   * thread): their collective came from the call; and how many of those
   * calls carried their message size (bytes and bandwidth count those).
   */
  ncclRanges: { kernels: number; fromRanges: number; withBytes: number };
}
