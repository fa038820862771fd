// Schema version 8: ranks (issue 13). Each process's rank in its
// distributed job, as its launcher told it through the environment
// (torchrun's RANK, Open MPI's OMPI_COMM_WORLD_RANK, Slurm's SLURM_PROCID,
// ...), and the variables themselves.
//
// The collector records a fixed list of variables per process
// (native/collector/process_env.h) into process_env; when the recording is
// finished, profiler/store/ranks.ts fills the processes columns from them
// with the launchers' rules of profiler/contract/ranks.ts. NULL: not
// launched as a rank, or recorded before version 8, or imported.
export const version = 8;

export const sql = /* sql */ `
ALTER TABLE processes ADD COLUMN rank INTEGER;          -- the process's rank in its job (0-based)
ALTER TABLE processes ADD COLUMN local_rank INTEGER;    -- its rank on its node
ALTER TABLE processes ADD COLUMN world_size INTEGER;    -- ranks in the job
ALTER TABLE processes ADD COLUMN rank_variable TEXT;    -- the variable the rank was read from: RANK, OMPI_COMM_WORLD_RANK, ...

CREATE TABLE process_env (
  pid   INTEGER NOT NULL,
  name  TEXT NOT NULL,   -- one of the variables the collector reads (native/collector/process_env.h)
  value TEXT NOT NULL,   -- as it was when the process initialised CUDA
  PRIMARY KEY (pid, name)
) WITHOUT ROWID;
`;
