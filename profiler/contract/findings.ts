// What the diagnosis says about a recording: findings, each with the time
// it cost, the events that prove it, and a concrete fix. The JSON shape is
// documented in docs/FORMATS.md ("Findings"); the app highlights the
// evidence by these ids.
import type { Ns } from './time.ts';

export type Severity = 'info' | 'warning' | 'error';

export const SEVERITY_RANK: Record<Severity, number> = { info: 0, warning: 1, error: 2 };

export type FindingKind =
  | 'legacy-default-stream'
  | 'pageable-async-copy'
  /** Small copies back to pageable host memory (`.item()`, `.cpu()`), each waiting for all the work queued before it. */
  | 'blocking-readback'
  | 'sync-copy'
  | 'sync-memset'
  | 'host-blocking-call'
  | 'single-stream'
  | 'copy-engine-queue'
  | 'device-full'
  | 'launch-bound'
  | 'gpu-idle-gap'
  | 'low-utilization'
  | 'event-ordering'
  /** An NCCL collective ran while no computation ran beside it, where computation before it could have (issue 13). */
  | 'serialized-collective'
  /** One rank reaches the collectives last and the other ranks wait for it inside them (issue 13). */
  | 'straggler-rank';

/** Rows of the recording that prove a finding (ids in their tables). */
export interface Evidence {
  kernels: number[];
  memcpys: number[];
  memsets: number[];
  apiCalls: number[];
  syncs: number[];
  /** The time range worth looking at. */
  window: { start: Ns; end: Ns };
}

/**
 * The fixes the what-if replay can apply (analysis/replay/whatif.ts), one id each.
 * A finding names the one that removes its cause (Finding.fixId), and the
 * diagnosis estimates that fix for it: by id, never by the finding's text.
 */
export const FIX_IDS = [
  /** Pageable async copies made from pinned memory. */
  'pin-pageable',
  /** Small reads of values back to the host issued without waiting (no .item() per step), read once after the loop. */
  'defer-readback',
  /** Work on the legacy default stream moved to its chunk's stream. */
  'move-default-stream',
  /** Synchronize calls between launches no longer wait. */
  'remove-host-blocking',
  /** Device allocations between launches moved before the loop. */
  'hoist-alloc',
  /** Pinned host allocations between launches moved before the loop. */
  'hoist-pinned-alloc',
  /** Host registrations between launches done once, before the loop. */
  'hoist-register',
  /** Each collective issued as soon as its share of the computation before it is done, on a side stream (DDP's buckets). */
  'overlap-collectives',
  /** Each run of short kernel launches captured once in a CUDA graph and replayed with one launch. */
  'cuda-graph',
  /** Work a process put on one stream dealt by chunk over several streams. */
  'split-streams',
] as const;
export type FixId = (typeof FIX_IDS)[number];

export interface WhatIf {
  /** What the replay changed, as people read it (the fix Finding.fixId names). */
  fix: string;
  /** GPU span as recorded and as predicted with the fix (ns). */
  measuredNs: Ns;
  predictedNs: Ns;
  savedNs: Ns;
  /**
   * How many findings name this fix, where more than one (a job's ranks, a
   * process's threads): the estimate is of the fix applied to all of them,
   * and each of them carries it whole.
   */
  findings?: number;
}

export interface Finding {
  kind: FindingKind;
  severity: Severity;
  /** One line: what happened. */
  title: string;
  /** Why it serialized (or why it is a limit, or intended), in a few sentences. */
  explanation: string;
  /** What to change. Empty for limits and intended behaviour. */
  fix: string;
  /**
   * Time it cost: GPU time lost or work delayed (ns); 0 for intended
   * behaviour. Where the what-if estimates the finding's fix, that
   * estimate's saving: every finding naming the fix gets the whole of it.
   */
  costNs: Ns;
  /**
   * The rule's own measure of the cost (what the title says), kept where
   * the what-if's saving replaced it in costNs: findings sharing one fix
   * share its saving in proportion to it (compare/findings.ts, the diff's
   * rows). A range part's finding keeps the range's.
   */
  ruleCostNs?: Ns;
  deviceId: number | null;
  pid: number | null;
  evidence: Evidence;
  /**
   * The family of CUDA calls the finding is about (call-families.ts), for
   * findings about calls (host-blocking-call): what the fix and the what-if
   * are chosen by, whatever the title says.
   */
  callFamily?: CallFamily;
  /**
   * The fix that removes this cause, where the what-if replay can apply
   * one: the diagnosis estimates it and puts the estimate in whatIf.
   */
  fixId?: FixId;
  /** The what-if replay's estimate of fixId, where it applies to this recording. */
  whatIf?: WhatIf;
  /**
   * Why there is no estimate of fixId for this recording (the replay could
   * not model the fix here: no pinned bandwidth known, nothing the fix
   * would move): said instead of a saving of 0.
   */
  whatIfUnavailable?: string;
  /** The Nsight Systems expert-system rule this corresponds to, if any. */
  nsightRule?: string;
}

export function emptyEvidence(start: Ns = 0, end: Ns = 0): Evidence {
  return { kernels: [], memcpys: [], memsets: [], apiCalls: [], syncs: [], window: { start, end } };
}

/** The families of CUDA calls (analysis/call-families.ts sorts each call into one). */
export type CallFamily =
  /** Waits for GPU work: device, stream, event or context synchronize. */
  | 'sync'
  /** Device memory allocate/free (cudaMalloc, cudaFree): synchronizes the device implicitly. */
  | 'alloc'
  /** Page-locked host allocate/free (cudaMallocHost, cudaHostAlloc, cudaFreeHost): synchronizes implicitly. */
  | 'pinned-alloc'
  /** Pinning existing host memory (cudaHostRegister / cudaHostUnregister): synchronizes implicitly. */
  | 'register'
  /** Loading or linking GPU code: modules, libraries, JIT linking. */
  | 'module-load'
  /** Looking up a kernel or its attributes; the first lookup of a lazily loaded module loads it. */
  | 'function-lookup'
  /** Driver initialisation and context creation or teardown. */
  | 'context'
  | 'other';
