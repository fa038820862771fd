"""Work on several PyTorch CUDA streams: per stream, copy a pinned batch in,
a few matmuls and elementwise ops, copy the result out. Deterministic, so a
run under StreamScope and a run under torch.profiler do the same GPU work.

Usage:
  python3 torch_streams.py [--streams 4] [--iters 5] [--size 512]
  python3 torch_streams.py --torch-profiler trace.json   # same work inside torch.profiler;
      prints the kernel and memcpy counts torch.profiler saw, as JSON on the last line
"""
import argparse
import contextlib
import json
import sys

import torch


def work(streams, iters, size):
    torch.manual_seed(3)
    hosts = [torch.randn(size, size).pin_memory() for _ in streams]
    outs = [torch.empty(size, size).pin_memory() for _ in streams]
    # Scaled so that values stay near 1 through the iterations: the check
    # then compares like with like in float32.
    weights = torch.randn(size, size, device="cuda") / size ** 0.5
    torch.cuda.synchronize()
    for i, s in enumerate(streams):
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            x = hosts[i].to("cuda", non_blocking=True)
            for _ in range(iters):
                x = torch.relu(x @ weights) * 0.5
            outs[i].copy_(x, non_blocking=True)
    torch.cuda.synchronize()
    ref = hosts[0]
    w = weights.cpu()
    for _ in range(iters):
        ref = torch.relu(ref @ w) * 0.5
    return torch.allclose(outs[0], ref, rtol=1e-2, atol=1e-3)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--streams", type=int, default=4)
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--torch-profiler", metavar="TRACE_JSON")
    args = ap.parse_args()
    # Full float32 matmuls (no TF32), so the CPU reference check is meaningful.
    torch.backends.cuda.matmul.allow_tf32 = False
    if hasattr(torch.backends.cuda.matmul, "fp32_precision"):
        torch.backends.cuda.matmul.fp32_precision = "ieee"
    prof_ctx = contextlib.nullcontext()
    if args.torch_profiler:
        from torch.profiler import ProfilerActivity, profile
        prof_ctx = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    with prof_ctx as prof:
        torch.cuda.init()
        streams = [torch.cuda.Stream() for _ in range(args.streams)]
        ok = work(streams, args.iters, args.size)
    if not ok:
        print("torch_streams: result is wrong", file=sys.stderr)
        return 1
    print(f"torch_streams: ok streams={args.streams} iters={args.iters} size={args.size}")
    if args.torch_profiler:
        prof.export_chrome_trace(args.torch_profiler)
        with open(args.torch_profiler) as f:
            events = json.load(f)["traceEvents"]
        counts = {"kernels": 0, "memcpys": 0, "memsets": 0}
        for e in events:
            cat = e.get("cat")
            if e.get("ph") != "X":
                continue
            if cat == "kernel":
                counts["kernels"] += 1
            elif cat == "gpu_memcpy":
                counts["memcpys"] += 1
            elif cat == "gpu_memset":
                counts["memsets"] += 1
        print(json.dumps({"torch_profiler_counts": counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
