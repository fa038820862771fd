// Ranks: which process of a distributed job a process was, as its launcher
// told it through the environment. One definition of the launchers'
// variables and of the order they are read in, for the recording (each
// process's rank, from the variables its collector recorded:
// profiler/store/ranks.ts) and for `record -o …%r…` (the recorder's own
// rank, from its environment: profiler/record/output-name.ts).
//
// The collector reads CAPTURED_ENV and nothing else of the environment
// (native/collector/process_env.h; test/contract/shared-constants.test.ts
// holds the two lists together).

/** A launcher's variables: the rank, and where it sets them the rank on the node and the ranks in the job. */
export interface RankLauncher {
  /** Who sets them, as a user would name it. */
  launcher: string;
  rank: string;
  localRank: string | null;
  worldSize: string | null;
}

/**
 * In the order they are read: the first launcher whose rank variable holds a
 * number gives the rank, and its own variables the local rank and world size.
 * The innermost launcher comes first, because launchers nest: srun starts
 * torchrun on each node (every worker inherits SLURM_PROCID, the node's task,
 * and gets RANK from torchrun), and an MPI launcher inside a Slurm allocation
 * starts its ranks through srun.
 */
export const RANK_LAUNCHERS: readonly RankLauncher[] = [
  // torchrun (torch.distributed.run), also torch.distributed.launch --use-env, DeepSpeed, Accelerate.
  { launcher: 'torchrun', rank: 'RANK', localRank: 'LOCAL_RANK', worldSize: 'WORLD_SIZE' },
  { launcher: 'Open MPI', rank: 'OMPI_COMM_WORLD_RANK', localRank: 'OMPI_COMM_WORLD_LOCAL_RANK', worldSize: 'OMPI_COMM_WORLD_SIZE' },
  { launcher: 'MVAPICH2', rank: 'MV2_COMM_WORLD_RANK', localRank: 'MV2_COMM_WORLD_LOCAL_RANK', worldSize: 'MV2_COMM_WORLD_SIZE' },
  { launcher: 'MPICH / Intel MPI', rank: 'PMI_RANK', localRank: 'MPI_LOCALRANKID', worldSize: 'PMI_SIZE' },
  { launcher: 'Slurm srun', rank: 'SLURM_PROCID', localRank: 'SLURM_LOCALID', worldSize: 'SLURM_NTASKS' },
  // A PMIx server alone (prterun without Open MPI's variables): the rank only.
  { launcher: 'PMIx', rank: 'PMIX_RANK', localRank: null, worldSize: null },
];

/** The variables the collector records per process (process_env table), in native/collector/process_env.h's order. */
export const CAPTURED_ENV: readonly string[] = [
  'RANK',
  'LOCAL_RANK',
  'WORLD_SIZE',
  'LOCAL_WORLD_SIZE',
  'GROUP_RANK',
  'ROLE_RANK',
  'MASTER_ADDR',
  'MASTER_PORT',
  'TORCHELASTIC_RUN_ID',
  'TORCHELASTIC_RESTART_COUNT',
  'OMPI_COMM_WORLD_RANK',
  'OMPI_COMM_WORLD_LOCAL_RANK',
  'OMPI_COMM_WORLD_SIZE',
  'OMPI_COMM_WORLD_LOCAL_SIZE',
  'OMPI_COMM_WORLD_NODE_RANK',
  'MV2_COMM_WORLD_RANK',
  'MV2_COMM_WORLD_LOCAL_RANK',
  'MV2_COMM_WORLD_SIZE',
  'PMI_RANK',
  'PMI_SIZE',
  'MPI_LOCALRANKID',
  'MPI_LOCALNRANKS',
  'PMIX_RANK',
  'PMIX_NAMESPACE',
  'SLURM_PROCID',
  'SLURM_LOCALID',
  'SLURM_NTASKS',
  'SLURM_NODEID',
  'SLURM_JOB_ID',
  'SLURM_STEP_ID',
  'CUDA_VISIBLE_DEVICES',
];

/** A process's place in its job; every field null when it was not launched as a rank. */
export interface RankInfo {
  rank: number | null;
  localRank: number | null;
  worldSize: number | null;
  /** The variable the rank was read from (RANK, OMPI_COMM_WORLD_RANK, …). */
  rankVariable: string | null;
}

export const NO_RANK: RankInfo = { rank: null, localRank: null, worldSize: null, rankVariable: null };

/** A variable's value as a rank or a count: decimal digits only, else null. */
function count(value: string | undefined): number | null {
  if (value === undefined || !/^\d{1,9}$/.test(value)) return null;
  return Number(value);
}

/** The launcher whose rank variable is set to a number, first in RANK_LAUNCHERS' order; null when none is. */
export function rankLauncherOf(env: Readonly<Record<string, string | undefined>>): RankLauncher | null {
  return RANK_LAUNCHERS.find((l) => count(env[l.rank]) !== null) ?? null;
}

/** The rank a launcher gave the process whose environment (or recorded variables) is `env`. */
export function rankFromEnv(env: Readonly<Record<string, string | undefined>>): RankInfo {
  const l = rankLauncherOf(env);
  if (!l) return NO_RANK;
  return {
    rank: count(env[l.rank]),
    localRank: l.localRank ? count(env[l.localRank]) : null,
    worldSize: l.worldSize ? count(env[l.worldSize]) : null,
    rankVariable: l.rank,
  };
}

