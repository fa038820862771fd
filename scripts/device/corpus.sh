#!/usr/bin/env bash
# Runs on the GPU machine, in the repository root, with .carry/ packed by
# scripts/device/pack.sh: records every pair of the bug/fix corpus
# (test/fixtures/corpus/<pair>/, program.py or program.sh, the mistake and
# with --fix its fix) with `streamscope record`, plus the issue-25 training
# loop (test/gpu/scripts/torch_train_loop.py) and a target that runs
# torch.profiler inside. Recordings, logs and versions go to $OUT as one
# archive; a short table is printed last.
#   usage: bash scripts/device/corpus.sh [ROUND]   (ROUND: a suffix for a repeat, e.g. 2)
#   CORPUS_PAIRS="a b": only those pairs; CORPUS_EXTRAS=all|train|none: which extras
set -uo pipefail
round=${1:-}
. scripts/device/unpack.sh
export PYTHONUNBUFFERED=1 STREAMSCOPE_RUNNER=$PWD/native/build/workloads/streamscope-runner
OUT=${OUT:-/tmp/out}
work=/tmp/corpus${round:+-$round}
rm -rf "$work" && mkdir -p "$work" "$OUT"
ss() { node profiler/cli/streamscope.ts "$@"; }
{
  date -u +%FT%TZ
  nvidia-smi --query-gpu=name,driver_version,pci.bus_id --format=csv,noheader
  nvcc --version | tail -1
  python3 -c 'import sys, numpy, torch, cupy; print("python", sys.version.split()[0]); print("numpy", numpy.__version__); print("torch", torch.__version__, "cuda", torch.version.cuda); print("cupy", cupy.__version__)'
  python3 -c 'import numpy as np; np.row_stack = getattr(np, "row_stack", np.vstack); import numba, numba.cuda; print("numba", numba.__version__)' 2>&1 | tail -1
} > "$work/versions.txt" 2>&1

summary=$work/summary.tsv
printf 'pair\tvariant\trc\twall_s\tbytes\ttop\twhatif_ms\n' > "$summary"
# The top finding and its what-if, from the report (for the table only; the
# corpus test computes the real figures from the recordings).
top() {
  node -e 'const r=JSON.parse(require("fs").readFileSync(0,"utf8")); const f=r.findings[0]; const w=f?.whatIf;
    const ms=(ns)=>(ns/1e6).toFixed(1); process.stdout.write(f?`${f.kind}/${f.fixId??"-"}\t${w?ms(w.measuredNs)+"->"+ms(w.predictedNs):"-"}`:"none\t-")' 2>/dev/null || printf '?\t?'
}
one() {  # dir name variant command...
  local dir=$1 name=$2 variant=$3; shift 3
  mkdir -p "$work/$dir"
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout 180 node profiler/cli/streamscope.ts record -f -o "$work/$dir/$variant.sqlite" -- "$@" > "$work/$dir/$variant.log" 2>&1
  rc=$?
  t1=$(date +%s.%N)
  local t
  t=$(ss report --json "$work/$dir/$variant.sqlite" 2>>"$work/$dir/$variant.log" | top)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$variant" "$rc" "$(awk "BEGIN{printf \"%.1f\", $t1 - $t0}")" "$(stat -c %s "$work/$dir/$variant.sqlite" 2>/dev/null || echo 0)" "$t" >> "$summary"
}
for pair in ${CORPUS_PAIRS:-$(ls test/fixtures/corpus)}; do
  dir=test/fixtures/corpus/$pair
  [ -d "$dir" ] || continue
  if [ -f "$dir/program.py" ]; then cmd=(python3 "$dir/program.py"); else cmd=(bash "$dir/program.sh"); fi
  one "$pair" "$pair" bug "${cmd[@]}"
  one "$pair" "$pair" fix "${cmd[@]}" --fix
done
extras=${CORPUS_EXTRAS:-all}
if [ "$extras" = all ] || [ "$extras" = train ]; then
  one extras torch_train_loop bug python3 test/gpu/scripts/torch_train_loop.py
  one extras torch_train_loop fixed python3 test/gpu/scripts/torch_train_loop.py --fixed
fi
if [ "$extras" = all ]; then
  # torch.profiler inside the target: record must say its profiler got nothing.
  one extras torch_profiler_inside inside python3 test/gpu/scripts/torch_streams.py --torch-profiler /tmp/inside.json
  # Kineto's own traces (no StreamScope) of the same programs, CUDA sync events on: for the importer.
  for v in "" --fixed; do
    python3 test/gpu/scripts/kineto_trace.py "$work/extras/kineto_train_loop${v:+-fixed}.json" test/gpu/scripts/torch_train_loop.py --steps 6 $v \
      > "$work/extras/kineto_train_loop${v:+-fixed}.log" 2>&1
  done
  python3 test/gpu/scripts/kineto_trace.py "$work/extras/kineto_streams.json" test/gpu/scripts/torch_streams.py > "$work/extras/kineto_streams.log" 2>&1
  ls -la "$work"/extras/*.json
fi
tar -C "$work" -cJf "$OUT/corpus${round:+-$round}.tar.xz" .
cat "$work/versions.txt"
grep -h "CUPTI client" "$work"/extras/*.log 2>/dev/null | head -3
cat "$summary"
