// The environment variables the collector records for each process
// (ProcessEnv records, record_format.h): who launched the process, and as
// which rank of a distributed job. Header-only and CUDA-free, so the
// selftest and the synthetic stream tool use the same list and the same
// writer as the injection library.
//
// Only these variables are read (getenv at InitializeInjection, i.e. as they
// are when the process initialises CUDA: a Python program that sets
// os.environ before its first CUDA call is seen with its own values), and
// only those that are set are written. Nothing else of the environment is
// recorded. The TypeScript side reads the same names
// (profiler/contract/ranks.ts: which launcher's variables give the rank,
// local rank and world size, in which order); test/contract/shared-constants
// .test.ts holds the two lists together.
#pragma once

#include <cstddef>
#include <cstring>
#include <string_view>

#include "record_encoder.h"

namespace streamscope {

// clang-format off
inline constexpr const char* kProcessEnvNames[] = {
    // torchrun (torch.distributed.run, the torch elastic agent) sets these in
    // every worker it starts (torch/distributed/run.py, "Environment
    // Variables"); so do `python -m torch.distributed.launch --use-env`,
    // DeepSpeed's and Accelerate's launchers. GROUP_RANK is the node's rank,
    // MASTER_ADDR/MASTER_PORT the rendezvous of rank 0, TORCHELASTIC_RUN_ID
    // the job (--rdzv-id), the same on every node.
    "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK", "ROLE_RANK",
    "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID", "TORCHELASTIC_RESTART_COUNT",
    // Open MPI's mpirun/mpiexec, in every MPI process (docs.open-mpi.org,
    // "Environment variables set for MPI applications").
    "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_LOCAL_SIZE", "OMPI_COMM_WORLD_NODE_RANK",
    // MVAPICH2's mpirun_rsh / mpiexec.
    "MV2_COMM_WORLD_RANK", "MV2_COMM_WORLD_LOCAL_RANK", "MV2_COMM_WORLD_SIZE",
    // MPICH's and Intel MPI's mpiexec (the Hydra process manager): the PMI
    // rank and size, and the rank and count on the node.
    "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "MPI_LOCALNRANKS",
    // A PMIx server (Open MPI 5's prterun, srun --mpi=pmix): the rank in the
    // namespace (the job).
    "PMIX_RANK", "PMIX_NAMESPACE",
    // Slurm's srun, in each task of a job step (SLURM_PROCID: the task's
    // rank; SLURM_LOCALID: on its node; SLURM_NTASKS: tasks in the step).
    // An sbatch script itself runs as task 0 of the batch step.
    "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", "SLURM_NODEID", "SLURM_JOB_ID", "SLURM_STEP_ID",
    // The GPUs the process may use (launchers and job scripts set it per
    // rank): with LOCAL_RANK it says which GPU a rank ran on.
    "CUDA_VISIBLE_DEVICES",
};
// clang-format on

// A value longer than this is cut to it (the variables above hold numbers,
// host names and ids; this only bounds a pathological value).
inline constexpr size_t kProcessEnvValueBytes = 4096;

// Writes a ProcessEnv record for each variable of kProcessEnvNames that
// `get` (std::getenv in the collector; a table in the tests) finds.
template <class Getenv>
void writeProcessEnv(rs::RecordEncoder& enc, Getenv get) {
  for (const char* name : kProcessEnvNames) {
    const char* value = get(name);
    if (!value) continue;
    rs::ProcessEnvRecord r{};
    r.name_sid = enc.intern(std::string_view(name));
    r.value_sid = enc.intern(std::string_view(value, strnlen(value, kProcessEnvValueBytes)));
    enc.write(r);
  }
}

}  // namespace streamscope
