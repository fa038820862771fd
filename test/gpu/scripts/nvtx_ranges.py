"""NVTX ranges and marks from one Python library, on the main thread and on
a worker thread, around real GPU work. The GPU test records this script
once per library and checks that every range it announces arrived, on the
right thread, with its domain.

Usage: python3 nvtx_ranges.py LIBRARY
  LIBRARY: torch       torch.cuda.nvtx.range_push/pop, range(), mark()
           torch-emit  torch.autograd.profiler.emit_nvtx() (one range per aten op)
           cupy        cupyx.profiler.time_range, cupy.cuda.nvtx.RangePush/Pop, Mark
           nvtx        the `nvtx` package (annotate, push/pop, start/end, mark; with a
                       domain and without), GPU work through Numba

The last line printed is JSON:
  {"library", "threads": {"main": tid, "worker": tid},
   "expect": [{"name", "domain" (null: NVTX's default domain), "thread", "count", "mark"}],
   "expect_prefix": [{"prefix", "thread", "at_least"}],
   "cupti": [every libcupti file mapped into this process]}
"""
import json
import sys
import threading

ROUNDS = 3


def cupti_files():
    """The libcupti copies this process has mapped: more than one means NVTX
    may talk to a copy that the collector did not subscribe to."""
    seen = []
    with open("/proc/self/maps") as f:
        for line in f:
            path = line.split()[-1] if len(line.split()) >= 6 else ""
            if "libcupti" in path and path not in seen:
                seen.append(path)
    return seen


def run_torch(expect, prefixes):
    import torch

    torch.cuda.init()
    x = torch.randn(1024, 1024, device="cuda")

    def step(tag):
        for _ in range(ROUNDS):
            torch.cuda.nvtx.range_push(f"ss_torch_{tag}")
            y = torch.relu(x @ x)
            torch.cuda.nvtx.range_pop()
        with torch.cuda.nvtx.range(f"ss_torch_{tag}_ctx"):
            y = y + 1
        torch.cuda.nvtx.mark(f"ss_torch_{tag}_mark")
        torch.cuda.synchronize()

    worker = threading.Thread(target=lambda: (torch.cuda.set_device(0), step("worker")))
    step("main")
    worker.start()
    worker.join()
    for tag, thread in (("main", "main"), ("worker", "worker")):
        expect += [
            {"name": f"ss_torch_{tag}", "domain": None, "thread": thread, "count": ROUNDS, "mark": False},
            {"name": f"ss_torch_{tag}_ctx", "domain": None, "thread": thread, "count": 1, "mark": False},
            {"name": f"ss_torch_{tag}_mark", "domain": None, "thread": thread, "count": 1, "mark": True},
        ]
    return worker


def run_torch_emit(expect, prefixes):
    import torch

    x = torch.randn(512, 512, device="cuda")
    torch.cuda.synchronize()
    with torch.autograd.profiler.emit_nvtx():
        for _ in range(ROUNDS):
            y = torch.mm(x, x)
            y = torch.relu(y)
    torch.cuda.synchronize()
    # emit_nvtx names each range after the op and its sequence number,
    # e.g. "aten::mm, seq = 12".
    prefixes += [{"prefix": "aten::mm", "thread": "main", "at_least": ROUNDS},
                 {"prefix": "aten::relu", "thread": "main", "at_least": ROUNDS}]
    return None


