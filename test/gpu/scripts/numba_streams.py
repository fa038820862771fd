"""Per-column min/max normalisation of many 60 x N float64 arrays with Numba
CUDA streams, written the way users write it in the classic forum question:
pinned host arrays, one stream per array, copy in / kernel / copy out on
that stream. Checks its result against NumPy and exits 1 when wrong.

Usage: python3 numba_streams.py [--arrays 8] [--cols 20000]
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
        v = x[r, col]
        lo = min(lo, v)
        hi = max(hi, v)
    scale = hi - lo
    for r in range(x.shape[0]):
        out[r, col] = (x[r, col] - lo) / scale if scale != 0 else 0.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--arrays", type=int, default=8)
    ap.add_argument("--cols", type=int, default=20000)
    args = ap.parse_args()
    rows = 60
    rng = np.random.default_rng(1)
    streams = [cuda.stream() for _ in range(args.arrays)]
    hosts_in = [cuda.pinned_array((rows, args.cols), dtype=np.float64) for _ in range(args.arrays)]
    hosts_out = [cuda.pinned_array((rows, args.cols), dtype=np.float64) for _ in range(args.arrays)]
    for h in hosts_in:
        h[:] = rng.random((rows, args.cols))
    dev_in = [cuda.device_array((rows, args.cols), dtype=np.float64) for _ in range(args.arrays)]
    dev_out = [cuda.device_array((rows, args.cols), dtype=np.float64) for _ in range(args.arrays)]
    threads = 128
    blocks = (args.cols + threads - 1) // threads
    for i, s in enumerate(streams):
        dev_in[i].copy_to_device(hosts_in[i], stream=s)
        normalise[blocks, threads, s](dev_in[i], dev_out[i])
        dev_out[i].copy_to_host(hosts_out[i], stream=s)
    cuda.synchronize()
    for i in range(args.arrays):
        x = hosts_in[i]
        want = (x - x.min(axis=0)) / (x.max(axis=0) - x.min(axis=0))
        if not np.allclose(hosts_out[i], want):
            print(f"numba_streams: array {i} is wrong", file=sys.stderr)
            return 1
    print(f"numba_streams: ok arrays={args.arrays} cols={args.cols} kernels={args.arrays} copies={2 * args.arrays}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
