"""On-disk cache of compiled kernel objects; it fails soft, always.

Compiling a kernel costs 30-300 ms (LLVM's optimizer and instruction
selection), paid again by every new process; loading its object file
costs well under a millisecond. Entries are keyed by everything that can
change the machine code: the kernel's structure, this backend's source,
llvmlite/LLVM versions, and the host CPU name and features.

Any failure (unwritable or missing directory, a truncated, corrupt or
foreign file, a full disk, a race with another process) means "not cached":
a run never fails because of the cache, and the log says what happened:
`note()` gives the problem since it was last asked (the cache off, a file
that failed its check, a write that failed), which the JIT appends to the
cache column of the kernel it compiled (`cache miss (new structure; disk
cache: ...)`). Files carry a magic header and a SHA-256 of their key and
payload and are written via a temporary file and an atomic rename; a file
that fails the check is ignored and replaced.

LAZY_CACHE_DIR sets the directory (default ~/.cache/lazyrt/llvm);
LAZY_DISK_CACHE=0 turns the cache off.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

MAGIC = b"LAZYRT-LLVM-OBJ2\n"


def _source_hash() -> str:
    """Hash of the code generator, so a code change invalidates: this package
    and `scheduler`, whose op table (Philox constants, primitives), kernel IR
    and dtype rules the generated code depends on."""
    h = hashlib.sha256()
    here = Path(__file__).parent
    for d in (here, here.parent / "scheduler"):
        for name in sorted(p.name for p in d.glob("*.py")):
            try:
                h.update(f"{d.name}/{name}".encode() + (d / name).read_bytes())
            except OSError:
                h.update(name.encode())
    return h.hexdigest()


def _digest(key: str, payload: bytes) -> bytes:
    """SHA-256 of the key and the object: an intact file of another key (copied
    or renamed into place) fails the check as a corrupt one does."""
    return hashlib.sha256(key.encode() + b"\0" + payload).digest()


class DiskCache:
    def __init__(self, directory: str | os.PathLike | None, salt: str):
        self.salt = salt + _source_hash()
        self.status = "on"
        self.dir: Path | None = None
        self._note = ""
        if os.environ.get("LAZY_DISK_CACHE", "1").strip().lower() in ("0", "off", "false", "no"):
            self.status = self._note = "off (LAZY_DISK_CACHE=0)"
            return
        if directory is None:
            directory = os.environ.get("LAZY_CACHE_DIR") or \
                Path.home() / ".cache" / "lazyrt" / "llvm"
        try:
            self.dir = Path(directory)
            self.dir.mkdir(parents=True, exist_ok=True)
        except Exception as e:  # noqa: BLE001 - fail soft
            self.dir = None
            self.status = self._note = f"off ({type(e).__name__}: {e})"

    def note(self) -> str:
        """What went wrong since the last call ("" if nothing), for the log."""
        note, self._note = self._note, ""
        return f"disk cache: {note}" if note else ""

    def key(self, structural_key: str) -> str:
        return hashlib.sha256((self.salt + "\0" + structural_key).encode()).hexdigest()[:40]

    def load(self, key: str) -> bytes | None:
        if self.dir is None:
            return None
        try:
            data = (self.dir / f"{key}.o").read_bytes()
        except Exception:  # noqa: BLE001 - missing or unreadable: not cached
            return None
        head = len(MAGIC)
        if len(data) < head + 32 or data[:head] != MAGIC:
            self._note = "file failed its check (truncated, or another format): recompiled"
            return None
        digest, payload = data[head:head + 32], data[head + 32:]
        if _digest(key, payload) != digest:  # corrupt, or another key's object
            self._note = "file failed its check (corrupt, or another kernel's): recompiled"
            return None
        return payload

    def store(self, key: str, payload: bytes) -> None:
        if self.dir is None:
            return
        tmp = None
        try:
            fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=self.dir)
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + _digest(key, payload) + payload)
            os.replace(tmp, self.dir / f"{key}.o")
            tmp = None
        except Exception as e:  # noqa: BLE001 - unwritable, full, raced: not cached
            self._note = f"not written ({type(e).__name__}: {e})"
        finally:
            if tmp is not None:
                try:
                    os.unlink(tmp)
                except OSError:
                    pass
