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
