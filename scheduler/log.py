"""The backend-selection log: what ran, where, why, and how long it took.

A bounded, thread-safe, in-memory record exposed as `lazy.log`. Iterating
it yields kernel records; `syncs` holds one record per sync. Each record
also goes to the `logging` logger "lazy", and to stderr when LAZY_LOG=1.
"""
from __future__ import annotations

import json
import logging
import sys
import threading
from collections import deque
from dataclasses import asdict, dataclass, field
from typing import Iterator

from .config import config

logger = logging.getLogger("lazy")


@dataclass(frozen=True)
class KernelRecord:
    sync_id: int
    cause: str        # why the sync happened ("sync()", "implicit: repr", ...)
    where: str        # user file:line of the sync
    kernel: str       # kernel name
    ops: tuple[str, ...]  # user ops covered, "op@file:line"
    device: str
    backend: str      # "llvm", "blas", "numpy", "cuda", ...
    reason: str       # why this backend
    cache: str        # "hit", "miss (what was new)", "disk" or "-" (nothing compiled)
    compile_ms: float
    run_ms: float
    nbytes: int       # bytes read and written

    def line(self) -> str:
        return (f"[lazy] sync {self.sync_id} {self.kernel} on {self.device}/{self.backend} "
                f"({self.reason}); cache {self.cache}; compile {self.compile_ms:.2f} ms, "
                f"run {self.run_ms:.2f} ms, {self.nbytes} B; ops {', '.join(self.ops)}")


@dataclass(frozen=True)
class SyncRecord:
    id: int
    cause: str
    where: str
    nodes: int        # pending nodes scheduled
    kernels: int
    ms: float
    merged: int = 0   # duplicate nodes merged
    folded: int = 0   # nodes folded to constants
    schedule: str = "miss"  # "hit": the plan came from the schedule cache
    rewritten: int = 0  # graph rewrites (the softmax idiom, docs/fusion.md)

    def line(self) -> str:
        rw = f", {self.rewritten} rewritten" if self.rewritten else ""
        return (f"[lazy] sync {self.id} ({self.cause}) at {self.where}: {self.nodes} nodes, "
                f"{self.merged} merged, {self.folded} folded{rw} -> {self.kernels} kernels "
                f"in {self.ms:.2f} ms (schedule {self.schedule})")


@dataclass
class Counters:
    syncs: int = 0
    kernels: int = 0
    cache_hits: int = 0
    cache_misses: int = 0
    implicit_syncs: int = 0
    auto_syncs: int = 0
    schedule_hits: int = 0
    fallbacks: int = 0
    transfers: int = 0
    transfer_bytes: int = 0

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class Log:
    maxlen: int = 10_000
    _kernels: deque = field(default_factory=deque)
    _syncs: deque = field(default_factory=deque)
    counters: Counters = field(default_factory=Counters)
    notes: list[str] = field(default_factory=list)  # one-off findings: the default device
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _next_sync: int = 1

    def new_sync_id(self) -> int:
        with self._lock:
            self._next_sync += 1
            return self._next_sync - 1

    def add_kernel(self, rec: KernelRecord) -> None:
        with self._lock:
            self._kernels.append(rec)
            while len(self._kernels) > self.maxlen:
                self._kernels.popleft()
            c = self.counters
            c.kernels += 1
            c.cache_hits += rec.cache == "hit"
            c.cache_misses += rec.cache.startswith(("miss", "disk"))
            c.fallbacks += rec.reason.startswith("fallback")
            if rec.backend == "copy":
                c.transfers += 1
                c.transfer_bytes += rec.nbytes
        self._emit(rec)

    def add_sync(self, rec: SyncRecord) -> None:
        with self._lock:
            self._syncs.append(rec)
            while len(self._syncs) > self.maxlen:
                self._syncs.popleft()
            self.counters.syncs += 1
            self.counters.implicit_syncs += rec.cause.startswith("implicit")
            self.counters.auto_syncs += rec.cause.startswith("auto")
            self.counters.schedule_hits += rec.schedule == "hit"
        self._emit(rec)

    def note(self, text: str) -> None:
        """Record a one-off finding (such as which device is the default, and
        why): kept and printed the first time only, however often it is found."""
        with self._lock:
            if text in self.notes:
                return
            self.notes.append(text)
        self._emit(f"[lazy] {text}")

    def _emit(self, rec: KernelRecord | SyncRecord | str) -> None:
        """To the "lazy" logger and LAZY_LOG's stderr; the line is formatted
        only when one of them takes it (a sync's own cost, on every sync)."""
        to_logger = logger.isEnabledFor(logging.INFO)
        to_stderr = config.log_to_stderr
        if not (to_logger or to_stderr):
            return
        line = rec if isinstance(rec, str) else rec.line()
        if to_logger:
            logger.info(line)
        if to_stderr:
            print(line, file=sys.stderr)

    # -- reading ---------------------------------------------------------
    def __iter__(self) -> Iterator[KernelRecord]:
        with self._lock:
            return iter(list(self._kernels))

    def __len__(self) -> int:
        return len(self._kernels)

    def __getitem__(self, i):
        with self._lock:
            return list(self._kernels)[i]

    @property
    def syncs(self) -> list[SyncRecord]:
        with self._lock:
            return list(self._syncs)

    def clear(self) -> None:
        with self._lock:
            self._kernels.clear()
            self._syncs.clear()
            self.counters = Counters()

    def to_json(self) -> str:
        with self._lock:
            return json.dumps({
                "kernels": [asdict(k) for k in self._kernels],
                "syncs": [asdict(s) for s in self._syncs],
                "counters": self.counters.as_dict(),
                "notes": list(self.notes),
            }, indent=1)

    def table(self, last: int | None = None) -> str:
        """A readable text table of kernel records (the last `last` ones)."""
        rows = list(self)[-last:] if last else list(self)
        head = ("sync", "cause", "where", "kernel", "backend", "reason", "cache",
                "compile ms", "run ms", "MB", "ops")
        body = [(str(r.sync_id), r.cause, r.where, r.kernel, f"{r.device}/{r.backend}",
                 r.reason, r.cache, f"{r.compile_ms:.2f}", f"{r.run_ms:.2f}",
                 f"{r.nbytes / 1e6:.1f}", _ops_summary(r.ops)) for r in rows]
        widths = [max(len(x) for x in col) for col in zip(head, *body)]
        lines = [f"note: {n}" for n in self.notes]
        lines += ["  ".join(x.ljust(w) for x, w in zip(row, widths)).rstrip()
                  for row in [head, tuple("-" * w for w in widths), *body]]
        c = self.counters
        lines.append(f"{c.syncs} syncs ({c.implicit_syncs} implicit, {c.auto_syncs} auto), "
                     f"{c.kernels} kernels, cache {c.cache_hits} hits / {c.cache_misses} misses, "
                     f"{c.fallbacks} fallbacks, {c.transfers} transfers "
                     f"({c.transfer_bytes / 1e6:.1f} MB)")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.table()


def _ops_summary(ops: tuple[str, ...], limit: int = 6) -> str:
    names = [o.split("@")[0] for o in ops]
    text = " ".join(names[:limit])
    return text + (f" +{len(names) - limit}" if len(names) > limit else "")


log = Log()
