#!/usr/bin/env bash
# Runs on a lent machine with several GPUs (nvidia-h200-x2 or larger), in
# the repository root, with .carry/ packed by scripts/device/pack.sh: a
# real data-parallel job (test/gpu/scripts/ddp_train.py under torchrun, one
# recorder per rank) in its three shapes, the added wall time of recording
# it, and the collector overhead and record-wall benchmarks, as far as the
# time budget allows (BUDGET seconds, default 520, checked between steps).
# SHAPES (default "ddp serial slow"; also fsdp, and serial-nosync and
# ddp-nosync: the host-blocking what-if's check) picks the job's shapes,
# SLOW_RANK the slow shape's slow rank (default the last), STEPS the
# recorded steps (default 10), OVERHEAD_RUNS the overhead invocations
# (default 3), and RECORD_WALL=0 / JOB=0 skip the record-wall benchmark / the
# job.
# Optionally first re-records corpus pairs on GPU 0 (CORPUS_PAIRS, through
# scripts/device/corpus.sh). Everything goes to $OUT; a table last.
#   usage: bash scripts/device/multi-gpu.sh
set -uo pipefail
t0=$SECONDS
budget=${BUDGET:-520}
left() { echo $((budget - (SECONDS - t0))); }
if [ -n "${CORPUS_PAIRS:-}" ]; then
  CUDA_VISIBLE_DEVICES=0 bash scripts/device/corpus.sh 4 > /tmp/corpus-4.log 2>&1
  tail -n 12 /tmp/corpus-4.log
fi
. scripts/device/unpack.sh
# NVLink multicast stays off (the machine's GPUs are shared with others).
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-/tmp/out}
work=/tmp/multigpu
rm -rf "$work" && mkdir -p "$work" "$OUT"
cli=$PWD/profiler/cli/streamscope.ts
if command -v torchrun >/dev/null; then torchrun=(torchrun); else torchrun=(python3 -m torch.distributed.run); fi
unset RANK LOCAL_RANK WORLD_SIZE OMPI_COMM_WORLD_RANK PMI_RANK SLURM_PROCID PMIX_RANK MV2_COMM_WORLD_RANK
gpus=$(nvidia-smi -L | wc -l)
nproc=$((gpus > 8 ? 8 : gpus))
{ nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader; nvidia-smi topo -m; python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())'; } > "$work/machine.txt" 2>&1
prog=test/gpu/scripts/ddp_train.py
summary=$work/summary.tsv
printf 'what\trc\twall_s\n' > "$summary"
timed() {  # name command...
  local name=$1; shift
  local a b rc
  a=$(date +%s.%N)
  timeout 150 "$@" > "$work/$name.log" 2>&1
  rc=$?
  b=$(date +%s.%N)
  printf '%s\t%s\t%s\n' "$name" "$rc" "$(awk "BEGIN{printf \"%.2f\", $b - $a}")" >> "$summary"
}
# The job's shapes, one recorder per rank (README: "Distributed jobs").
shapes=${SHAPES:-ddp serial slow}
slow=${SLOW_RANK:-$((nproc - 1))}
steps=${STEPS:-10}
declare -A shape=([ddp]="--mode ddp" [serial]="--mode serial" [slow]="--mode ddp --slow-rank $slow --slow-ms 25" [fsdp]="--mode fsdp" [serial-nosync]="--mode serial --no-sync" [ddp-nosync]="--mode ddp --no-sync")
if [ "${JOB:-1}" != 0 ]; then
  for v in $shapes; do
    # shellcheck disable=SC2086
    timed "record-$v" "${torchrun[@]}" --nproc-per-node "$nproc" --no-python node "$cli" record -f -q -o "$work/ddp-$v-rank%r.sqlite" -- python3 "$prog" ${shape[$v]} --steps "$steps"
  done
  # What recording adds to the job's wall time: plain and recorded, interleaved, three each.
  for i in 1 2 3; do
    timed "plain-$i" "${torchrun[@]}" --nproc-per-node "$nproc" "$prog" --mode ddp --steps 30
    timed "recorded-$i" "${torchrun[@]}" --nproc-per-node "$nproc" --no-python node "$cli" record -f -q -o "/tmp/wall-rank%r.sqlite" -- python3 "$prog" --mode ddp --steps 30
  done
  # Opened as the README says: merged into one job (clocks aligned by the collectives), then reported.
  for v in $shapes; do
    node "$cli" merge -f -o "$work/job-$v.sqlite" "$work"/ddp-$v-rank*.sqlite > "$work/report-$v.txt" 2>&1
    node "$cli" report "$work/job-$v.sqlite" >> "$work/report-$v.txt" 2>&1
    rm -f "$work/job-$v.sqlite"
  done
fi
tar -C "$work" -cJf "$OUT/multigpu.tar.xz" .
# The collector overhead (three invocations) and what record adds, while the budget lasts.
bench=/tmp/bench && mkdir -p "$bench"
kind=x$gpus
for i in $(seq 1 "${OVERHEAD_RUNS:-3}"); do
  [ "$(left)" -gt 110 ] || break
  timeout 150 node bench/run-bench.ts --only overhead --pairs 15 --json "$bench/overhead-$kind-$i.json" > "$bench/overhead-$kind-$i.log" 2>&1
done
if [ "${RECORD_WALL:-1}" != 0 ] && [ "$(left)" -gt 120 ]; then
  timeout $(($(left) - 20)) node bench/run-bench.ts --only record-wall --wall-rounds 6 --json "$bench/record-wall-$kind.json" > "$bench/record-wall-$kind.log" 2>&1
fi
tar -C "$bench" -cJf "$OUT/bench.tar.xz" .
cat "$work/machine.txt" | head -3
for v in $shapes; do [ -f "$work/report-$v.txt" ] || continue; echo "== $v"; grep -iE "straggler:|serialized|residual" "$work/report-$v.txt" | head -8; done
for f in "$bench"/overhead-"$kind"-*.log "$bench"/record-wall-"$kind".log; do [ -f "$f" ] && { echo "== $f"; grep -E "ratio|added|record-wall|target" "$f" | head -6; }; done
cat "$summary"
