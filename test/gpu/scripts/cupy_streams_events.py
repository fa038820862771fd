"""Chunks of work on CuPy streams tied together with events, with one
mistake: the kernel of each chunk is launched outside `with stream:`, so it
runs on CuPy's default stream, the legacy default stream, which waits for
and holds up every blocking stream. The copies are on their own streams,
from and to pinned memory, and the kernel waits for its input copy through
an event, as intended; the output copy waits for the kernel through another.
Each iteration is an NVTX range (cupyx.profiler.time_range).

  --kernel-stream default   the mistake (default)
  --kernel-stream own       the fix: the kernel on the chunk's stream

Checks part of every chunk against NumPy.

Usage: python3 cupy_streams_events.py [--kernel-stream default|own] [--chunks 8] [--size 4096] [--iters 4]
"""
import argparse
import sys

import cupy as cp
import cupyx
import cupyx.profiler
import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel-stream", choices=("default", "own"), default="default")
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--iters", type=int, default=4)
    args = ap.parse_args()
    n = args.size
    rng = np.random.default_rng(5)
    streams = [cp.cuda.Stream() for _ in range(args.chunks)]  # blocking streams, CuPy's default kind
    h_in = [cupyx.empty_pinned((n, n), dtype=np.float32) for _ in streams]
    h_out = [cupyx.empty_pinned((n, n), dtype=np.float32) for _ in streams]
    for h in h_in:
        # Scaled so that the products stay near 0.25, where tanh is not flat.
        h[:] = rng.random((n, n), dtype=np.float32) / np.float32(np.sqrt(n))
    d_in = [cp.empty((n, n), dtype=cp.float32) for _ in streams]
    copied = [cp.cuda.Event() for _ in streams]
    computed = [cp.cuda.Event() for _ in streams]

    for it in range(args.iters):
        with cupyx.profiler.time_range("iteration", color_id=it):
            for i, s in enumerate(streams):
                d_in[i].set(h_in[i], stream=s)
                copied[i].record(s)
                kernel_stream = s if args.kernel_stream == "own" else cp.cuda.Stream.null
                kernel_stream.wait_event(copied[i])
                with kernel_stream:
                    d_out = cp.tanh(d_in[i] @ d_in[i])
                    computed[i].record(kernel_stream)
                s.wait_event(computed[i])
                d_out.get(stream=s, out=h_out[i])
            for s in streams:
                s.synchronize()

    for i in range(args.chunks):
        # Rows are independent: the first 64 are checked on the CPU.
        want = np.tanh(h_in[i][:64] @ h_in[i])
        if not np.allclose(h_out[i][:64], want, rtol=1e-3, atol=1e-4):
            print(f"cupy_streams_events: chunk {i} is wrong", file=sys.stderr)
            return 1
    print(f"cupy_streams_events: ok kernel-stream={args.kernel_stream} chunks={args.chunks} size={n} iters={args.iters}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
