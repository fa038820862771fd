#!/usr/bin/env bash
# Runs on the lent GPU machine, in the repository root, with .carry/ packed
# by scripts/device/pack.sh: the recordings of issue 13's GPU checks, made
# with test/gpu/scripts/nccl_overlap.py under torchrun, reported, and
# packed to $OUT/nccl.tar.xz with their logs; a table is printed last.
#
# Two GPUs (nvidia-h200-x2), the checks of record:
#   serial / overlap   one recorder over `torchrun --nproc-per-node 2`,
#                      all-reduces on the compute stream's critical path vs
#                      on a side stream as buckets are ready
#   straggler          serial, rank 1 sleeping DELAY_MS before each step
#   two nodes          two recorders, each over one node of a 2-node
#                      torchrun on this host (one GPU each), merged; beside
#                      `serial`, the same run recorded by one recorder
#   peer copies        cudaMemcpyPeer and a tensor's .to() between the GPUs
# One GPU (any kind): serial, overlap, straggler and two nodes (two recorders, merged) with both ranks on the one GPU,
# each told it is on a host of its own (NCCL_HOSTID), so that NCCL connects
# them over sockets instead of refusing the shared GPU. The GPU time-slices
# the two processes: the recordings are real in structure (PyTorch's
# streams, events and NCCL kernels), not in timing.
#   usage: bash scripts/device/nccl-check.sh [STEPS] [DELAY_MS]
set -uo pipefail
. scripts/device/unpack.sh
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
unset RANK LOCAL_RANK WORLD_SIZE OMPI_COMM_WORLD_RANK PMI_RANK SLURM_PROCID PMIX_RANK MV2_COMM_WORLD_RANK
OUT=${OUT:-/tmp/out}
steps=${1:-10}
delay=${2:-20}
dir=/tmp/nccl && rm -rf $dir && mkdir -p $dir
ss="node $PWD/profiler/cli/streamscope.ts"
prog=$PWD/test/gpu/scripts/nccl_overlap.py
if command -v torchrun >/dev/null; then torchrun=(torchrun); else torchrun=(python3 -m torch.distributed.run); fi
gpus=$(nvidia-smi -L | wc -l)
log=$dir/nccl-check.log
python3 -c 'import torch; print("torch", torch.__version__, "nccl", torch.cuda.nccl.version())' > $log 2>&1
nvidia-smi -L >> $log

rec() { # rec NAME TIMEOUT -- command…
  local name=$1 t=$2
  shift 3
  echo "== $name: $*" >> $log
  STREAMSCOPE_LOG=1 timeout "$t" $ss record -f -o "$dir/$name.sqlite" -- "$@" >> $log 2>&1
  echo "$name exit $?" >> $log
}

if [ "$gpus" -ge 2 ]; then
  rec serial 180 -- "${torchrun[@]}" --nproc-per-node 2 "$prog" --mode serial --steps "$steps"
  rec overlap 180 -- "${torchrun[@]}" --nproc-per-node 2 "$prog" --mode overlap --steps "$steps"
  rec straggler 180 -- "${torchrun[@]}" --nproc-per-node 2 "$prog" --mode serial --steps "$steps" --delay-rank 1 --delay-ms "$delay"
  # Two "nodes" on this host, one GPU each, each under its own recorder.
  for n in 0 1; do
    CUDA_VISIBLE_DEVICES=$n timeout 180 $ss record -f -o "$dir/node$n.sqlite" -- "${torchrun[@]}" --nnodes 2 --node-rank $n \
      --nproc-per-node 1 --master-addr 127.0.0.1 --master-port 29533 "$prog" --mode serial --steps "$steps" >> $dir/node$n.log 2>&1 &
  done
  wait
  cat $dir/node0.log $dir/node1.log >> $log
  $ss merge "$dir/node0.sqlite" "$dir/node1.sqlite" -o "$dir/two-nodes.sqlite" --json > $dir/merge.json 2>> $log
  echo "merge exit $?" >> $log
  cat > /tmp/peer.py <<'PY'
import torch
a = torch.randn(1 << 24, device="cuda:0")
for _ in range(5):
    b = a.to("cuda:1")            # device-to-device between GPUs
    c = torch.empty_like(b)
    c.copy_(a)                    # the same, the other way round
