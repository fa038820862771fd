// The answer of `streamscope diff --json` and of the compare view: two
// recordings of one program side by side. Types only (plus the version):
// compare/diff.ts computes it; the renderer draws it.
import type { Collective } from './communication.ts';
import type { CallFamily, FindingKind } from './findings.ts';

// 2: scopeA/scopeB (what each side's analysis covered); gpu (CUDA ordinal) per device.
// 3 (issue 13): ranks (per-rank rows of multi-rank recordings, paired by rank, each
// with its streams paired within it), collectives; a multi-rank diff pairs devices
// through their ranks (DeviceDiff.rank).
// 4: findings matched one by one by what each is about (kind, GPU, process, call
// family, the calls or copies it names), not summed per kind; status 'changed';
// gpu, rank, callFamily, about, subjectKind, subjectsA/subjectsB per row.
// 5: limit per finding row; a row's cost is its own finding's (a fix's what-if
// saving shared by several findings is split between them, not counted in each);
// kernels are named in subjects as the Kernels table names them (readableNames).
export const DIFF_VERSION = 5;

export interface Delta {
  a: number | null;
  b: number | null;
  /** b − a (null when either is missing). */
  delta: number | null;
  /** (b − a) / a (null when a is 0 or missing). */
  relative: number | null;
}

export interface DeviceDiff {
  /**
   * Ids differ between files, so devices are matched by position (first
   * device of A with first of B, ...); in a multi-rank diff (ranks not
   * null) through the ranks: the k-th GPU of a rank with the k-th GPU of
   * the rank it is paired with, then the devices left by position.
   */
  index: number;
  /** The CUDA ordinal (A's, else B's), as nvidia-smi names the GPU. */
  gpu: number;
  name: string | null;
  /** Multi-rank diff: the rank row (RankDiff.label) this device was paired through; null otherwise and for devices paired by position. */
  rank: string | null;
  busyNs: Delta;
  overlap: { compute: Delta; htod: Delta; dtoh: Delta; all: Delta };
}

export interface KernelDiff {
  /** As stored (mangled for C++ kernels): what the two runs are matched by. */
  name: string;
  /** The demangled declaration, null when the name is not a mangled C++ one. */
  demangledName: string | null;
  count: Delta;
  totalNs: Delta;
  meanNs: Delta;
}

export interface CopyDiff {
  direction: string;
  srcKind: string;
  dstKind: string;
  bytes: Delta;
  gbPerS: Delta;
}

/**
 * One thing a finding is about, named as its recording names it (ids
 * differ between recordings, names do not), and how many of the finding's
 * evidence rows name it.
 */
export interface FindingSubject {
  /**
   * calls: the call's name without its per-thread-stream suffix or driver
   * ABI version (cudaStreamSynchronize, cuMemHostRegister: _ptsz and _v2
   * forms are the same call); copies: direction and memory kinds
   * ("HtoD pageable→device"), memsets "memset device"; kernels (operations):
   * as the diff's Kernels table names them (readableNames over both
   * recordings' kernels: the function's own name where that is unambiguous).
   */
  name: string;
  count: number;
  /** The evidence list it was counted in held its limit (1000 ids per table): there were at least `count`. */
  atLeast: boolean;
}

/**
 * A finding of A against the finding of B that is about the same thing.
 * Findings are matched one by one (several findings of a kind are several
 * rows): same kind, GPU (the device rows' pairing) and process (the rank
 * rows' pairing, multi-rank diffs only), the same call family
 * (host-blocking-call), copy direction (copy-engine-queue) or stream
 * (legacy-default-stream, by CUPTI id); and where the subjects identify a
 * finding (calls of host-blocking-call, copies of the copy findings), at
 * least one subject in common: findings about different calls are
 * different findings, one fixed and one new.
 */
export interface FindingDiff {
  kind: FindingKind;
  /**
   * fixed: only in A; new: only in B; changed: in both, with other subjects
   * or other counts of them (the calls or copies it is about changed);
   * unchanged: in both, about the same subjects as many times (its cost may
   * still differ: costNs).
   */
  status: 'fixed' | 'new' | 'changed' | 'unchanged';
  /** The CUDA ordinal of its GPU's device row (A's, else B's); null for findings about no one GPU. */
  gpu: number | null;
  /** Multi-rank diffs: the rank row (RankDiff.label) of its process; null otherwise and for findings about no one process. */
  rank: string | null;
  /** host-blocking-call: the family of calls it is about (Finding.callFamily); null for other kinds. */
  callFamily: CallFamily | null;
  /** What identifies it beyond its kind, in words: "rank 1 · GPU 0 · sync calls", "GPU 0 · stream 7", "GPU 0 · HtoD copies". */
  about: string;
  /**
   * What its subjects are: calls (host-blocking-call, event-ordering),
   * copies (pageable-async-copy, sync-copy, sync-memset, copy-engine-queue),
   * operations (legacy-default-stream: the work on the stream;
   * serialized-collective: the collectives); null for kinds about a GPU or
   * process as a whole, whose evidence is a sample (then a match is
   * unchanged whatever its cost).
   */
  subjectKind: 'calls' | 'copies' | 'operations' | null;
  /** Its subjects in each recording, most often first; null: not in that recording; [] for kinds without subjects. */
  subjectsA: FindingSubject[] | null;
  subjectsB: FindingSubject[] | null;
  /**
   * A limit: on every side it is on, the finding names no fix (Finding.fix
   * empty): the copy engines or SMs were full, which says what bounded the
   * run, not what the program did wrong. A new one is no regression, a
   * fixed one no improvement of the program's own: outputs show them
   * apart, in no colour.
   */
  limit: boolean;
  /**
   * Its finding's own cost on each side (0 on a side it is not on). Where
   * findings of one recording name one fix, the diagnosis charges each of
   * them the whole of the fix's what-if saving; here each gets its share,
   * in proportion to its rule's own measure (Finding.ruleCostNs), so the
   * rows add up to the saving once.
   */
  costNs: Delta;
  titleA: string | null;
  titleB: string | null;
}

