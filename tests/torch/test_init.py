"""init_process_group("loom") through each rendezvous: tcp://host:port and env:// (MASTER_ADDR and
MASTER_PORT); file:// is what the other torch tests use. Two processes each; a broadcast and an
all_reduce must agree.
"""
import os
import socket
import sys
import time
from datetime import timedelta

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def worker(rank, world, init):
    import torch
    import torch.distributed as dist
    import loom_torch  # noqa: F401

    if init == "env://":
        dist.init_process_group("loom", timeout=timedelta(seconds=60))  # RANK, WORLD_SIZE too
    else:
        dist.init_process_group("loom", init_method=init, rank=rank, world_size=world,
                                timeout=timedelta(seconds=60))
    assert dist.get_backend() == "loom", dist.get_backend()
    x = torch.full((5,), float(rank + 1))
    dist.all_reduce(x)
    y = torch.arange(4) if rank == 0 else torch.zeros(4, dtype=torch.int64)
    dist.broadcast(y, 0)
    want = world * (world + 1) / 2
    dist.destroy_process_group()
    if not (torch.all(x == want) and torch.equal(y, torch.arange(4))):
        print(f"wrong results {x} {y}")
        sys.exit(1)
    print(f"rank {rank}: {init} ok")


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
        sys.exit(0)
    if not harness._importable():
        sys.exit(harness.SKIP)
    ok = True
    for how in ("tcp", "env"):
        t0 = time.monotonic()
        port = free_port()
        env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), WORLD_SIZE="2")
        if how == "tcp":
            res = harness.launch(os.path.abspath(__file__), 2, init=f"tcp://127.0.0.1:{port}",
                                 deadline_s=120, env=env)
        else:  # env:// reads RANK from the environment: one launch per rank
            res = []
            import subprocess
            procs = [subprocess.Popen([sys.executable, os.path.abspath(__file__), "--worker",
                                       str(r), "2", "env://"], env=dict(env, RANK=str(r)),
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                     for r in range(2)]
            for p in procs:
                try:
                    out, _ = p.communicate(timeout=120)
                except subprocess.TimeoutExpired:
                    p.kill()
                    out, _ = p.communicate()
                res.append((p.returncode, out))
        good = harness.report(res, how)
        print(f"{how}://: {'ok' if good else 'FAILED'} in {time.monotonic() - t0:.1f} s")
        ok = ok and good
    sys.exit(0 if ok else 1)
