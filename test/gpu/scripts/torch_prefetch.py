"""A training-style loop on two PyTorch streams: the next batch is copied
to the GPU on a side stream (`.to("cuda", non_blocking=True)`) while the
current one is computed on the default stream, the classic prefetcher.
With one mistake: the batches live in pageable memory (a DataLoader
without pin_memory=True), so every "non-blocking" copy is staged through a
driver buffer, holds the host thread until it is done, and overlaps
nothing. Each step is an NVTX range "step" (torch.cuda.nvtx), with the
prefetch and the compute as ranges inside it.

  --batches pageable   the mistake (default)
  --batches pinned     the fix: the same batches in pinned memory

Checks part of the last step's result against the CPU.

Usage: python3 torch_prefetch.py [--batches pageable|pinned] [--steps 12] [--size 2048]
"""
import argparse
import sys

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batches", choices=("pageable", "pinned"), default="pageable")
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--size", type=int, default=2048)
    ap.add_argument("--count", type=int, default=4, help="distinct batches, reused round robin")
    args = ap.parse_args()
    # Full float32 matmuls (no TF32), so the CPU check is meaningful.
    torch.backends.cuda.matmul.allow_tf32 = False
    n = args.size
    torch.manual_seed(6)
    # Scaled so that values stay near 1 through the three products.
    batches = [torch.rand(4 * n, n) for _ in range(args.count)]
    if args.batches == "pinned":
        batches = [b.pin_memory() for b in batches]
    weight = (torch.rand(n, n) * 2 / n).cuda()
    copy_stream = torch.cuda.Stream()
    compute_stream = torch.cuda.current_stream()

    with torch.cuda.stream(copy_stream):
        nxt = batches[0].to("cuda", non_blocking=True)
    out = None
    for step in range(args.steps):
        torch.cuda.nvtx.range_push("step")
        compute_stream.wait_stream(copy_stream)
        cur = nxt
        cur.record_stream(compute_stream)
        torch.cuda.nvtx.range_push("prefetch")
        with torch.cuda.stream(copy_stream):
            nxt = batches[(step + 1) % args.count].to("cuda", non_blocking=True)
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_push("compute")
        h = torch.relu(cur @ weight)
        h = torch.relu(h @ weight)
        out = h @ weight
        torch.cuda.nvtx.range_pop()
        torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()

    # Rows are independent: the first 64 are checked on the CPU.
    last = batches[(args.steps - 1) % args.count][:64]
    w = weight.cpu()
    want = torch.relu(torch.relu(last @ w) @ w) @ w
    if not torch.allclose(out[:64].cpu(), want, rtol=1e-3, atol=1e-4):
        print("torch_prefetch: result is wrong", file=sys.stderr)
        return 1
    print(f"torch_prefetch: ok batches={args.batches} steps={args.steps} size={n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