/** The launcher that sets `variable` as its rank ('torchrun' for RANK), or the variable itself. */
/** processes.rank_variable of a process imported from a PyTorch profiler trace: its rank came from the trace's distributedInfo. */
export const DISTRIBUTED_INFO = 'distributedInfo';

export function launcherOfRankVariable(variable: string): string {
  if (variable === DISTRIBUTED_INFO) return 'PyTorch profiler trace';
  return RANK_LAUNCHERS.find((l) => l.rank === variable)?.launcher ?? variable;
}

/** "3 of 8 (local 1)", "3", or '-' when not a rank: how reports name a process's rank. */
export function formatRank(r: RankInfo): string {
  if (r.rank === null) return '-';
  return `${r.rank}${r.worldSize !== null ? ` of ${r.worldSize}` : ''}${r.localRank !== null ? ` (local ${r.localRank})` : ''}`;
}

/** A recorded process with its rank: what reports and the API's summary list. */
export interface RankedProcess extends RankInfo {
  pid: number;
  command: string | null;
  host: string | null;
  /** Its record stream ended with its End record. */
  complete: boolean;
}

// ---------------------------------------------------------------------------
// A GPU named with its rank
//
// In a job every rank's first GPU is "GPU 0" on its own host, so in a
// recording of several ranks or hosts the ordinal alone names several GPUs.
// Every view and report then names a GPU by who ran on it, one way
// (participantName of contract/stragglers.ts is the one-process case); a
// recording of one process reads "GPU 0" as it always has.

/** A process, as a GPU's name needs it. */
export interface GpuHolder {
  pid: number;
  rank: number | null;
  host: string | null;
}

/** Whether a recording's GPUs are named with their ranks: it holds more than one rank, or processes on more than one host. */
export function gpusNamedByRank(processes: readonly GpuHolder[]): boolean {
  return new Set(processes.map((p) => p.host)).size > 1 || processes.filter((p) => p.rank !== null).length > 1;
}

/** "rank 3", "ranks 0, 1": how a finding, a note or a table names the ranks of a recording (none: ''). */
export function ranksPhrase(ranks: readonly number[]): string {
  return ranks.length ? `rank${ranks.length > 1 ? 's' : ''} ${ranks.join(', ')}` : '';
}

/**
 * "rank 1 (node-b, GPU 0)"; "ranks 0, 1 (vm, GPU 0)" for a GPU two ranks
 * share; "pid 4242 (GPU 1)" for a process not launched as a rank; the host
 * where it was recorded. "GPU 0" when nobody is known to have run on it.
 */
export function rankedGpuName(holders: readonly GpuHolder[], gpu: number | string): string {
  if (holders.length === 0) return `GPU ${gpu}`;
  const sorted = [...holders].sort((a, b) => (a.rank ?? Infinity) - (b.rank ?? Infinity) || a.pid - b.pid);
  const ranks = sorted.filter((h) => h.rank !== null).map((h) => h.rank!);
  const pids = sorted.filter((h) => h.rank === null).map((h) => h.pid);
  const who = [...(ranks.length ? [ranksPhrase(ranks)] : []), ...(pids.length ? [`pid${pids.length > 1 ? 's' : ''} ${pids.join(', ')}`] : [])].join(', ');
  const hosts = [...new Set(sorted.map((h) => h.host).filter((h): h is string => Boolean(h)))];
  return `${who} (${[...hosts, `GPU ${gpu}`].join(', ')})`;
}

/** How a recording names its GPUs, by device id: built once from its processes and streams. */
export interface GpuNames {
  /** gpusNamedByRank of the recording: whether names carry ranks. */
  byRank: boolean;
  /** The GPU with every process that has a stream on it: "rank 1 (node-b, GPU 0)", or "GPU 0" where names carry no ranks. */
  device(deviceId: number): string;
  /** The GPU as one process used it: "rank 1 (node-b, GPU 0)", or "GPU 0". */
  ofProcess(deviceId: number, pid: number): string;
}

export function gpuNames(
  devices: readonly { id: number; ordinal: number | null }[],
  processes: readonly GpuHolder[],
  streams: readonly { pid: number; deviceId: number | null }[],
): GpuNames {
  const ordinal = new Map(devices.map((d) => [d.id, d.ordinal ?? d.id]));
  const gpu = (deviceId: number) => ordinal.get(deviceId) ?? deviceId;
  const byRank = gpusNamedByRank(processes);
  const byPid = new Map(processes.map((p) => [p.pid, p]));
  const holders = new Map<number, GpuHolder[]>();
  for (const s of streams) {
    const p = byPid.get(s.pid);
    if (s.deviceId === null || !p) continue;
    const list = holders.get(s.deviceId) ?? [];
    if (!list.includes(p)) list.push(p);
    holders.set(s.deviceId, list);
  }
  return {
    byRank,
    device: (id) => (byRank ? rankedGpuName(holders.get(id) ?? [], gpu(id)) : `GPU ${gpu(id)}`),
    ofProcess: (id, pid) => {
      const p = byPid.get(pid);
      return byRank && p ? rankedGpuName([p], gpu(id)) : `GPU ${gpu(id)}`;
    },
  };
}
