// Stragglers (issue 13): the same NCCL collective instance matched across
// ranks, how far apart the ranks arrived at it, who arrived last and how
// long the others sat in it waiting; the rank that holds the job back, when
// one does. analysis/diagnosis/stragglers.ts computes it (the matching rule, its
// limits and the thresholds are in its header); the report (`report`,
// `report --json`: docs/FORMATS.md), the API's stats() and the
// 'straggler-rank' finding carry it.
import type { Collective } from './communication.ts';
import { rankedGpuName } from './ranks.ts';
import type { Ns } from './time.ts';

/**
 * A rank as the analysis sees one: a process on a GPU (a process driving
 * several GPUs is one NCCL rank per GPU), named by the rank its launcher
 * gave the process where it was recorded.
 */
export interface StragglerParticipant {
  pid: number;
  /** processes.rank (RANK, OMPI_COMM_WORLD_RANK, …); null where not recorded. */
  rank: number | null;
  worldSize: number | null;
  host: string | null;
  deviceId: number;
  /** The CUDA ordinal, as every output names a GPU. */
  gpu: number;
}

/** One rank's arrivals over the analysed instances it took part in. */
export interface StragglerRank extends StragglerParticipant {
  /** Analysed instances it took part in. */
  instances: number;
  /** Instances it arrived at last (its kernel started last). */
  lastCount: number;
  /** Σ over those instances of the others' wait: the time the other ranks sat in the collective waiting for it. */
  causedWaitNs: Ns;
  /** Σ over every instance of (latest start − its start): the time it sat waiting for others. */
  waitedNs: Ns;
  /** Σ of its kernels' durations in the analysed instances (its waits included). */
  collectiveNs: Ns;
  /** Mean over its instances of (its start − the earliest start): how late it arrives, on average. */
  meanLateNs: Ns;
  /** Mean and largest arrival skew of the instances it was last at; null when it never was. */
  meanSkewWhenLastNs: Ns | null;
  maxSkewWhenLastNs: Ns | null;
}

/** One rank's kernel of a collective instance. */
export interface InstanceRank {
  pid: number;
  deviceId: number;
  /** kernels.id of its NCCL kernel. */
  kernelId: number;
  startNs: Ns;
  endNs: Ns;
}

/** One collective instance matched across ranks. */
export interface CollectiveInstance {
  collective: Collective;
  /** Its name on every rank (analysis/collective-order.ts): the n-th of its collective on each rank's s-th stream with collectives. */
  stream: number;
  n: number;
  /** Latest start − earliest start. */
  skewNs: Ns;
  /** Σ over the ranks of (latest start − its start): the time the ranks waited in it for the last. */
  waitNs: Ns;
  /** Index in `ranks` of the rank that started last. */
  last: number;
  /** Every rank's kernel of it, in the order of Stragglers.ranks. */
  ranks: InstanceRank[];
}

export interface CollectiveSkew {
  collective: Collective;
  /** Analysed instances. */
  instances: number;
  meanSkewNs: Ns;
  maxSkewNs: Ns;
  /** Σ of the instances' waits. */
  waitNs: Ns;
}

/** What could not be analysed, each counted, never guessed at. */
export interface StragglerGaps {
  /** Instances some ranks of their stream and collective did not run in the scope (a rank's recording ends early, the scope's end cuts them, dropped records). */
  partialInstances: number;
  /** The kernels of those instances. */
  partialKernels: number;
  /** Kernels before a rank's first instance that every rank ran: the scope's start cut the same instance off on other ranks. */
  leadingKernels: number;
  /**
   * Instances whose ranks' kernels did not end together (more than
   * max(50 µs, half the shortest of them) apart): not one collective —
   * several communicators matched by order — or clocks not aligned. Left
   * out of every number.
   */
  unsynchronizedInstances: number;
  /** NCCL send/receive kernels: point-to-point, between two ranks, not a collective of all; not analysed. */
  pointToPointKernels: number;
}

/** The straggler named, and by what. */
export interface Straggler extends StragglerParticipant {
  lastCount: number;
  /** The instances of the analysis. */
  instances: number;
  /** The other ranks' wait for it (its causedWaitNs): the finding's cost. */
  causedWaitNs: Ns;
  /** causedWaitNs over the other ranks' time in the analysed instances' kernels. */
  waitShare: number;
  /** The chance of arriving last this often or more if every rank were equally likely to (binomial, p = 1 / ranks). */
  chance: number;
}

export interface Stragglers {
  /** Whether at least one collective instance was matched across two ranks or more. */
  present: boolean;
  /** Ranks (a process on a GPU) that ran collectives in the scope, by rank, then pid and GPU. */
  ranks: StragglerRank[];
  /** Analysed instances: matched on every rank of their stream and collective, kernels ending together. */
  instances: number;
  /** Per collective, most wait first. */
  collectives: CollectiveSkew[];
  /** The instances the ranks waited longest in, worst first (at most 10; none where nobody waited). */
  worst: CollectiveInstance[];
  gaps: StragglerGaps;
  /** The rank last at most instances, when that is no chance and its cost is material; else null. */
  straggler: Straggler | null;
}

/** How outputs name a rank: "rank 3 (node-b, GPU 0)", or "pid 4242 (GPU 1)" where the process was not launched as a rank. */
export function participantName(p: StragglerParticipant): string {
  return rankedGpuName([p], p.gpu);
}
