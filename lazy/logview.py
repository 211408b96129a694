"""`lazy.log`: the backend-selection log, which is also callable as ln(x).

The issue asks for both `lazy.log.table()` (the log) and `lazy.log(x)`
(the natural logarithm, as `torch.log`/`np.log`). One object serves both:
calling it builds the elementwise log; everything else reads the
scheduler's log.
"""
from __future__ import annotations

from typing import Iterator

from scheduler.log import KernelRecord, log as _log


class LogView:
    def __call__(self, x: object):
        from .functions import log as natural_log
        return natural_log(x)

    def __getattr__(self, name: str):
        return getattr(_log, name)

    def __iter__(self) -> Iterator[KernelRecord]:
        return iter(_log)

    def __len__(self) -> int:
        return len(_log)

    def __getitem__(self, i):
        return _log[i]

    def __repr__(self) -> str:
        return _log.table()


log = LogView()
