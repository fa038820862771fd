"""A PyTorch training loop with the three mistakes new users make most,
and its fixed version (several changes at once, unlike the corpus pairs
in test/fixtures/corpus): batches in pageable memory copied with
`.cuda()`, `loss.item()` every step, everything on the legacy default
stream; fixed: pinned batches copied `non_blocking` on a side stream one
step ahead, the loss summed on the GPU and read once.

Three warm-up steps, then the loop, each step an NVTX range "train_step";
the backward pass is launched by
PyTorch's autograd thread inside it. Checks that the loss stayed finite.

Usage: python3 torch_train_loop.py [--fixed] [--steps 24] [--batch 4096] [--width 2048]
"""
import argparse
import sys

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fixed", action="store_true")
    ap.add_argument("--steps", type=int, default=24)
    ap.add_argument("--batch", type=int, default=4096)
    ap.add_argument("--width", type=int, default=2048)
    args = ap.parse_args()
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(25)
    d = args.width
    batches = [torch.randn(args.batch, d) for _ in range(4)]
    model = torch.nn.Sequential(
        torch.nn.Linear(d, d), torch.nn.ReLU(), torch.nn.Linear(d, d), torch.nn.ReLU(), torch.nn.Linear(d, d)
    ).cuda()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3)
    losses = []
    # The final check's kernels loaded before the loop (modules load lazily, on first use).
    torch.isfinite(torch.stack([torch.zeros((), device="cuda")])).all().item()
    if args.fixed:
        batches = [b.pin_memory() for b in batches]
        copy_stream = torch.cuda.Stream()
        with torch.cuda.stream(copy_stream):
            nxt = batches[0].cuda(non_blocking=True)
        total = torch.zeros((), device="cuda")
    else:
        total = 0.0
    for step in range(-3, args.steps):  # the first three: warm-up, the same work, every kernel loaded
        if step >= 0:
            torch.cuda.nvtx.range_push("train_step")
        if args.fixed:
            torch.cuda.current_stream().wait_stream(copy_stream)
            x = nxt
            x.record_stream(torch.cuda.current_stream())
            with torch.cuda.stream(copy_stream):
                nxt = batches[(step + 1) % len(batches)].cuda(non_blocking=True)
        else:
            x = batches[step % len(batches)].cuda()
        loss = torch.nn.functional.mse_loss(model(x), x)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.detach())
        total += loss.detach() if args.fixed else loss.item()
        if step >= 0:
            torch.cuda.nvtx.range_pop()
    torch.cuda.synchronize()
    first, last = losses[0].item(), losses[-1].item()
    if not (torch.isfinite(torch.stack(losses)).all().item() and 0 < last < 10):
        print(f"torch_train_loop: the loss went wrong ({first} -> {last})", file=sys.stderr)
        return 1
    print(f"torch_train_loop: ok fixed={args.fixed} steps={args.steps} mean loss {float(total) / args.steps:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
