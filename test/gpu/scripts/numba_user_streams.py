"""The normalise-with-streams program as users first write it in Numba
(the classic forum question "why don't my CUDA streams overlap?"):
NumPy (pageable) host arrays, cuda.to_device(..., stream=s) and a new device
array per chunk inside the loop, and stream.synchronize() after each chunk.
It computes the right answer; it just never overlaps. StreamScope's
diagnosis should say why: pageable async copies, allocation and
synchronization between launches. Checks its result against NumPy.

Usage: python3 numba_user_streams.py [--arrays 8] [--cols 100000]
"""
import argparse
import sys

import numpy as np

# Numba 0.68 still calls np.row_stack, which NumPy 2.5 removed.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402


@cuda.jit
def normalise(x, out):
    col = cuda.grid(1)
    if col >= x.shape[1]:
        return
    lo = x[0, col]
    hi = x[0, col]
    for r in range(1, x.shape[0]):
        lo = min(lo, x[r, col])
        hi = max(hi, x[r, col])
    scale = hi - lo
    for r in range(x.shape[0]):
        out[r, col] = (x[r, col] - lo) / scale if scale != 0 else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arrays", type=int, default=8)
    ap.add_argument("--cols", type=int, default=100000)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    arrays = [rng.random((60, args.cols)) for _ in range(args.arrays)]
    results = [None] * args.arrays
    streams = [cuda.stream() for _ in range(args.arrays)]
    threads = 128
    blocks = (args.cols + threads - 1) // threads
    for i, a in enumerate(arrays):
        s = streams[i]
        d_in = cuda.to_device(a, stream=s)
        d_out = cuda.device_array_like(d_in, stream=s)
        normalise[blocks, threads, s](d_in, d_out)
        results[i] = d_out.copy_to_host(stream=s)
        s.synchronize()
    for a, r in zip(arrays, results):
        lo = a.min(axis=0)
        hi = a.max(axis=0)
        want = (a - lo) / (hi - lo)
        if not np.allclose(r, want):
            print("numba_user_streams: WRONG result", file=sys.stderr)
            return 1
    print(f"numba_user_streams: ok arrays={args.arrays} cols={args.cols}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