/** One side of a rank row: the process that is this rank in that recording. */
export interface RankSide {
  pid: number;
  host: string | null;
  worldSize: number | null;
  /** The CUDA ordinals of the GPUs it ran operations on in the scope. */
  gpus: number[];
}

/** One side of a stream row. */
export interface StreamSide {
  /** streams.id in that recording. */
  streamId: number;
  /** CUPTI's stream id (what the timeline's stream rows are named by). */
  cuptiStreamId: number;
  /** The CUDA ordinal of its GPU. */
  gpu: number;
}

/**
 * A stream of a rank against the stream of the paired rank it is matched
 * with, never a stream of another rank: first the same CUPTI stream id on
 * the rank's same GPU (its k-th by ordinal; a program run twice creates
 * its streams in the same order, so they get the same ids), then, among
 * the streams left on that GPU, in order of their first operation within
 * the same role.
 */
export interface StreamDiff {
  /** null: only on one side. */
  pairedBy: 'stream-id' | 'order' | null;
  /** communication: it ran NCCL kernels; compute: kernels only of other names; copy: copies and memsets only. */
  role: 'communication' | 'compute' | 'copy';
  a: StreamSide | null;
  b: StreamSide | null;
  /** Operations of every kind on it. */
  ops: Delta;
  /** The union of its operations' intervals. */
  busyNs: Delta;
}

/**
 * One rank of a multi-rank recording against the same rank of the other.
 * Times are the rank's over the scope (profiler/contract/communication.ts,
 * RankTime.total: summed over its GPUs), except gpuSpanNs, which is its own.
 */
export interface RankDiff {
  /**
   * rank: both processes recorded this rank (the k-th process of a rank
   * with the k-th, by pid, where one rank has several); pid-order: neither
   * has a rank, so processes without one are paired in pid order.
   */
  pairedBy: 'rank' | 'pid-order';
  rank: number | null;
  /** How outputs name the row: "rank 3", or "pid 4242 / 5151" for a pid-order pair ("pid 4242 / -" when only in A). */
  label: string;
  /** null: the rank is only in the other recording. */
  a: RankSide | null;
  b: RankSide | null;
  /** The rank's first operation start to its last operation end. */
  gpuSpanNs: Delta;
  /** Kernels that are not communication (busy time). */
  computeNs: Delta;
  /** NCCL kernels and peer copies (busy time). */
  communicationNs: Delta;
  /** Communication while no compute ran on its GPU. */
  exposedNs: Delta;
  /** Hidden / communication: the share of communication hidden behind compute, 0–1 (null without communication). */
  overlap: Delta;
  streams: StreamDiff[];
}

/** NCCL kernels of one collective, every rank. */
export interface CollectiveDiff {
  collective: Collective;
  count: Delta;
  totalNs: Delta;
}

export interface DiffSummary {
  diffVersion: number;
  a: string;
  b: string;
  /** What each side's analysis covered (both get the same kind of scope: steady state unless asked otherwise). */
  scopeA: string;
  scopeB: string;
  /** First GPU operation start to last GPU operation end. */
  gpuSpanNs: Delta;
  /** The recorded process's wall time (meta duration_ns). */
  durationNs: Delta;
  devices: DeviceDiff[];
  kernels: KernelDiff[];
  copies: CopyDiff[];
  /**
   * One row per finding, matched by what it is about (FindingDiff), most
   * cost first; findings that are intended behaviour (info, no cost) on
   * every side they are on are left out.
   */
  findings: FindingDiff[];
  /**
   * Per rank, when either recording is one of several processes' or ranks'
   * work (more than one process with GPU operations in the scope, a rank
   * recorded, or communication): ranked rows by rank, then the pid-order
   * rows. null for two single-process recordings without communication.
   */
  ranks: RankDiff[] | null;
  /** NCCL kernels by collective (empty when neither recording has any). */
  collectives: CollectiveDiff[];
}