def run_cupy(expect, prefixes):
    import cupy as cp
    import cupyx.profiler

    x = cp.random.random((1024, 1024), dtype=cp.float32)

    def step(tag):
        s = cp.cuda.Stream(non_blocking=True)
        with s:
            for _ in range(ROUNDS):
                with cupyx.profiler.time_range(f"ss_cupy_{tag}", color_id=0):
                    y = x @ x
            cp.cuda.nvtx.RangePush(f"ss_cupy_{tag}_push")
            y = y + 1
            cp.cuda.nvtx.RangePop()
            cp.cuda.nvtx.Mark(f"ss_cupy_{tag}_mark")
        s.synchronize()

    step("main")
    worker = threading.Thread(target=step, args=("worker",))
    worker.start()
    worker.join()
    for tag, thread in (("main", "main"), ("worker", "worker")):
        expect += [
            {"name": f"ss_cupy_{tag}", "domain": None, "thread": thread, "count": ROUNDS, "mark": False},
            {"name": f"ss_cupy_{tag}_push", "domain": None, "thread": thread, "count": 1, "mark": False},
            {"name": f"ss_cupy_{tag}_mark", "domain": None, "thread": thread, "count": 1, "mark": True},
        ]
    return worker


def run_nvtx(expect, prefixes):
    import numpy as np

    # Numba 0.68 still calls np.row_stack, which NumPy 2.5 removed.
    if not hasattr(np, "row_stack"):
        np.row_stack = np.vstack
    import nvtx
    from numba import cuda

    @cuda.jit
    def scale(a, f):
        i = cuda.grid(1)
        if i < a.size:
            a[i] *= f

    d = cuda.to_device(np.ones(1 << 20, dtype=np.float32))

    def step(tag):
        for _ in range(ROUNDS):
            with nvtx.annotate(f"ss_nvtx_{tag}", domain="streamscope_test", color="blue"):
                scale[256, 256](d, 1.0)
            # No domain: NVTX's default domain, reached through the domain
            # API with a null handle (what most Numba users write).
            with nvtx.annotate(f"ss_nvtx_{tag}_plain"):
                scale[256, 256](d, 1.0)
        nvtx.push_range(f"ss_nvtx_{tag}_push")
        scale[256, 256](d, 1.0)
        nvtx.pop_range()
        for domain, suffix in (("streamscope_test", ""), (None, "_plain")):
            rng = nvtx.start_range(f"ss_nvtx_{tag}_startend{suffix}", domain=domain)
            scale[256, 256](d, 1.0)
            nvtx.end_range(rng)
            nvtx.mark(f"ss_nvtx_{tag}_mark{suffix}", domain=domain)
        cuda.synchronize()

    step("main")
    worker = threading.Thread(target=step, args=("worker",))
    worker.start()
    worker.join()
    for tag, thread in (("main", "main"), ("worker", "worker")):
        for suffix, domain in (("", "streamscope_test"), ("_plain", None)):
            expect += [
                {"name": f"ss_nvtx_{tag}{suffix}", "domain": domain, "thread": thread, "count": ROUNDS, "mark": False},
                {"name": f"ss_nvtx_{tag}_startend{suffix}", "domain": domain, "thread": thread, "count": 1, "mark": False},
                {"name": f"ss_nvtx_{tag}_mark{suffix}", "domain": domain, "thread": thread, "count": 1, "mark": True},
            ]
        expect.append({"name": f"ss_nvtx_{tag}_push", "domain": None, "thread": thread, "count": 1, "mark": False})
    return worker


LIBRARIES = {"torch": run_torch, "torch-emit": run_torch_emit, "cupy": run_cupy, "nvtx": run_nvtx}


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in LIBRARIES:
        print(f"usage: nvtx_ranges.py {{{'|'.join(LIBRARIES)}}}", file=sys.stderr)
        return 2
    library = sys.argv[1]
    expect, prefixes = [], []
    worker_tid = {}
    # The worker's native thread id, whichever function it runs.
    original_run = threading.Thread.run

    def run(self):
        worker_tid["tid"] = threading.get_native_id()
        original_run(self)

    threading.Thread.run = run
    LIBRARIES[library](expect, prefixes)
    print(json.dumps({
        "library": library,
        "threads": {"main": threading.get_native_id(), "worker": worker_tid.get("tid")},
        "expect": expect,
        "expect_prefix": prefixes,
        "cupti": cupti_files(),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
