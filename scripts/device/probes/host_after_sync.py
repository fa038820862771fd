"""How long the host takes to launch one step's forward pass (8 Linear + GELU,
the corpus's torch-synchronize-in-loop), right after a torch.cuda.synchronize()
and with none: the same work timed with perf_counter around model(x), per step,
median over the loop. Whether a wait itself slows the launches after it (the
what-if of removing the wait keeps the recorded launches; bench/RESULTS.md,
session 21). On the GPU machine, after scripts/device/pack.sh:

  python3 scripts/device/probes/host_after_sync.py plain
  node profiler/cli/streamscope.ts record -f -o /tmp/p.sqlite -- python3 scripts/device/probes/host_after_sync.py recorded
"""
import statistics, sys, time
import torch
HOST_WORK_S = 400e-6
def host_work():
    t = time.perf_counter()
    while time.perf_counter() - t < HOST_WORK_S:
        pass
def run(sync, steps=200, d=1024, batch=1024, layers=8):
    torch.manual_seed(25)
    mods = []
    for _ in range(layers):
        mods += [torch.nn.Linear(d, d), torch.nn.GELU()]
    model = torch.nn.Sequential(*mods).cuda().eval()
    xs = [torch.randn(batch, d, device="cuda") for _ in range(4)]
    launch, stepd = [], []
    with torch.no_grad():
        for i in range(3):
            host_work(); model(xs[i % 4]); torch.cuda.synchronize()
        torch.cuda.synchronize()
        t_prev = time.perf_counter()
        for i in range(steps):
            host_work()
            t0 = time.perf_counter()
            model(xs[i % 4])
            launch.append(time.perf_counter() - t0)
            if sync:
                torch.cuda.synchronize()
            t1 = time.perf_counter(); stepd.append(t1 - t_prev); t_prev = t1
        torch.cuda.synchronize()
    return statistics.median(launch) * 1e6, statistics.median(stepd) * 1e6
mode = sys.argv[1] if len(sys.argv) > 1 else "both"
for sync in (True, False):
    l, s = run(sync)
    print(f"{mode}\tsync={int(sync)}\tforward launch median {l:.1f} us\tstep median {s:.1f} us")
