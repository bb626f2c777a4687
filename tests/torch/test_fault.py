"""A SIGKILLed rank: the survivors' next collective raises a RuntimeError that names the dead
rank, well within the group timeout; destroying the group afterwards does not hang.
Usage: test_fault.py [WORLD]   (default: 3; the last rank dies)
"""
import os
import signal
import sys
import time
from datetime import timedelta

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import harness  # noqa: E402

TIMEOUT_S = 30


def worker(rank, world, init):
    import torch
    import torch.distributed as dist
    import loom_torch  # noqa: F401

    dist.init_process_group("loom", init_method=init, rank=rank, world_size=world,
                            timeout=timedelta(seconds=TIMEOUT_S))
    x = torch.ones(1 << 16)
    dist.all_reduce(x)
    dist.barrier()
    victim = world - 1
    if rank == victim:
        os.kill(os.getpid(), signal.SIGKILL)
    time.sleep(0.5)
    t0 = time.monotonic()
    try:
        for _ in range(3):
            dist.all_reduce(x)
        print("no error after the peer died")
        sys.exit(1)
    except RuntimeError as e:
        took = time.monotonic() - t0
        print(f"rank {rank}: RuntimeError after {took:.1f} s: {e}")
        if f"rank {victim}" not in str(e):
            print("the error does not name the dead rank")
            sys.exit(1)
        if took > TIMEOUT_S + 5:
            print("the error came after the timeout")
            sys.exit(1)
    t0 = time.monotonic()
    dist.destroy_process_group()
    print(f"rank {rank}: destroy_process_group took {time.monotonic() - t0:.1f} s")


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "--worker":
        worker(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
        sys.exit(0)
    if not harness._importable():
        sys.exit(harness.SKIP)
    world = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    t0 = time.monotonic()
    res = harness.launch(os.path.abspath(__file__), world, deadline_s=TIMEOUT_S * 3)
    ok = res[-1][0] == -signal.SIGKILL and harness.report(res[:-1], "survivor")
    for r, (rc, out) in enumerate(res[:-1]):
        print(out.strip().splitlines()[-2:] if out.strip() else f"rank {r}: no output")
    print(f"{'ok' if ok else 'FAILED'} in {time.monotonic() - t0:.1f} s")
    sys.exit(0 if ok else 1)
