// What a record request may name, shared by the CLI's flags, the API's
// argument checks and the app's record dialog: the bundled runner's
// workloads and scenarios, and the --capture-range forms.
// record/workload.ts and record/capture-range.ts act on them.

export const WORKLOADS = ['normalise', 'matmul', 'transpose', 'launch-loop'] as const;
export const SCENARIOS = ['serial', 'default-stream', 'pageable', 'concurrent', 'events', 'priority', 'sync-each', 'multi-gpu'] as const;

export interface WorkloadSpec {
  workload: string;
  scenario: string;
  size?: string;
  iterations?: string;
  streams?: string;
  chunks?: string;
  variant?: string;
}

export type CaptureRange = { kind: 'nvtx'; name: string } | { kind: 'cuda-profiler-api' };

/** A --capture-range value that is not one of the accepted forms. */
export class CaptureRangeError extends Error {}

export const CAPTURE_RANGE_FORMS = 'nvtx:NAME (the instances of the NVTX range NAME) or cuda-profiler-api (from cudaProfilerStart to cudaProfilerStop)';

/** `nvtx:NAME` or `cuda-profiler-api`, as given to --capture-range. */
export function parseCaptureRange(text: string): CaptureRange {
  if (text === 'cuda-profiler-api') return { kind: 'cuda-profiler-api' };
  if (text.startsWith('nvtx:')) {
    const name = text.slice('nvtx:'.length);
    if (name.trim() === '') throw new CaptureRangeError(`--capture-range ${text}: give the NVTX range's name after 'nvtx:' (${CAPTURE_RANGE_FORMS})`);
    return { kind: 'nvtx', name };
  }
  throw new CaptureRangeError(`--capture-range '${text}': expected ${CAPTURE_RANGE_FORMS}`);
}

/** The spec as the user writes it (meta capture_range). */
export function captureRangeSpec(range: CaptureRange): string {
  return range.kind === 'nvtx' ? `nvtx:${range.name}` : 'cuda-profiler-api';
}
