#!/usr/bin/env bash
# Runs on the lent GPU machine (one GPU is enough), in the repository root,
# with .carry/ packed by scripts/device/pack.sh: records a small PyTorch
# program the ways README.md's "Distributed jobs" section says (issue 13,
# part 1) and prints each recording's processes with their rank columns.
#   a recorder per rank:  torchrun --nproc-per-node 1 --no-python node … record -o rank-%h-%r.sqlite -- python3 PROG --dist
#   a recorder per node:  node … record -o node-%h.sqlite -- torchrun --nproc-per-node 1 PROG --dist
#   explicit variables:   RANK=5 LOCAL_RANK=1 WORLD_SIZE=8 node … record -o explicit-r%r-l%l.sqlite -- python3 PROG
#   no launcher:          node … record -o none-%r.sqlite -- python3 PROG   (refused, exit 2)
set -uo pipefail
. scripts/device/unpack.sh
export PYTHONUNBUFFERED=1 NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
ss="node $PWD/profiler/cli/streamscope.ts"
if command -v torchrun >/dev/null; then torchrun=(torchrun); else torchrun=(python3 -m torch.distributed.run); fi
# Launcher variables of this shell would change what is checked: none here.
unset RANK LOCAL_RANK WORLD_SIZE OMPI_COMM_WORLD_RANK PMI_RANK SLURM_PROCID PMIX_RANK MV2_COMM_WORLD_RANK

prog=/tmp/ranks_prog.py
cat > "$prog" <<'PY'
import os, sys, torch
dev = torch.device('cuda', int(os.environ.get('LOCAL_RANK', '0')) % torch.cuda.device_count())
torch.cuda.set_device(dev)
dist = None
if '--dist' in sys.argv:
    import torch.distributed as dist
    dist.init_process_group('nccl')
a = torch.randn(1024, 1024, device=dev)
side = torch.cuda.Stream()
for _ in range(20):
    b = a @ a
    with torch.cuda.stream(side):
        c = a @ a
torch.cuda.synchronize()
if dist:
    t = torch.ones(1 << 20, device=dev)
    dist.all_reduce(t)
    torch.cuda.synchronize()
    dist.destroy_process_group()
print('prog: RANK', os.environ.get('RANK'), 'LOCAL_RANK', os.environ.get('LOCAL_RANK'), 'WORLD_SIZE', os.environ.get('WORLD_SIZE'), 'ok')
PY

{
  echo "== per rank: torchrun --no-python streamscope record"
  timeout 90 "${torchrun[@]}" --nproc-per-node 1 --no-python node "$PWD/profiler/cli/streamscope.ts" record -f -q -o "$OUT/rank-%h-%r.sqlite" -- python3 "$prog" --dist
  echo "exit $?"
  echo "== per node: streamscope record -- torchrun"
  timeout 90 $ss record -f -q -o "$OUT/node-%h.sqlite" -- "${torchrun[@]}" --nproc-per-node 1 "$prog" --dist
  echo "exit $?"
  echo "== explicit RANK=5 LOCAL_RANK=1 WORLD_SIZE=8"
  RANK=5 LOCAL_RANK=1 WORLD_SIZE=8 timeout 60 $ss record -f -q -o "$OUT/explicit-r%r-l%l.sqlite" -- python3 "$prog"
  echo "exit $?"
  echo "== no launcher: -o none-%r.sqlite"
  timeout 30 $ss record -f -q -o "$OUT/none-%r.sqlite" -- python3 "$prog"
  echo "exit $?"
} > "$OUT/ranks-check.log" 2>&1

python3 - "$OUT" <<'PY' | tee "$OUT/ranks-table.txt"
import glob, os, sqlite3, sys
out = sys.argv[1]
rows = []
for f in sorted(glob.glob(os.path.join(out, '*.sqlite'))):
    db = sqlite3.connect(f'file:{f}?mode=ro', uri=True)
    for pid, host, cmd, rank, local, world, var, complete in db.execute(
            'SELECT pid, host, command, rank, local_rank, world_size, rank_variable, complete FROM processes ORDER BY pid'):
        env = dict(db.execute('SELECT name, value FROM process_env WHERE pid = ?', (pid,)))
        kernels = db.execute('SELECT count(*) FROM kernels k JOIN contexts c ON c.id = k.context_id WHERE c.pid = ?', (pid,)).fetchone()[0]
        rows.append((os.path.basename(f), pid, rank, local, world, var, complete, kernels,
                     ' '.join(f'{k}={v}' for k, v in sorted(env.items()) if k in ('RANK', 'LOCAL_RANK', 'WORLD_SIZE', 'GROUP_RANK', 'MASTER_PORT', 'TORCHELASTIC_RUN_ID')),
                     (cmd or '')[:50]))
head = ('file', 'pid', 'rank', 'local', 'world', 'variable', 'complete', 'kernels', 'process_env (some)', 'command')
w = [max(len(str(r[i])) for r in rows + [head]) for i in range(len(head))]
for r in [head] + rows:
    print('  '.join(str(v).ljust(w[i]) for i, v in enumerate(r)))
PY
echo "== log"; grep -E "^==|^exit|streamscope:|prog:" "$OUT/ranks-check.log" | grep -v "^streamscope: note" | head -40
f=$(ls "$OUT"/rank-*.sqlite 2>/dev/null | head -1)
[ -n "$f" ] && { echo "== report (Processes)"; $ss report "$f" 2>&1 | sed -n '/^Processes/,/^$/p'; }
exit 0
