"""Chunks of work on CuPy streams tied together with events, with one
mistake: the kernel of each chunk is launched outside `with stream:`, so it
runs on CuPy's default stream, the legacy default stream, which waits for
all work issued before it on every blocking stream and holds up all work
issued after it. The copies are on their own streams, from and to pinned
memory; the kernel waits for its input copy through an event and the output
copy waits for the kernel through another, as intended. Each chunk's copies
take about as long as its kernel, so on their own streams the copies of one
chunk would run under the kernel of the next; on the legacy default stream
nothing overlaps a kernel. Each iteration is an NVTX range
(cupyx.profiler.time_range); the host synchronizes once, at the end.

  --kernel-stream default   the mistake (default)
  --kernel-stream own       the fix: the kernel on the chunk's stream

Checks part of every chunk against NumPy.

Usage: python3 cupy_streams_events.py [--kernel-stream default|own] [--chunks 8] [--elements 16777216] [--iters 4]
"""
import argparse
import sys

import cupy as cp
import cupyx
import cupyx.profiler
import numpy as np

ROUNDS = 48

# A kernel about as long as the copy of its input on an H100: enough
# arithmetic per element that it is not memory-bound.
damp = cp.ElementwiseKernel(
    "float32 x, int32 rounds", "float32 y",
    "float v = x; for (int k = 0; k < rounds; k++) v = sinf(v) * 0.9f + 0.1f; y = v;",
    "streamscope_damp")


def reference(x, rounds):
    v = x.astype(np.float64)
    for _ in range(rounds):
        v = np.sin(v) * 0.9 + 0.1
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernel-stream", choices=("default", "own"), default="default")
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--elements", type=int, default=1 << 24)
    ap.add_argument("--iters", type=int, default=4)
    args = ap.parse_args()
    rng = np.random.default_rng(5)
    streams = [cp.cuda.Stream() for _ in range(args.chunks)]  # blocking streams, CuPy's default kind
    h_in = [cupyx.empty_pinned(args.elements, dtype=np.float32) for _ in streams]
    h_out = [cupyx.empty_pinned(args.elements, dtype=np.float32) for _ in streams]
    for h in h_in:
        h[:] = rng.random(args.elements, dtype=np.float32)
    d_in = [cp.empty(args.elements, dtype=cp.float32) for _ in streams]
    d_out = [cp.empty(args.elements, dtype=cp.float32) for _ in streams]
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
                    damp(d_in[i], ROUNDS, d_out[i])
                    computed[i].record(kernel_stream)
                s.wait_event(computed[i])
                # blocking=False: get() would otherwise wait for the copy (a stream
                # synchronize per chunk, not the mistake this program is about).
                d_out[i].get(stream=s, out=h_out[i], blocking=False)
    cp.cuda.Device().synchronize()

    for i in range(args.chunks):
        sample = slice(0, 4096)
        if not np.allclose(h_out[i][sample], reference(h_in[i][sample], ROUNDS), atol=1e-4):
            print(f"cupy_streams_events: chunk {i} is wrong", file=sys.stderr)
            return 1
    print(f"cupy_streams_events: ok kernel-stream={args.kernel_stream} chunks={args.chunks} elements={args.elements} iters={args.iters}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
