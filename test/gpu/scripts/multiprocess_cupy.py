"""Two worker processes (multiprocessing, spawn) each doing CuPy work on the
GPU, plus the parent: a process tree that StreamScope must record as three
processes in one recording.

Usage: python3 multiprocess_cupy.py [--workers 2]
"""
import argparse
import multiprocessing as mp
import sys


def work(n):
    import cupy as cp
    s = cp.cuda.Stream(non_blocking=True)
    with s:
        x = cp.arange(1 << 20, dtype=cp.float32)
        for _ in range(n):
            x = x * 1.0001 + 1
    s.synchronize()
    return float(x[0])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    ctx = mp.get_context("spawn")
    with ctx.Pool(args.workers) as pool:
        results = pool.map(work, [50] * args.workers)
    parent = work(10)
    ok = all(r > 0 for r in results) and parent > 0
    print(f"multiprocess_cupy: {'ok' if ok else 'WRONG'} workers={args.workers}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
