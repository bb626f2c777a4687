"""loom backend for torch.distributed.

Importing this package registers the process-group backend ``"loom"``::

    import torch.distributed as dist
    import loom_torch  # noqa: F401  (registers "loom")
    dist.init_process_group("loom", init_method="env://")

CPU tensors only for now. See docs/torch.md.
"""
import inspect

import torch.distributed as _dist

from ._C import ProcessGroupLoom, create_process_group, loom_version  # noqa: F401

BACKEND_NAME = "loom"


def _register():
    if BACKEND_NAME.upper() in getattr(_dist.Backend, "_plugins", {}):
        return  # already registered (imported twice under different paths)
    params = inspect.signature(_dist.Backend.register_backend).parameters
    if "devices" in params:  # torch >= 2.1: say which devices the backend serves
        _dist.Backend.register_backend(BACKEND_NAME, create_process_group, devices=["cpu"])
    else:  # torch 1.13 / 2.0
        _dist.Backend.register_backend(BACKEND_NAME, create_process_group)


_register()
