set -uo pipefail
. scripts/device/unpack.sh
export PYTHONUNBUFFERED=1
if ! python3 -c 'import nvtx' 2>/dev/null; then (cd .carry/nvtx-python && CFLAGS=-I/usr/local/cuda/include python3 -m pip install -q --no-build-isolation --no-deps --target /tmp/site . > /dev/null 2>&1); export PYTHONPATH=/tmp/site; fi
mkdir -p /tmp/fx
STREAMSCOPE_FIXTURE_DIR=/tmp/fx timeout 300 node --test --test-concurrency=1 test/gpu/python.test.ts > $OUT/python-tests.log 2>&1; echo "python tests exit $?" >> $OUT/python-tests.log
# NVTX before CUDA initialises (informational)
python3 - > /tmp/before.py <<'PY'
print("import nvtx\nwith nvtx.annotate('before_cuda'):\n    pass\nnvtx.push_range('spans_cuda_init')\nimport cupy as cp\nx = cp.arange(10) + 1\ncp.cuda.Device().synchronize()\nnvtx.pop_range()\nwith nvtx.annotate('after_cuda'):\n    y = x * 2\ncp.cuda.Device().synchronize()\n")
PY
node profiler/cli/streamscope.ts record -f -q -o /tmp/fx/nvtx_before_cuda.sqlite -- python3 /tmp/before.py > $OUT/before.log 2>&1
python3 -c "
import sqlite3; db=sqlite3.connect('/tmp/fx/nvtx_before_cuda.sqlite')
print('before-cuda ranges:', db.execute('select s.value, r.start_ns, r.end_ns from nvtx_ranges r join strings s on s.id=r.name_id').fetchall())" >> $OUT/before.log 2>&1
tar -C /tmp/fx -cJf $OUT/fx.tar.xz .
timeout 240 node bench/run-bench.ts --only analysis --json $OUT/bench-analysis.json > $OUT/bench.log 2>&1; echo "bench exit $?" >> $OUT/bench.log
grep -E "^# (tests|pass|fail)|^not ok|^nvtx=|^program=|exit" $OUT/python-tests.log; grep -B2 -A12 "^not ok" $OUT/python-tests.log | grep -E "error|expected|actual|message|got" | head -30
cat $OUT/before.log | tail -3; tail -6 $OUT/bench.log
