"""Every c10d operation of the loom backend against the Gloo backend on the same random inputs.

Each process joins a loom default group and a Gloo group over the same ranks, runs every
operation on both with identical inputs (in place where torch allows), and compares. Where Gloo
in torch 1.13 lacks the operation (reduce_scatter, *_base forms, list all_to_all), the reference is
computed locally from every rank's inputs, which each process regenerates from the same seeds.
Usage: test_ops.py [WORLD ...]   (default: 2 3 4)
"""
import os
import sys
from datetime import timedelta

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

SIZES = (1, 7, 1000003)


def worker(rank, world, init):
    import torch
    import torch.distributed as dist
    import loom_torch  # noqa: F401  registers "loom"
    import warnings
    warnings.filterwarnings("ignore")

    dist.init_process_group("loom", init_method=init, rank=rank, world_size=world,
                            timeout=timedelta(seconds=120))
    gloo = dist.new_group(backend="gloo")
    fails = []

    def gen(r, dtype, n, salt):
        g = torch.Generator().manual_seed(1000 * r + 17 * salt + n)
        if dtype == torch.bool:
            return torch.randint(0, 2, (n,), generator=g).bool()
        if dtype.is_floating_point:
            return torch.randn(n, generator=g).to(dtype)
        lo, hi = (0, 9) if dtype == torch.uint8 else (-40, 40)
        return torch.randint(lo, hi, (n,), generator=g).to(dtype)

    def same(name, got, want):
        if got.dtype != want.dtype or got.shape != want.shape:
            fails.append(f"{name}: got {got.dtype}{tuple(got.shape)} want {want.dtype}"
                         f"{tuple(want.shape)}")
            return
        if got.dtype in (torch.float16, torch.bfloat16):
            ok = torch.allclose(got.float(), want.float(), rtol=2e-2, atol=2e-2)
        elif got.dtype.is_floating_point:
            ok = torch.allclose(got, want, rtol=1e-5, atol=1e-5)
        else:
            ok = torch.equal(got, want)
        if not ok:
            fails.append(f"{name}: differs (first: {got.flatten()[:4]} vs {want.flatten()[:4]})")

    def both(fn, x):
        a, b = x.clone(), x.clone()
        fn(a, None)
        fn(b, gloo)
        return a, b

    ops = [dist.ReduceOp.SUM, dist.ReduceOp.PRODUCT, dist.ReduceOp.MIN, dist.ReduceOp.MAX]
    for dtype in (torch.float32, torch.float64, torch.int32, torch.int64, torch.uint8):
        for n in SIZES:
            if n > 1000 and dtype not in (torch.float32, torch.int64):
                continue
            tag = f"{dtype} n={n}"
            x = gen(rank, dtype, n, 1)
            for op in ops:
                if op == dist.ReduceOp.PRODUCT and n > 1000:
                    continue
                xo = x.clamp(-1.5, 1.5) if op == dist.ReduceOp.PRODUCT else x
                a, b = both(lambda t, g: dist.all_reduce(t, op=op, group=g), xo)
                same(f"all_reduce {op} {tag}", a, b)
            if dtype.is_floating_point:
                a = x.clone()
                dist.all_reduce(a, op=dist.ReduceOp.AVG)
                b = x.clone()
                dist.all_reduce(b, group=gloo)
                same(f"all_reduce AVG {tag}", a, b / world)
            root = world - 1
            a, b = both(lambda t, g: dist.broadcast(t, root, group=g), x)
            same(f"broadcast {tag}", a, b)
            root = 1 % world
            a, b = both(lambda t, g: dist.reduce(t, root, op=dist.ReduceOp.MAX, group=g), x)
            if rank == root:
                same(f"reduce MAX {tag}", a, b)
            la = [torch.empty_like(x) for _ in range(world)]
            lb = [torch.empty_like(x) for _ in range(world)]
            dist.all_gather(la, x)
            dist.all_gather(lb, x, group=gloo)
            for i in range(world):
                same(f"all_gather[{i}] {tag}", la[i], lb[i])
            out = torch.empty(world * n, dtype=dtype)
            dist.all_gather_into_tensor(out, x)
            same(f"all_gather_into_tensor {tag}", out, torch.cat(lb))
            inplace = torch.empty(world * n, dtype=dtype)
            inplace[rank * n:(rank + 1) * n] = x
            dist.all_gather_into_tensor(inplace, inplace[rank * n:(rank + 1) * n])
            same(f"all_gather_into_tensor in place {tag}", inplace, torch.cat(lb))
            ga = [torch.empty_like(x) for _ in range(world)] if rank == 0 else None
            gb = [torch.empty_like(x) for _ in range(world)] if rank == 0 else None
            dist.gather(x, ga, dst=0)
            dist.gather(x, gb, dst=0, group=gloo)
            if rank == 0:
                for i in range(world):
                    same(f"gather[{i}] {tag}", ga[i], gb[i])
            src = world - 1
            parts = [gen(src, dtype, n, 10 + i) for i in range(world)] if rank == src else None
            sa, sb = torch.empty_like(x), torch.empty_like(x)
            dist.scatter(sa, parts, src=src)
            dist.scatter(sb, parts, src=src, group=gloo)
            same(f"scatter {tag}", sa, sb)
            # reduce_scatter: reference = Gloo all_reduce of the concatenation, my block.
            if dtype != torch.uint8:
                ins = [gen(rank, dtype, n, 20 + i) for i in range(world)]
                ref = torch.cat(ins)
                dist.all_reduce(ref, group=gloo)
                ref = ref[rank * n:(rank + 1) * n]
                o = torch.empty_like(x)
                dist.reduce_scatter(o, ins)
                same(f"reduce_scatter {tag}", o, ref)
                o = torch.empty_like(x)
                dist.reduce_scatter_tensor(o, torch.cat(ins))
                same(f"reduce_scatter_tensor {tag}", o, ref)
                flat = torch.cat(ins)
                dist.reduce_scatter_tensor(flat[rank * n:(rank + 1) * n], flat)
                same(f"reduce_scatter_tensor in place {tag}", flat[rank * n:(rank + 1) * n], ref)
            # all_to_all_single, even and uneven splits (rows of 3 elements).
            rows = max(1, n // 1000)
            inp = gen(rank, dtype, world * rows * 3, 30).view(world * rows, 3)
            a, b = torch.empty_like(inp), torch.empty_like(inp)
            dist.all_to_all_single(a, inp)
            dist.all_to_all_single(b, inp, group=gloo)
            same(f"all_to_all_single even {tag}", a, b)
            split_in = [(rank + 2 * j) % 3 * rows for j in range(world)]
            split_out = [(j + 2 * rank) % 3 * rows for j in range(world)]
            inp = gen(rank, dtype, sum(split_in) * 3, 31).view(-1, 3)
            a = torch.empty(sum(split_out), 3, dtype=dtype)
            b = torch.empty_like(a)
            dist.all_to_all_single(a, inp, split_out, split_in)
            dist.all_to_all_single(b, inp, split_out, split_in, group=gloo)
            same(f"all_to_all_single uneven {tag}", a, b)
            # all_to_all (lists): reference from every rank's regenerated inputs.
            ins = [gen(rank, dtype, (rank + j) % 3 + 1, 40 + j) for j in range(world)]
            outs = [torch.empty((j + rank) % 3 + 1, dtype=dtype) for j in range(world)]
            dist.all_to_all(outs, ins)
            for j in range(world):
                same(f"all_to_all[{j}] {tag}", outs[j], gen(j, dtype, (j + rank) % 3 + 1,
                                                           40 + rank))
            # send/recv around the ring.
            if world > 1:
                to, frm = (rank + 1) % world, (rank - 1) % world
                got = torch.empty_like(x)
                if rank % 2 == 0:
                    dist.send(x, to)
                    dist.recv(got, frm)
                else:
                    dist.recv(got, frm)
                    dist.send(x, to)
                same(f"send/recv {tag}", got, gen(frm, dtype, n, 1))

    # Coalesced forms, several dtypes at once.
    ts = [gen(rank, torch.float64, 5, 50), gen(rank, torch.float64, 3, 51).view(3, 1).t(),
          gen(rank, torch.float64, 1000003, 52)]
    refs = [t.clone() for t in ts]
    dist.all_reduce_coalesced(ts)
    for i, r in enumerate(refs):
        dist.all_reduce(r, group=gloo)
        same(f"all_reduce_coalesced[{i}]", ts[i], r)
    ts = [gen(rank, torch.int64, 5, 50), gen(rank, torch.int64, 3, 51).view(1, 3),
          gen(rank, torch.int64, 100003, 52)]
    outa = [[torch.empty_like(t) for t in ts] for _ in range(world)]
    outb = [[torch.empty_like(t) for t in ts] for _ in range(world)]
    dist.all_gather_coalesced(outa, ts)
    dist.all_gather_coalesced(outb, ts, group=gloo)
    for r in range(world):
        for i in range(len(ts)):
            same(f"all_gather_coalesced[{r}][{i}]", outa[r][i], outb[r][i])

    # Half precision, bool and non-contiguous tensors: reference from regenerated inputs.
    for dtype in (torch.float16, torch.bfloat16):
        x = gen(rank, dtype, 1001, 60)
        dist.all_reduce(x)
        ref = sum(gen(r, dtype, 1001, 60).float() for r in range(world)).to(dtype)
        same(f"all_reduce SUM {dtype}", x, ref)
    xb = gen(rank, torch.bool, 33, 61)
    y = xb.clone()
    dist.all_reduce(y)  # SUM of bool = logical or
    ref = torch.zeros(33, dtype=torch.bool)
    for r in range(world):
        ref |= gen(r, torch.bool, 33, 61)
    same("all_reduce SUM bool", y, ref)
    y = xb.clone()
    dist.all_reduce(y, op=dist.ReduceOp.MIN)
    ref = torch.ones(33, dtype=torch.bool)
    for r in range(world):
        ref &= gen(r, torch.bool, 33, 61)
    same("all_reduce MIN bool", y, ref)
    m = gen(rank, torch.float32, 35, 62).view(5, 7)
    t = m.t()  # not contiguous
    dist.all_reduce(t)
    same("all_reduce non-contiguous", m,
         sum(gen(r, torch.float32, 35, 62) for r in range(world)).view(5, 7))
    c = gen(rank, torch.complex64, 9, 63)
    dist.all_reduce(c)
    same("all_reduce complex64",
         torch.view_as_real(c), torch.view_as_real(sum(gen(r, torch.complex64, 9, 63)
                                                       for r in range(world))))
    col = torch.zeros(4, 6, dtype=torch.int64)
    if rank == 0:
        col[:, 2] = torch.arange(4)
    dist.broadcast(col[:, 2], 0)
    same("broadcast non-contiguous", col[:, 2], torch.arange(4))

    # Async: Work.wait / is_completed / get_future.
    x = gen(rank, torch.float32, 100, 70)
    ref = x.clone()
    dist.all_reduce(ref, group=gloo)
    work = dist.all_reduce(x, async_op=True)
    fut = work.get_future()
    work.wait(timeout=timedelta(seconds=60))
    if not work.is_completed() or not work.is_success():
        fails.append("Work not completed after wait()")
    same("future value", fut.wait()[0], ref)
    chained = dist.all_reduce(gen(rank, torch.float32, 100, 70), async_op=True).get_future().then(
        lambda f: f.value()[0] * 2)
    same("future then", chained.wait(), ref * 2)
    dist.barrier()

    # wait(timeout) on a receive whose sender has not sent yet raises, then completes.
    if world > 1 and rank < 2:
        buf = torch.zeros(16)
        if rank == 0:
            w = dist.irecv(buf, 1)
            try:
                w.wait(timeout=timedelta(milliseconds=300))
                fails.append("wait(timeout) returned before the send")
            except RuntimeError as e:
                if "not complete" not in str(e):
                    fails.append(f"wait(timeout) error: {e}")
        dist.barrier(group=gloo)
        if rank == 1:
            dist.send(torch.full((16,), 3.0), 0)
        else:
            w.wait()
            same("recv after wait(timeout)", buf, torch.full((16,), 3.0))
    else:
        dist.barrier(group=gloo)

    # A subgroup of the even ranks (a new loom communicator).
    evens = list(range(0, world, 2))
    sub = dist.new_group(ranks=evens, backend="loom")
    if rank in evens:
        x = gen(rank, torch.int64, 11, 80)
        dist.all_reduce(x, group=sub)
        same("subgroup all_reduce", x, sum(gen(r, torch.int64, 11, 80) for r in evens))
        y = torch.zeros(3) if rank != evens[-1] else torch.ones(3)
        dist.broadcast(y, evens[-1], group=sub)
        same("subgroup broadcast", y, torch.ones(3))

    # Clear errors.
    for what, fn, needle in [
            ("BAND", lambda: dist.all_reduce(torch.ones(3, dtype=torch.int32),
                                             op=dist.ReduceOp.BAND), "BAND"),
            ("int16", lambda: dist.all_reduce(torch.ones(3, dtype=torch.int16)), "Short"),
            ("meta tensor", lambda: dist.all_reduce(torch.ones(3, device="meta")), ""),
            ("bad root", lambda: dist.broadcast(torch.ones(3), world + 3), ""),
            ("uneven sizes", lambda: dist.all_to_all_single(torch.empty(5), torch.empty(4)),
             "rows")]:
        try:
            fn()
            fails.append(f"{what}: no error")
        except Exception as e:  # noqa: BLE001  (RuntimeError; NotImplementedError for meta)
            if needle not in str(e):
                fails.append(f"{what}: error does not mention {needle!r}: {str(e)[:200]}")
    dist.barrier()
    dist.destroy_process_group()
    if fails:
        print(f"rank {rank}: {len(fails)} failures:\n" + "\n".join(fails[:30]))
        sys.exit(1)
    print(f"rank {rank}: all checks passed")


if __name__ == "__main__":
    harness.main(worker, [2, 3, 4])
