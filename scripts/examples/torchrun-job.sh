#!/usr/bin/env bash
# A data-parallel job recorded and reported as the README's "Distributed
# jobs" says, run as it is written: torchrun starts one recorder per rank
# (`--no-python`: the recorder as it is), each writes its rank's recording
# and, when its rank ends, the rank's summary into it; then the job is
# reported from the summaries, without merging.
#
#   usage: bash scripts/examples/torchrun-job.sh OUTDIR [NPROC] [-- PROGRAM ARGS...]
#
# PROGRAM defaults to test/gpu/scripts/ddp_train.py --mode ddp --steps 6 (a
# small DDP training loop). STREAMSCOPE names the command (default
# `streamscope`; e.g. "node profiler/cli/streamscope.ts"). ONE_GPU=1 runs
# NPROC ranks on one GPU: each told by NCCL_HOSTID that it is on a host of
# its own, NCCL connects them over sockets instead of refusing two ranks on
# one GPU (for trying the recipe, not for timing: the GPU time-slices them).
set -euo pipefail
out=${1:?usage: torchrun-job.sh OUTDIR [NPROC] [-- PROGRAM ARGS...]}
shift
nproc=2
if [ $# -gt 0 ] && [ "$1" != -- ]; then nproc=$1; shift; fi
[ "${1:-}" = -- ] && shift
program=("$@")
[ ${#program[@]} -gt 0 ] || program=(python3 test/gpu/scripts/ddp_train.py --mode ddp --steps 6)
read -r -a streamscope <<< "${STREAMSCOPE:-streamscope}"
if command -v torchrun > /dev/null; then torchrun=(torchrun); else torchrun=(python3 -m torch.distributed.run); fi
wrap=()
if [ "${ONE_GPU:-0}" = 1 ]; then
  export NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1
  wrap=(bash -c 'NCCL_HOSTID=fakehost$LOCAL_RANK exec "$@"' one-gpu)
fi
mkdir -p "$out"
rm -f "$out"/run-*.sqlite
# One recorder per rank; each rank's summary written by its recorder when the rank ends.
"${torchrun[@]}" --nproc-per-node "$nproc" --no-python "${wrap[@]}" "${streamscope[@]}" record -q -o "$out/run-%h-%r.sqlite" -- "${program[@]}"
# The job, from the ranks' summaries.
"${streamscope[@]}" report "$out"/run-*.sqlite
