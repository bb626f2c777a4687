"""Launches N copies of a worker function in fresh Python processes for the loom torch tests.

Each test script calls ``main(worker, world_sizes)``: without arguments it runs the worker in
``world`` processes per world size (file:// rendezvous in a temporary directory), kills them all
after a deadline and fails if any process failed; with ``--worker RANK WORLD INIT`` it is one of
those processes. Skips (exit 0 with a message) when torch or loom_torch cannot be imported.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time

SKIP = 0


def _importable():
    try:
        import torch.distributed  # noqa: F401
        import loom_torch  # noqa: F401
    except ImportError as e:  # torch absent or the extension not built
        print(f"SKIP: {e}")
        return False
    return True


def launch(script, world, extra_args=(), deadline_s=240, env=None, init=None):
    """Runs `script --worker r world init` for every rank; returns [(rc, output)]."""
    tmp = tempfile.mkdtemp(prefix="loom-torch-")
    init = init or f"file://{tmp}/rendezvous"
    procs = []
    for r in range(world):
        out = open(os.path.join(tmp, f"rank{r}.log"), "w+")
        cmd = [sys.executable, script, "--worker", str(r), str(world), init, *extra_args]
        procs.append((subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                       env=env or os.environ.copy()), out))
    end = time.monotonic() + deadline_s
    results = []
    for p, out in procs:
        try:
            p.wait(timeout=max(1, end - time.monotonic()))
        except subprocess.TimeoutExpired:
            for q, _ in procs:
                q.kill()
            p.wait()
        out.seek(0)
        results.append((p.returncode, out.read()))
        out.close()
    shutil.rmtree(tmp, ignore_errors=True)  # the logs are in `results`
    return results


def report(results, what):
    bad = [(r, rc, out) for r, (rc, out) in enumerate(results) if rc != 0]
    for r, rc, out in bad:
        print(f"--- {what}: rank {r} exited {rc} ---\n{out[-4000:]}")
    return not bad


def main(worker, world_sizes, deadline_s=240):
    if len(sys.argv) >= 5 and sys.argv[1] == "--worker":
        rank, world, init = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
        worker(rank, world, init, *sys.argv[5:])
        return
    if not _importable():
        sys.exit(SKIP)
    sizes = [int(s) for s in sys.argv[1:]] or world_sizes
    ok = True
    for world in sizes:
        t0 = time.monotonic()
        res = launch(os.path.abspath(sys.argv[0]), world, deadline_s=deadline_s)
        good = report(res, f"world {world}")
        print(f"world {world}: {'ok' if good else 'FAILED'} in {time.monotonic() - t0:.1f} s")
        ok = ok and good
    sys.exit(0 if ok else 1)
