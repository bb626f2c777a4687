"""DDP with the loom backend: a small MLP (float64) trained 20 steps on 2 and 4 processes ends with
the same parameters (1e-6 relative) as the same DDP run over Gloo and as one process training on
the whole batch; the same again with a DDP comm hook built on Work.get_future().
Usage: test_ddp.py [WORLD ...]   (default: 2 4)
"""
import os
import sys
from datetime import timedelta

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

STEPS, BATCH = 20, 16


def make_model(torch):
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.Tanh(), torch.nn.Linear(32, 32),
                               torch.nn.ReLU(), torch.nn.Linear(32, 4)).double()


def data(torch, step):
    g = torch.Generator().manual_seed(step)
    return torch.randn(BATCH, 8, generator=g).double(), torch.randn(BATCH, 4, generator=g).double()


def train(torch, model, shard, world, rank):
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
    per = BATCH // world
    for step in range(STEPS):
        x, y = data(torch, step)
        if shard:
            x, y = x[rank * per:(rank + 1) * per], y[rank * per:(rank + 1) * per]
        opt.zero_grad()
        torch.nn.functional.mse_loss(model(x), y).backward()
        opt.step()
    m = model.module if hasattr(model, "module") else model
    return [p.detach().clone() for p in m.parameters()]


def worker(rank, world, init):
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel as DDP
    import loom_torch  # noqa: F401

    dist.init_process_group("loom", init_method=init, rank=rank, world_size=world,
                            timeout=timedelta(seconds=120))
    gloo = dist.new_group(backend="gloo")
    single = train(torch, make_model(torch), False, 1, 0)
    runs = {
        "loom": train(torch, DDP(make_model(torch)), True, world, rank),
        "gloo": train(torch, DDP(make_model(torch), process_group=gloo), True, world, rank),
    }

    def hook(state, bucket):
        t = bucket.buffer().div_(world)
        return dist.all_reduce(t, async_op=True).get_future().then(lambda f: f.value()[0])

    hooked = DDP(make_model(torch))
    hooked.register_comm_hook(None, hook)
    runs["loom+hook"] = train(torch, hooked, True, world, rank)
    fails = []
    for name, params in runs.items():
        for i, (p, q) in enumerate(zip(params, single)):
            if not torch.allclose(p, q, rtol=1e-6, atol=1e-9):
                fails.append(f"{name}: parameter {i} differs from the 1-process run by "
                             f"{(p - q).abs().max().item():.3g}")
        for i, (p, q) in enumerate(zip(params, runs["gloo"])):
            if not torch.allclose(p, q, rtol=1e-6, atol=1e-9):
                fails.append(f"{name}: parameter {i} differs from the Gloo run")
    moved = max((p - q).abs().max().item()
                for p, q in zip(single, list(make_model(torch).parameters())))
    if moved < 1e-3:
        fails.append(f"training did not move the parameters ({moved})")
    dist.destroy_process_group()
    if fails:
        print("\n".join(fails))
        sys.exit(1)
    print(f"rank {rank}: DDP loom == gloo == 1 process after {STEPS} steps")


if __name__ == "__main__":
    harness.main(worker, [2, 4])
