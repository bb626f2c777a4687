"""Train a small model with DistributedDataParallel over loom.

    torchrun --nproc_per_node 4 examples/torch_ddp.py

(with loom_torch importable: PYTHONPATH=build/python from a build tree, or installed). torchrun
sets RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT; init_process_group("loom") bootstraps loom
through torch's TCP store, so no other port or id is needed.
"""
import os

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

import loom_torch  # noqa: F401  registers the "loom" backend


def main():
    dist.init_process_group("loom")  # env:// from torchrun
    rank, world = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(0)  # same initial weights everywhere (DDP also broadcasts them)
    model = DDP(torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(),
                                    torch.nn.Linear(64, 1)))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    g = torch.Generator().manual_seed(1234 + rank)  # each rank its own data
    w_true = torch.randn(16, 1, generator=torch.Generator().manual_seed(7))
    for step in range(50):
        x = torch.randn(32, 16, generator=g)
        loss = torch.nn.functional.mse_loss(model(x), x @ w_true)
        opt.zero_grad()
        loss.backward()  # gradients are all-reduced by loom, overlapped with backward
        opt.step()
        if step % 10 == 0 or step == 49:
            avg = loss.detach().clone()
            dist.all_reduce(avg, op=dist.ReduceOp.AVG)
            if rank == 0:
                print(f"step {step:2d}  mean loss over {world} ranks {avg.item():.4f}")
    # Every replica must hold the same parameters.
    flat = torch.cat([p.detach().flatten() for p in model.parameters()])
    lo, hi = flat.clone(), flat.clone()
    dist.all_reduce(lo, op=dist.ReduceOp.MIN)
    dist.all_reduce(hi, op=dist.ReduceOp.MAX)
    same = torch.equal(lo, hi)
    print(f"rank {rank}/{world} (local rank {os.environ.get('LOCAL_RANK', '?')}): "
          f"replicas {'identical' if same else 'DIFFER'}")
    dist.destroy_process_group()
    if not same:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
