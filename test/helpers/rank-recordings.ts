// Per-rank recordings CONSTRUCTED FOR THE ARITHMETIC of clock alignment,
// not recorded on GPUs: no multi-host NCCL recording exists yet (the GPU
// session will record real ones). Each rank of a data-parallel job is one
// recording, written through the importers' RecordingWriter: per step a
// few compute kernels on one stream, then an NCCL all-reduce on another
// that starts when the rank arrives and ends when the slowest rank's data
// is in, the same time on every rank give or take `jitterNs`. Each host's
// clock is off by its `clockOffsetNs`: that is the skew merge must find.
// One rank can be made late every step (`delay`): the straggler the
// straggler analysis must name.
import { RecordingWriter } from '../../profiler/import/recording-writer.ts';
import { openRecording } from '../../profiler/store/database.ts';
import { storeRanks } from '../../profiler/store/ranks.ts';

/** CUPTI's name for NCCL 2.19+'s float all-reduce kernel (mangled, as recorded). */
export const NCCL_ALL_REDUCE = '_Z39ncclDevKernel_AllReduce_Sum_f32_RING_LL24ncclDevKernelArgsStorageILm4096EE';
export const NCCL_ALL_GATHER = '_Z31ncclDevKernel_AllGather_RING_LL24ncclDevKernelArgsStorageILm4096EE';

export interface RankSpec {
  file: string;
  host: string;
  rank: number;
  /** The same pid on every rank, as in containers: merge must keep them apart. */
  pid?: number;
  /** Its host's clock minus true time. */
  clockOffsetNs: number;
  /** True time of the recording's origin (its collector's start), ns since the epoch. */
  originNs: bigint;
  steps: number;
  /** Each collective's end on this rank: the common end ± this (uniform). */
  jitterNs: number;
  /** Without collectives: only the compute kernels. */
  collectives?: boolean;
  /**
   * The process recorded as torchrun's rank `rank` of this many (RANK,
   * LOCAL_RANK and WORLD_SIZE, stored as the recorder stores them); without
   * it no rank is recorded.
   */
  worldSize?: number;
  /** Each all-reduce starts this much earlier than 2 µs after the rank's compute, partly hidden behind it (DDP's bucketing); default 0. */
  overlapNs?: number;
  /**
   * The job's straggler, the same on every rank's spec: rank `rank`'s
   * compute takes `ns` longer every step, so it reaches each all-reduce
   * that much later, every rank's all-reduce ends that much later (it
   * cannot end before the last rank arrives) and steps are that much
   * longer. Without it no rank is delayed: ranks arrive 300–500 µs into
   * their step, at random.
   */
  delay?: { rank: number; ns: number };
  seed?: number;
}

/** True time (ns after the job's start) at which step s starts on every rank; `delayNs`: RankSpec.delay's. */
export function stepStart(s: number, delayNs = 0): number {
  return 2_000_000 + s * (1_000_000 + delayNs);
}

/** True time (ns after the job's start) at which step s's all-reduce ends on every rank. */
export function stepEnd(s: number, delayNs = 0): number {
  return stepStart(s, delayNs) + 600_000 + delayNs;
}

export function writeRankRecording(spec: RankSpec, jobStartNs: bigint): void {
  const pid = spec.pid ?? 4242;
  let seed = (spec.seed ?? 1 + spec.rank) >>> 0;
  const rnd = () => (seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32;
  // Times in the recording: ns from its origin, by its host's clock; the origin as its host's clock read it.
  const offset = Number(jobStartNs - spec.originNs); // job start, in ns from this rank's origin (true time)
  const w = new RecordingWriter(spec.file, { overwrite: true, originNs: 0 });
  w.device(0, { name: 'constructed GPU', uuid: `GPU-constructed-${spec.host}-${spec.rank}`, smCount: 132, ccMajor: 9, ccMinor: 0 });
  let corr = 1;
  const launch = (start: number, end: number, stream: number, name: string) => {
    w.apiCall({ start: start - 8000, end: start - 3000, pid, tid: pid, name: 'cudaLaunchKernel', domain: 1, cbid: 211, correlation: corr, returnValue: 0 });
    w.kernel({ start, end, device: 0, context: 1, stream, pid, correlation: corr, name, grid: [132, 1, 1], block: [256, 1, 1] });
    corr++;
  };
  const delayNs = spec.delay?.ns ?? 0;
  for (let s = 0; s < spec.steps; s++) {
    const at = offset + stepStart(s, delayNs);
    // Compute: 3 kernels; this rank is done after 300–500 µs (so ranks arrive at different times), the straggler D later.
    const work = 300_000 + Math.floor(rnd() * 200_000) + (spec.delay?.rank === spec.rank ? delayNs : 0);
    for (let k = 0; k < 3; k++) launch(at + (k * work) / 3, at + ((k + 1) * work) / 3 - 1000, 7, `compute_kernel_${k}`);
    if (spec.collectives === false) continue;
    const end = offset + stepEnd(s, delayNs) + Math.round((rnd() * 2 - 1) * spec.jitterNs);
    launch(at + work + 2000 - (spec.overlapNs ?? 0), end, 13, s % 10 === 9 ? NCCL_ALL_GATHER : NCCL_ALL_REDUCE);
  }
  w.setCommand(pid, 'python train.py');
  w.finish({
    host: spec.host,
    command: 'torchrun --nnodes 2 train.py (constructed for the clock alignment tests)',
    // The origin as this host's clock read it: true origin + the host's offset.
    origin_ns: (spec.originNs + BigInt(spec.clockOffsetNs)).toString(),
    started_at: new Date(Number(spec.originNs / 1_000_000n)).toISOString(),
  });
  if (spec.worldSize !== undefined) {
    const db = openRecording(spec.file);
    try {
      const env = db.prepare('INSERT INTO process_env (pid, name, value) VALUES (?, ?, ?)');
      const vars = { RANK: spec.rank, LOCAL_RANK: spec.rank, WORLD_SIZE: spec.worldSize };
      for (const [name, value] of Object.entries(vars)) env.run(pid, name, String(value));
      storeRanks(db);
    } finally {
      db.close();
    }
  }
}
