// `report --iterations` and the app's iterations row: the instances of a
// repeating NVTX range side by side. analysis/diagnosis/iterations.ts computes them.
import type { RankDeviceTime } from './communication.ts';
import type { Ns } from './time.ts';

/**
 * A step's communication breakdown on one device (communication.ts's, over
 * the step's own GPU span rather than the scope's): compute + exposed +
 * copies + idle = span; hidden + exposed = communication.
 */
export type StepTime = Omit<RankDeviceTime, 'deviceId' | 'gpu'>;

export interface IterationRow {
  /** 1 = the first instance: what `--range NAME#k` takes. */
  instance: number;
  /** 1 = its process's first instance: in a job, the rank's own step number (the ranks' instances interleave in `instance`). */
  step: number;
  pid: number;
  /** Its process's rank and host (null where not launched as a rank, or not recorded). */
  rank: number | null;
  host: string | null;
  tid: number;
  /** The range on the host. */
  startNs: Ns;
  endNs: Ns;
  /** The GPU work it launched: first start to last end (null when it launched none). */
  gpuStartNs: Ns | null;
  gpuEndNs: Ns | null;
  /** What the instance took: its GPU span, or its host duration when it launched no GPU work. */
  lengthNs: Ns;
  operations: number;
  /** Per device: its busy time and overlap factor (overlap.ts: summed / union), and its breakdown over the instance's GPU span. */
  devices: { deviceId: number; gpu: number; busyNs: Ns; overlap: number | null; time: StepTime }[];
  /** Its worst finding (its share of the range's: attribution.ts); null when it has none, or when not looked for (Iterations.findings). */
  topFinding: { kind: string; severity: string; title: string; costNs: Ns } | null;
  warmUp: boolean;
  outlier: boolean;
}

export interface Iterations {
  name: string;
  rows: IterationRow[];
  /** Median length of the instances that are not warm-up (each process's warm-up found among its own instances). */
  medianNs: Ns;
  /** How many processes (a job's ranks) have instances: more than one, and the rows are told apart by rank. */
  processes: number;
  /** How the range was chosen: named by the user, or picked as the repeating range covering most time. */
  chosen: 'named' | 'picked';
  /** Whether the rows' topFinding were looked for (asked with findings); false: every topFinding is null, unknown. */
  findings: boolean;
}

/**
 * A job's iterations from its ranks' summaries (`report A.sqlite B.sqlite …
 * --iterations`): the rows of every rank on the job's clock and ids, as the
 * merged recording's would be, and the ranks left out.
 */
export interface JobIterations extends Iterations {
  /** Recordings with no rows: their own repeating range is another (`picked`), or none repeats (null). */
  without: { file: string; ranks: number[]; picked: string | null }[];
}

/** NVTX range names with their closed instances and total time, most time first. */
export interface RangeName {
  name: string;
  instances: number;
  totalNs: Ns;
}
