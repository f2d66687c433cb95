"""A job scheduler for Django.

``from jobs import register`` (the decorator for Python tasks, jobs/pytasks/registry.py) and
``from jobs import current_run`` (what a running task asks to know whether it should
stop) are imported lazily: this package is imported before the apps are ready, so it
imports nothing itself.
"""

from __future__ import annotations

import importlib
from typing import Any

# Name -> the module that defines it.
_LAZY = {
    "register": "jobs.pytasks.registry",
    "current_run": "jobs.executors.running",
}

__all__ = list(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'jobs' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
