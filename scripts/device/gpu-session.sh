#!/usr/bin/env bash
# Runs on the lent GPU machine, in the repository root, with .carry/ packed
# by scripts/device/pack.sh: the GPU tests (which also leave the fixture
# recordings), the Python scripts, the overhead benchmark. Everything worth
# keeping goes to $OUT; a short table is printed last.
#   usage: bash scripts/device/gpu-session.sh [tests|bench|all]
set -uo pipefail
what=${1:-all}
. scripts/device/unpack.sh
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT" /tmp/fixtures
nvidia-smi --query-gpu=name,driver_version,uuid,pci.bus_id --format=csv,noheader > "$OUT/nvidia-smi.txt" 2>&1
nvcc --version | tail -1 >> "$OUT/nvidia-smi.txt"
node profiler/cli/streamscope.ts devices --json > "$OUT/devices.json" 2>&1

# Smoke: one recording with the collector's diagnostics, reported.
if [ "$what" != bench ]; then
  STREAMSCOPE_LOG=1 timeout 60 node profiler/cli/streamscope.ts record -f -o /tmp/smoke.sqlite \
    --workload normalise --scenario concurrent --size 20000 > "$OUT/smoke.log" 2>&1
  echo "record exit $?" >> "$OUT/smoke.log"
  timeout 30 node profiler/cli/streamscope.ts report /tmp/smoke.sqlite >> "$OUT/smoke.log" 2>&1
  # The raw stream of the same run, collector alone (no recorder), for reading.
  mkdir -p /tmp/raw && rm -f /tmp/raw/*.ssr
  CUDA_INJECTION64_PATH=$PWD/native/build/collector/libstreamscope_collector.so STREAMSCOPE_OUTPUT_DIR=/tmp/raw \
    native/build/workloads/streamscope-runner --workload normalise --scenario concurrent --size 20000 > /dev/null 2>&1
  node profiler/cli/streamscope.ts dump-stream /tmp/raw/*.ssr > "$OUT/raw-stream.txt" 2>&1
  grep -E " (Stream|Context|Device|Process) " "$OUT/raw-stream.txt" | head -30 >> "$OUT/smoke.log"
fi

# A target that runs its own CUPTI client (torch.profiler) under StreamScope.
if [ "$what" = tests ] || [ "$what" = all ]; then
  STREAMSCOPE_LOG=1 timeout 120 node profiler/cli/streamscope.ts record -f -o /tmp/fixtures/torch_profiler_inside.sqlite \
    -- python3 test/gpu/scripts/torch_streams.py --torch-profiler /tmp/inside.json > "$OUT/inside.log" 2>&1
  echo "record exit $?" >> "$OUT/inside.log"
  timeout 30 node profiler/cli/streamscope.ts report /tmp/fixtures/torch_profiler_inside.sqlite 2>&1 | head -30 >> "$OUT/inside.log"
fi

# The `nvtx` Python package (what Numba users annotate with), built from its
# source (NVIDIA/NVTX, python/) when the machine lacks it and pack.sh was
# given NVTX_PYTHON_SRC: the NVTX GPU test of that library needs it.
if ! python3 -c 'import nvtx' 2>/dev/null && [ -d .carry/nvtx-python ]; then
  (cd .carry/nvtx-python && CFLAGS=-I/usr/local/cuda/include python3 -m pip install -q --no-build-isolation --no-deps --target /tmp/site . > "$OUT/nvtx-build.log" 2>&1)
  export PYTHONPATH=/tmp/site${PYTHONPATH:+:$PYTHONPATH}
fi

if [ "$what" = tests ] || [ "$what" = all ]; then
  STREAMSCOPE_FIXTURE_DIR=/tmp/fixtures STREAMSCOPE_GPU_RESULTS="$OUT/gpu-results.json" \
    timeout ${GPU_TEST_TIMEOUT:-480} node --test --test-concurrency=1 test/gpu/*.test.ts > "$OUT/test-gpu.log" 2>&1
  echo "test:gpu exit $?" >> "$OUT/test-gpu.log"
  tar -C /tmp/fixtures -cJf "$OUT/fixtures.tar.xz" .
fi
if [ "$what" = bench ] || [ "$what" = all ]; then
  timeout ${BENCH_TIMEOUT:-200} node bench/run-bench.ts --only overhead --json "$OUT/bench.json" > "$OUT/bench.log" 2>&1
  echo "bench exit $?" >> "$OUT/bench.log"
fi
echo "== devices"; cat "$OUT/nvidia-smi.txt"
[ -f "$OUT/smoke.log" ] && { echo "== smoke"; head -c 6000 "$OUT/smoke.log"; }
[ -f "$OUT/inside.log" ] && { echo "== torch.profiler inside"; grep -v "^\s*$" "$OUT/inside.log" | head -40; }
[ -f "$OUT/test-gpu.log" ] && { echo "== test:gpu"; grep -E "^# (tests|pass|fail|skipped)|^not ok|exit" "$OUT/test-gpu.log"; grep -E "^(workload|script|nvtx|program)=" "$OUT/test-gpu.log" | tail -50; }
[ -f "$OUT/bench.log" ] && { echo "== bench"; cat "$OUT/bench.log"; }
exit 0
