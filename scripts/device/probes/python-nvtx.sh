#!/usr/bin/env bash
# On the GPU machine, in the repository root, after scripts/device/pack.sh:
# records nvtx_ranges.py once per Python NVTX library two ways — the
# collector alone with NVTX_INJECTION64_PATH naming the toolkit's libcupti
# (what the recorder did before), and `streamscope record` (NVTX handed to
# the collector, which forwards it to the CUPTI it is bound to) — and the
# Python programs of test/gpu/scripts that the fixtures come from. Prints a
# table of NVTX rows per recording and the libcupti files each process had
# mapped. Everything goes to $OUT/python-nvtx.tar.xz.
set -uo pipefail
. scripts/device/unpack.sh
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
W=/tmp/pn && rm -rf $W && mkdir -p $W
lib=$PWD/native/build/collector/libstreamscope_collector.so
cupti=/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so.13
ss() { node profiler/cli/streamscope.ts "$@"; }

# The `nvtx` package, built from its source (NVIDIA/NVTX, python/) when the
# machine lacks it.
if ! python3 -c 'import nvtx' 2>/dev/null && [ -d .carry/nvtx-python ]; then
  (cd .carry/nvtx-python && CFLAGS=-I/usr/local/cuda/include python3 -m pip install -q --no-build-isolation --no-deps --target /tmp/site . > $W/nvtx-build.log 2>&1)
  export PYTHONPATH=/tmp/site
fi
python3 -c 'import nvtx; print("nvtx package", nvtx.__file__)' >> $W/nvtx-build.log 2>&1

for L in ${LIBS:-torch torch-emit cupy nvtx}; do
  mkdir -p $W/old-$L
  CUDA_INJECTION64_PATH=$lib NVTX_INJECTION64_PATH=$cupti STREAMSCOPE_OUTPUT_DIR=$W/old-$L \
    timeout 120 python3 test/gpu/scripts/nvtx_ranges.py $L > $W/old-$L.log 2>&1
  ss ingest -f -o $W/old-$L.sqlite $W/old-$L >> $W/old-$L.log 2>&1
  STREAMSCOPE_LOG=1 timeout 120 node profiler/cli/streamscope.ts record -f -o $W/new-$L.sqlite -- python3 test/gpu/scripts/nvtx_ranges.py $L > $W/new-$L.log 2>&1
done

if [ "${PROGRAMS:-1}" = 1 ]; then
  for r in 1 2; do
    for pin in inside once; do
      timeout 120 node profiler/cli/streamscope.ts record -f -o $W/numba_pinned_loop-$pin-$r.sqlite -- python3 test/gpu/scripts/numba_pinned_loop.py --pin $pin > $W/numba-$pin-$r.log 2>&1
    done
  done
  for k in default own; do
    timeout 120 node profiler/cli/streamscope.ts record -f -o $W/cupy_streams_events-$k.sqlite -- python3 test/gpu/scripts/cupy_streams_events.py --kernel-stream $k > $W/cupy-$k.log 2>&1
  done
  for b in pageable pinned; do
    timeout 120 node profiler/cli/streamscope.ts record -f -o $W/torch_prefetch-$b.sqlite -- python3 test/gpu/scripts/torch_prefetch.py --batches $b > $W/torch-$b.log 2>&1
  done
fi

python3 - "$W" <<'EOF' > $W/table.txt 2>&1
import glob, json, os, sqlite3, sys
w = sys.argv[1]
for f in sorted(glob.glob(f"{w}/*.sqlite")):
    db = sqlite3.connect(f)
    n = db.execute("select count(*) from nvtx_ranges").fetchone()[0]
    k = db.execute("select count(*) from kernels").fetchone()[0]
    names = db.execute("select s.value, count(*) from nvtx_ranges r left join strings s on s.id = r.name_id group by 1 order by 2 desc limit 6").fetchall()
    doms = db.execute("select s.value, count(*) from nvtx_ranges r left join strings s on s.id = r.domain_id group by 1").fetchall()
    meta = dict(db.execute("select key, value from meta"))
    print(f"{os.path.basename(f)}: nvtx={n} kernels={k} complete={meta.get('complete')} exit={meta.get('exit_code')} names={names} domains={doms}")
for f in sorted(glob.glob(f"{w}/*.log")):
    lines = open(f, errors="replace").read().strip().splitlines()
    last = lines[-1] if lines else ""
    cup = [l for l in lines if '"cupti"' in l]
    if cup:
        print(os.path.basename(f), "cupti:", json.loads(cup[-1])["cupti"])
    else:
        print(os.path.basename(f), "last:", last[:300])
EOF
tar -C $W -cJf $OUT/python-nvtx.tar.xz .
cat $W/nvtx-build.log | tail -3
cat $W/table.txt
