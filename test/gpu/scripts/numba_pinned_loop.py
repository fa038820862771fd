"""Chunks of work on Numba streams, with the host buffers pinned by
`cuda.pinned(...)` inside the loop: the pattern of the well-known forum
question "my CUDA streams do not overlap". Each `with cuda.pinned(...)`
registers the host buffers (cuMemHostRegister) on entry and unregisters them
(cuMemHostUnregister) on exit, and both calls wait for the device: every
chunk waits for the one before it, although each has its own stream.

  --pin inside   the pattern (default)
  --pin once     the fix: the same buffers pinned once, around the whole loop

The kernel is compiled on its first launch (inside the first iteration), as
in most Numba programs. Checks a sample of every chunk against NumPy.

Usage: python3 numba_pinned_loop.py [--pin inside|once] [--chunks 8] [--elements 2097152] [--iters 6]
"""
import argparse
import contextlib
import math
import sys

import numpy as np

# Numba 0.68 still calls np.row_stack, which NumPy 2.5 removed.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

from numba import cuda  # noqa: E402

ROUNDS = 400


@cuda.jit
def damp(x, out, rounds):
    i = cuda.grid(1)
    if i < x.size:
        v = x[i]
        for _ in range(rounds):
            v = math.sin(v) * 0.9 + 0.1
        out[i] = v


def reference(x, rounds):
    v = x.astype(np.float64)
    for _ in range(rounds):
        v = np.sin(v) * 0.9 + 0.1
    return v


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pin", choices=("inside", "once"), default="inside")
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--elements", type=int, default=1 << 21)
    ap.add_argument("--iters", type=int, default=6)
    args = ap.parse_args()
    rng = np.random.default_rng(4)
    h_in = [rng.random(args.elements, dtype=np.float32) for _ in range(args.chunks)]
    h_out = [np.empty(args.elements, dtype=np.float32) for _ in range(args.chunks)]
    streams = [cuda.stream() for _ in range(args.chunks)]
    d_in = [cuda.device_array(args.elements, dtype=np.float32) for _ in range(args.chunks)]
    d_out = [cuda.device_array(args.elements, dtype=np.float32) for _ in range(args.chunks)]
    threads = 256
    blocks = (args.elements + threads - 1) // threads

    pinned_once = cuda.pinned(*h_in, *h_out) if args.pin == "once" else contextlib.nullcontext()
    with pinned_once:
        for _ in range(args.iters):
            for i, s in enumerate(streams):
                pin_here = cuda.pinned(h_in[i], h_out[i]) if args.pin == "inside" else contextlib.nullcontext()
                with pin_here:
                    d_in[i].copy_to_device(h_in[i], stream=s)
                    damp[blocks, threads, s](d_in[i], d_out[i], ROUNDS)
                    d_out[i].copy_to_host(h_out[i], stream=s)
            cuda.synchronize()

    for i in range(args.chunks):
        sample = slice(0, 4096)
        if not np.allclose(h_out[i][sample], reference(h_in[i][sample], ROUNDS), atol=1e-4):
            print(f"numba_pinned_loop: chunk {i} is wrong", file=sys.stderr)
            return 1
    print(f"numba_pinned_loop: ok pin={args.pin} chunks={args.chunks} elements={args.elements} iters={args.iters}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
