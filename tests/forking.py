"""Run a function in a child process created by ``os.fork`` and bring back its result."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from typing import Any

import pytest

needs_fork = pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")


def in_fork_child(fn: Callable[[], Any]) -> Any:
    """What ``fn()`` returns in a child created by ``os.fork`` (a JSON value), or the string
    ``"Type: message"`` of the exception it raises, wrapped as ``{"error": ...}``."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # child: report, then leave without running the parent's cleanup
        try:
            os.close(read)
            try:
                result = fn()
            except Exception as error:
                result = {"error": f"{type(error).__name__}: {error}"}
            os.write(write, json.dumps(result).encode())
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        data = pipe.read()
    os.waitpid(pid, 0)
    return json.loads(data)
