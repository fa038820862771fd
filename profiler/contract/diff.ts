// The answer of `streamscope diff --json` and of the compare view: two
// recordings of one program side by side. Types only (plus the version):
// compare/diff.ts computes it; the renderer draws it.
import type { FindingKind } from './findings.ts';

// 2: scopeA/scopeB (what each side's analysis covered); gpu (CUDA ordinal) per device.
export const DIFF_VERSION = 2;

export interface Delta {
  a: number | null;
  b: number | null;
  /** b − a (null when either is missing). */
  delta: number | null;
  /** (b − a) / a (null when a is 0 or missing). */
  relative: number | null;
}

export interface DeviceDiff {
  /** Devices are matched by position (first device of A with first of B, ...): ids differ between files. */
  index: number;
  /** The CUDA ordinal (A's, else B's), as nvidia-smi names the GPU. */
  gpu: number;
  name: string | null;
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

export interface FindingDiff {
  kind: FindingKind;
  status: 'fixed' | 'new' | 'unchanged';
  costNs: Delta;
  titleA: string | null;
  titleB: string | null;
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
  findings: FindingDiff[];
}