torch.cuda.synchronize()
print("peer: ok", torch.cuda.can_device_access_peer(0, 1))
PY
  rec peer 120 -- python3 /tmp/peer.py
else
  wrap=/tmp/hostid.sh
  printf '#!/bin/sh\nNCCL_HOSTID=fakehost$LOCAL_RANK exec python3 "$@"\n' > $wrap && chmod +x $wrap
  export NCCL_SOCKET_IFNAME=lo NCCL_IB_DISABLE=1
  rec one-gpu-serial 240 -- "${torchrun[@]}" --nproc-per-node 2 --no-python $wrap "$prog" --mode serial --steps "$steps" --size 1024
  rec one-gpu-overlap 240 -- "${torchrun[@]}" --nproc-per-node 2 --no-python $wrap "$prog" --mode overlap --steps "$steps" --size 1024
  rec one-gpu-straggler 240 -- "${torchrun[@]}" --nproc-per-node 2 --no-python $wrap "$prog" --mode serial --steps "$steps" --size 1024 --delay-rank 1 --delay-ms "$delay"
  # Two "nodes", a recorder each, both on the one GPU, each its own host to NCCL.
  for n in 0 1; do
    NCCL_HOSTID=fakenode$n timeout 240 $ss record -f -o "$dir/one-gpu-node$n.sqlite" -- "${torchrun[@]}" --nnodes 2 --node-rank $n \
      --nproc-per-node 1 --master-addr 127.0.0.1 --master-port 29533 "$prog" --mode serial --steps "$steps" --size 1024 >> $dir/node$n.log 2>&1 &
  done
  wait
  cat $dir/node0.log $dir/node1.log >> $log
  $ss merge "$dir/one-gpu-node0.sqlite" "$dir/one-gpu-node1.sqlite" -o "$dir/one-gpu-two-nodes.sqlite" --json > $dir/merge.json 2>> $log
  echo "merge exit $?" >> $log
fi

for f in $dir/*.sqlite; do
  n=$(basename "$f" .sqlite)
  timeout 120 $ss report "$f" > "$dir/$n.report.txt" 2>&1
  timeout 120 $ss report --json "$f" > "$dir/$n.report.json" 2>> "$dir/$n.report.txt"
done
tar -C $dir -cJf "$OUT/nccl.tar.xz" .
echo "== log"; grep -E "^(==|torch|GPU|.* exit|nccl_overlap|peer)" $log | head -60
[ -f $dir/merge.json ] && { echo "== merge"; head -c 1500 $dir/merge.json; echo; }
echo "== table"
python3 - $dir <<'PY'
import glob, json, os, sqlite3, sys
for f in sorted(glob.glob(sys.argv[1] + "/*.sqlite")):
    db = sqlite3.connect(f)
    q = lambda s: db.execute(s).fetchall()
    procs = q("SELECT pid, rank, world_size, host FROM processes ORDER BY rank")
    nccl = q("SELECT COUNT(*) FROM kernels k JOIN strings s ON s.id = k.name_id WHERE s.value LIKE '%nccl%'")[0][0]
    kinds = q("SELECT copy_kind, COUNT(*) FROM memcpys GROUP BY copy_kind")
    try:
        r = json.load(open(f[:-7] + ".report.json"))
        comm = r.get("communication") or {}
        ov = [(x.get("rank"), None if x["total"]["overlap"] is None else round(x["total"]["overlap"], 2)) for x in comm.get("ranks", [])]
        fk = sorted({x["kind"] for x in r.get("findings", [])})
    except Exception as e:
        ov, fk = str(e)[:40], []
    print(os.path.basename(f), "procs", [(p[1], p[2]) for p in procs], "nccl", nccl, "copies", kinds, "overlap", ov, "findings", fk)
    try:
        span = (r.get("summary") or {}).get("gpuSpanNs")
        for x in r.get("findings", []):
            if x["kind"] in ("serialized-collective", "straggler-rank"):
                w = x.get("whatIf") or {}
                print("   ", x["kind"], round(x["costNs"] / 1e6, 2), "ms:", x["title"][:110], "| what-if", w.get("measuredNs"), "->", w.get("predictedNs"))
    except Exception as e:
        print("   ", e)
PY
exit 0
