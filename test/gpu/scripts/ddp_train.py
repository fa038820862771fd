"""A small data-parallel training job with PyTorch's DistributedDataParallel,
as users run one under torchrun (one process a GPU, NCCL), in the three
shapes the communication analysis must tell apart:

  --mode ddp      DDP as it is meant to run: gradients all-reduced in
                  buckets while the backward pass still computes the
                  rest (communication hidden behind computation)
  --mode serial   no DDP wrapper: after loss.backward() the loop
                  all-reduces every parameter's gradient itself, one
                  after the other, after all the computation (what a
                  hand-written loop does: communication exposed)
  --mode fsdp     FSDP (PyTorch's fully_shard, each layer a unit): the
                  parameters sharded across the ranks, all-gathered
                  before each layer's forward and backward (the next
                  one prefetched) and the gradients reduce-scattered
                  during the backward pass
  --no-sync       without the script's own synchronizations (the
                  torch.cuda.synchronize() after the warm-up and after
                  the steps, and the barrier between): what the
                  host-blocking finding's what-if predicts, to check it
  --slow-rank R --slow-ms D
                  rank R does D ms more host work before each step (a
                  slower data loader): the straggler every other rank
                  waits for in the first all-reduce

A 4-layer MLP (width 4096, batch 1024 a rank, float32): 268 MB of
gradients a step against ~8 ms of computation. Three warm-up steps (the
ranks connect, every kernel loads), then the measured steps, each an NVTX
range "train_step". Checks that the ranks' parameters are identical after
training, as data parallelism requires.

Usage: torchrun --nproc-per-node 2 ddp_train.py [--mode ddp|serial|fsdp] [--steps 10]
         [--slow-rank -1] [--slow-ms 0]
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", choices=("ddp", "serial", "fsdp"), default="ddp")
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--no-sync", action="store_true")
    ap.add_argument("--slow-rank", type=int, default=-1)
    ap.add_argument("--slow-ms", type=float, default=0.0)
    args = ap.parse_args()
    local_rank = int(os.environ.get("LOCAL_RANK", "0")) % torch.cuda.device_count()
    torch.cuda.set_device(local_rank)
    dist.init_process_group("nccl", device_id=torch.device("cuda", local_rank))
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.backends.cuda.matmul.allow_tf32 = False

    torch.manual_seed(25)  # the same initial weights on every rank
    d = args.width
    layers = []
    for _ in range(args.layers - 1):
        layers += [torch.nn.Linear(d, d), torch.nn.ReLU()]
    layers.append(torch.nn.Linear(d, d))
    model = torch.nn.Sequential(*layers).cuda()
    if args.mode == "ddp":
        model = torch.nn.parallel.DistributedDataParallel(model, device_ids=[local_rank])
    elif args.mode == "fsdp":
        try:
            from torch.distributed.fsdp import fully_shard
        except ImportError:  # PyTorch before 2.6 kept it private
            from torch.distributed._composable.fsdp import fully_shard
        for layer in model:
            if isinstance(layer, torch.nn.Linear):
                fully_shard(layer)
        fully_shard(model)
    opt = torch.optim.SGD(model.parameters(), lr=1e-4)
    g = torch.Generator(device="cuda").manual_seed(100 + rank)  # each rank its own data
    xs = [torch.randn(args.batch, d, device="cuda", generator=g) for _ in range(2)]

    def step(i):
        if rank == args.slow_rank and args.slow_ms > 0:
            t = time.perf_counter()
            while time.perf_counter() - t < args.slow_ms / 1e3:
                pass
        x = xs[i % len(xs)]
        loss = torch.nn.functional.mse_loss(model(x), x)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        if args.mode == "serial":
            for p in model.parameters():
                dist.all_reduce(p.grad)
                p.grad /= world
        opt.step()

    for i in range(3):  # warm-up, outside the ranges
        step(i)
    if not args.no_sync:
        torch.cuda.synchronize()
        dist.barrier()
    for i in range(args.steps):
        torch.cuda.nvtx.range_push("train_step")
        step(i)
        torch.cuda.nvtx.range_pop()
    if not args.no_sync:
        torch.cuda.synchronize()

    # Check: every rank holds the same parameters (rank 0's, broadcast, compared).
    # (FSDP's parameters are shards: gathered whole first.)
    full = [p.full_tensor() if hasattr(p, "full_tensor") else p for p in model.parameters()]
    flat = torch.cat([p.detach().reshape(-1) for p in full])
    ref = flat.clone()
    dist.broadcast(ref, 0)
    same = bool(torch.equal(flat, ref))
    dist.destroy_process_group()
    if not same:
        print(f"ddp_train: rank {rank}: parameters differ from rank 0's", file=sys.stderr)
        sys.exit(1)
    print(f"ddp_train: ok rank={rank} world={world} mode={args.mode} steps={args.steps} slow_rank={args.slow_rank}")


if __name__ == "__main__":
    main()
