"""A data-parallel training step in miniature, for the communication
analysis: each step computes a few matmuls ("backward") that produce
gradient buckets, and all-reduces every bucket over NCCL.

  --mode serial    each bucket's all-reduce runs on the compute stream after
                   all the step's matmuls: communication never overlaps
                   computation (what a hand-written loop often does)
  --mode overlap   each bucket's all-reduce is issued on a side stream as
                   soon as its bucket is ready, while the next bucket is
                   computed (what DDP's bucketing does): communication hides
                   behind computation
  --delay-rank R --delay-ms D
                   rank R sleeps D ms on the host before each step's
                   collectives: a straggler that every other rank waits for

Run under torchrun (one process per GPU; NCCL needs a GPU per rank):
  torchrun --nproc-per-node 2 nccl_overlap.py --mode overlap
Each step is an NVTX range "step". Checks the all-reduced values: every
bucket equals the sum over ranks of what each rank computed.

  --warmup W        W steps before the measured ones, outside any "step"
                   range: connecting the ranks and loading the kernels
                   happen there
  --grad-scale K    each bucket's gradient is K copies of the bucket's
                   result (one concatenation kernel): K times the bytes to
                   all-reduce for the same computation, so that
                   communication weighs as much as computation on a fast
                   link

Usage: python3 nccl_overlap.py [--mode serial|overlap] [--steps 8]
         [--buckets 4] [--size 2048] [--grad-scale 1] [--warmup 1] [--delay-rank -1] [--delay-ms 0]
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("serial", "overlap"), default="serial")
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--buckets", type=int, default=4)
    ap.add_argument("--size", type=int, default=2048, help="matrix size; a bucket holds size*size floats")
    ap.add_argument("--grad-scale", type=int, default=1)
    ap.add_argument("--warmup", type=int, default=1, help="steps run before the measured ones, outside the NVTX ranges")
    ap.add_argument("--delay-rank", type=int, default=-1)
    ap.add_argument("--delay-ms", type=float, default=0.0)
    args = ap.parse_args()

    # Modulo the GPUs it sees: several ranks can share one GPU where each
    # believes itself on a host of its own (NCCL_HOSTID), as the one-GPU
    # check of scripts/device/nccl-check.sh runs it.
    local_rank = int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count()
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.backends.cuda.matmul.allow_tf32 = False

    n = args.size
    g = torch.Generator(device="cuda").manual_seed(100 + rank)
    weights = [torch.rand(n, n, device="cuda", generator=g) / n for _ in range(args.buckets)]
    x = torch.rand(n, n, device="cuda", generator=g)
    comm = torch.cuda.Stream()
    compute = torch.cuda.current_stream()

    def step(delay):
        if delay:
            time.sleep(args.delay_ms / 1e3)
        grads = []
        works = []
        for b in range(args.buckets):
            # "Backward" of one bucket: a few matmuls whose result is the gradient.
            h = x
            for _ in range(3):
                h = torch.tanh(h @ weights[b])
            if args.grad_scale > 1:
                h = torch.cat([h] * args.grad_scale)
            grads.append(h)
            if args.mode == "overlap":
                # The bucket is ready: reduce it on the side stream while the next one is computed.
                comm.wait_stream(compute)
                with torch.cuda.stream(comm):
                    works.append(dist.all_reduce(h, async_op=True))
        if args.mode == "serial":
            for h in grads:
                dist.all_reduce(h)
        else:
            for w in works:
                w.wait()  # makes the compute stream wait for the side stream
        return grads

    # Warm-up, outside the "step" ranges: the first collective connects the
    # ranks and the first matmuls load their kernels (hundreds of ms).
    for _ in range(args.warmup):
        step(False)
    torch.cuda.synchronize()
    dist.barrier()
    for _ in range(args.steps):
        torch.cuda.nvtx.range_push("step")
        grads = step(rank == args.delay_rank and args.delay_ms > 0)
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()

    # Check: every rank's reduced bucket equals the sum of each rank's own result.
    mine = []
    for b in range(args.buckets):
        h = x
        for _ in range(3):
            h = torch.tanh(h @ weights[b])
        mine.append(h)
    # One all-reduce for all buckets: the check must not look like the
    # serialized buckets the analysis is to find in --mode serial.
    total = torch.stack(mine)
    dist.all_reduce(total)
    err = max(float((grads[b][:n] - total[b]).abs().max()) for b in range(args.buckets))
    torch.cuda.synchronize()
    dist.destroy_process_group()
    if err > 1e-3:
        print(f"nccl_overlap: rank {rank}: wrong result (max error {err})", file=sys.stderr)
        sys.exit(1)
    print(f"nccl_overlap: ok rank={rank} world={world} mode={args.mode} steps={args.steps} buckets={args.buckets} size={n}")


if __name__ == "__main__":
    main()
