"""On-disk cache of compiled CUDA images (cubin or PTX); it fails soft, always.

NVRTC costs ~20-50 ms per kernel, paid again by every new process; reading
a cubin costs microseconds. The key is a SHA-256 of everything that changes
the image: the full source (the prelude included), the NVRTC options, the
target architecture and the NVRTC version. Files carry a magic header and
a SHA-256 of the payload and are written through a temporary file and an
atomic rename; any failure (unwritable directory, corrupt or truncated file,
a race) only means "not cached".

LAZY_CACHE_DIR sets the directory (default ~/.cache/lazyrt/cuda; files are
named cuda-*.img, so sharing the CPU backend's directory is fine);
LAZY_DISK_CACHE=0 turns the cache off.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

MAGIC = b"LAZYRT-CUDA-IMG1\n"


def _directory() -> Path | None:
    if os.environ.get("LAZY_DISK_CACHE", "1").strip().lower() in ("0", "off", "false", "no"):
        return None
    d = os.environ.get("LAZY_CACHE_DIR")
    return Path(d) if d else Path.home() / ".cache" / "lazyrt" / "cuda"


def key(*parts: object) -> str:
    h = hashlib.sha256()
    for p in parts:
        h.update(repr(p).encode() + b"\0")
    return h.hexdigest()[:40]


def load(k: str) -> bytes | None:
    d = _directory()
    if d is None:
        return None
    try:
        data = (d / f"cuda-{k}.img").read_bytes()
    except OSError:
        return None
    head = len(MAGIC) + 64
    if not data.startswith(MAGIC) or len(data) < head:
        return None
    payload = data[head:]
    if hashlib.sha256(payload).hexdigest().encode() != data[len(MAGIC):head]:
        return None
    return payload


def store(k: str, payload: bytes) -> bool:
    d = _directory()
    if d is None:
        return False
    try:
        d.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp-cuda-")
        with os.fdopen(fd, "wb") as f:
            f.write(MAGIC + hashlib.sha256(payload).hexdigest().encode() + payload)
        os.replace(tmp, d / f"cuda-{k}.img")
        return True
    except OSError:
        try:
            os.unlink(tmp)  # type: ignore[possibly-undefined]
        except (OSError, UnboundLocalError, NameError):
            pass
        return False
