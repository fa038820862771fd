"""Launch-bound PyTorch loop over 4 streams (tiny in-place adds), timed
without and with torch.profiler in the same process, for StreamScope's
overhead benchmark. Prints one JSON line.

Usage: python3 torch_launch_loop.py [--launches 200000] [--streams 4] [--pairs 3]
"""
import argparse
import json
import time

import torch


def loop(xs, streams, launches):
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    per = launches // len(streams)
    for _ in range(per):
        for x, s in zip(xs, streams):
            with torch.cuda.stream(s):
                x.add_(1)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / (per * len(streams)) * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--launches", type=int, default=200000)
    ap.add_argument("--streams", type=int, default=4)
    ap.add_argument("--pairs", type=int, default=3)
    args = ap.parse_args()
    from torch.profiler import ProfilerActivity, profile
    streams = [torch.cuda.Stream() for _ in range(args.streams)]
    xs = [torch.zeros(32, device="cuda") for _ in streams]
    loop(xs, streams, 4000)  # warm up
    plain, profiled = [], []
    for _ in range(args.pairs):
        plain.append(loop(xs, streams, args.launches))
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]):
            profiled.append(loop(xs, streams, args.launches))
    print(json.dumps({"torch_us_per_launch_plain": plain, "torch_us_per_launch_profiled": profiled}))


if __name__ == "__main__":
    main()
