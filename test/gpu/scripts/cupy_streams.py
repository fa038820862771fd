"""Independent matrix products on several non-blocking CuPy streams, inputs
and outputs through pinned host memory. Checks against NumPy.

Usage: python3 cupy_streams.py [--streams 4] [--size 1024]
"""
import argparse
import sys

import cupy as cp
import numpy as np


def pinned_empty(shape, dtype):
    mem = cp.cuda.alloc_pinned_memory(int(np.prod(shape)) * np.dtype(dtype).itemsize)
    return np.frombuffer(mem, dtype, int(np.prod(shape))).reshape(shape)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--streams", type=int, default=4)
    ap.add_argument("--size", type=int, default=1024)
    args = ap.parse_args()
    n = args.size
    rng = np.random.default_rng(2)
    streams = [cp.cuda.Stream(non_blocking=True) for _ in range(args.streams)]
    a_host = [pinned_empty((n, n), np.float32) for _ in streams]
    c_host = [pinned_empty((n, n), np.float32) for _ in streams]
    for a in a_host:
        a[:] = rng.random((n, n), dtype=np.float32)
    results = []
    for i, s in enumerate(streams):
        with s:
            a = cp.empty((n, n), dtype=cp.float32)
            a.set(a_host[i], stream=s)
            c = a @ a
            c.get(stream=s, out=c_host[i])
            results.append((a, c))
    for s in streams:
        s.synchronize()
    for i in range(args.streams):
        want = a_host[i] @ a_host[i]
        if not np.allclose(c_host[i], want, rtol=1e-3, atol=1e-2):
            print(f"cupy_streams: stream {i} result is wrong", file=sys.stderr)
            return 1
    print(f"cupy_streams: ok streams={args.streams} size={n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
