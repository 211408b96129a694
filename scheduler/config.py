"""Runtime settings: environment variables, overridable from code.

Read when used, never at import, so tests and users can change them at
any time (`lazy.config.max_pending_nodes = 10_000`). The settings checked
on every op or every sync, LAZY_MAX_PENDING, LAZY_MAX_KERNEL_OPS and LAZY_LOG, are read once at
first use (an environment lookup is several Python calls, ~10 us each time
once a big array operation has evicted the caches); setting them to None
from code reads the variable again.
"""
from __future__ import annotations

import os
from dataclasses import dataclass


def _env_int(name: str, default: int) -> int:
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


@dataclass
class Config:
    _max_pending_nodes: int | None = None
    _max_kernel_ops: int | None = None
    _log_to_stderr: bool | None = None

    @property
    def max_pending_nodes(self) -> int:
        """Pending nodes after which building one more op syncs (LAZY_MAX_PENDING).

        Checked on every op, so the variable is read once, at first use.
        """
        if self._max_pending_nodes is None:
            self._max_pending_nodes = _env_int("LAZY_MAX_PENDING", 100_000)
        return self._max_pending_nodes

    @max_pending_nodes.setter
    def max_pending_nodes(self, n: int | None) -> None:
        self._max_pending_nodes = n

    @property
    def max_kernel_ops(self) -> int:
        """Ops one fused kernel may hold; longer chains are cut (LAZY_MAX_KERNEL_OPS).

        Checked for every fused node and part of the schedule cache's key,
        so the variable is read once, at first use.
        """
        if self._max_kernel_ops is None:
            n = _env_int("LAZY_MAX_KERNEL_OPS", 128)
            self._max_kernel_ops = n if n >= 1 else 128
        return self._max_kernel_ops

    @max_kernel_ops.setter
    def max_kernel_ops(self, n: int | None) -> None:
        if n is not None and (not isinstance(n, int) or n < 1):
            raise ValueError(f"max_kernel_ops must be an int of at least 1 (or None: "
                             f"LAZY_MAX_KERNEL_OPS, default 128), got {n!r}")
        self._max_kernel_ops = n

    @property
    def log_to_stderr(self) -> bool:
        """Print each log record to stderr (LAZY_LOG=1): read once, at first use."""
        if self._log_to_stderr is None:
            self._log_to_stderr = os.environ.get("LAZY_LOG", "") not in ("", "0")
        return self._log_to_stderr

    @log_to_stderr.setter
    def log_to_stderr(self, on: bool | None) -> None:
        self._log_to_stderr = on

    @property
    def implicit_sync(self) -> str:
        """'allow' (default), 'warn' or 'error' (LAZY_IMPLICIT_SYNC)."""
        return os.environ.get("LAZY_IMPLICIT_SYNC", "allow").lower()

    @property
    def small_work(self) -> bool:
        """Interpret not-yet-compiled tiny kernels while cheaper (LAZY_SMALL_WORK=1)."""
        return os.environ.get("LAZY_SMALL_WORK", "") not in ("", "0")

    @property
    def fallback(self) -> str:
        """'allow' (default) or 'error' (LAZY_FALLBACK)."""
        return os.environ.get("LAZY_FALLBACK", "allow").lower()


config = Config()
