"""`python -m lazy script.py [args]`: run an unchanged NumPy program lazily.

The script runs as `__main__` (argv, `sys.path[0]` and tracebacks as
`python script.py` gives them). Its `import numpy` binds `lazy.numpy`, and
so does that of every module whose file lives under the script's
directory; installed libraries, the standard library and lazyrt itself keep
real NumPy, since they rely on its ndarray. The redirect wraps
`builtins.__import__` and looks at the importing module's `__file__`. At
exit a summary of the log goes to stderr and the script's exit status is
passed on.
"""
from __future__ import annotations

import builtins
import os
import runpy
import site
import sys
import sysconfig
import traceback
from collections import Counter
from typing import Any

from scheduler.log import log

USAGE = """usage: python -m lazy script.py [args ...]

Runs script.py with `import numpy` bound to lazy.numpy (for the script and
the modules next to it), then prints a summary of lazyrt's log to stderr.
LAZY_LOG=1 prints each record as it happens."""

_LAZYRT_DIRS = tuple(
    os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), p, "")
    for p in ("lazy", "scheduler", "cpu_backend", "cuda_backend"))


def _installed_dirs() -> tuple[str, ...]:
    """The standard library and site-packages: code there keeps real NumPy."""
    paths = {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    paths.update(site.getsitepackages())
    if site.ENABLE_USER_SITE and site.USER_SITE:
        paths.add(site.USER_SITE)
    return tuple(os.path.join(os.path.realpath(p), "") for p in paths)


class NumpyRedirect:
    """While active, `import numpy[.x]` in modules under `root` gives `lazy.numpy[.x]`."""

    def __init__(self, root: str):
        self.root = os.path.join(os.path.realpath(root), "")
        self.excluded = _LAZYRT_DIRS + _installed_dirs()
        self._decided: dict[str, bool] = {}
        self._import = builtins.__import__

    def redirects(self, filename: str) -> bool:
        """Is a module with this file the user's own (under root, not lazyrt, not installed)?"""
        try:
            return self._decided[filename]
        except KeyError:
            path = os.path.realpath(filename)
            ours = path.startswith(self.root) and not path.startswith(self.excluded)
            self._decided[filename] = ours
            return ours

    def __import__(self, name: str, globals: dict | None = None, locals: Any = None,
                   fromlist: tuple = (), level: int = 0) -> Any:
        if level == 0 and (name == "numpy" or name.startswith("numpy.")) and globals \
                and globals.get("__file__") and self.redirects(globals["__file__"]):
            try:
                module = self._import("lazy." + name, globals, locals, fromlist, 0)
            except ModuleNotFoundError as e:
                # lazy.numpy lacks the module or a package on its path
                # (NumPy's C code imports numpy._core._methods this way)
                if not e.name or not ("lazy." + name + ".").startswith(e.name + "."):
                    raise
            else:  # `import numpy.x` binds the top package, as the real import does
                return module if fromlist else sys.modules["lazy.numpy"]
            # NumPy's own submodule (numpy.linalg, numpy.random): the real one is
            # imported, but `import numpy.x` must still bind `numpy` to lazy.numpy
            module = self._import(name, globals, locals, fromlist, level)
            if not fromlist:
                self._import("lazy.numpy", globals, locals, (), 0)
                return sys.modules["lazy.numpy"]
            return module
        return self._import(name, globals, locals, fromlist, level)

    def __enter__(self) -> "NumpyRedirect":
        builtins.__import__ = self.__import__
        return self

    def __exit__(self, *exc: object) -> None:
        builtins.__import__ = self._import


def summary() -> str:
    """A few lines on what lazyrt did: syncs, kernels per backend, fallbacks by name."""
    c = log.counters
    records = list(log)
    backends = Counter(f"{r.device}/{r.backend}" for r in records)
    fallbacks = Counter(r.kernel.removeprefix("fallback_") for r in records
                        if r.reason.startswith("fallback"))
    lines = [f"[lazy] {c.syncs} syncs ({c.implicit_syncs} implicit, {c.auto_syncs} auto), "
             f"{c.kernels} kernels"
             + (f" ({', '.join(f'{b} {n}' for b, n in backends.most_common())})"
                if backends else "")
             + f", compile cache {c.cache_hits} hits / {c.cache_misses} misses, "
               f"{c.transfers} transfers"]
    if c.fallbacks:
        named = ", ".join(f"{k} x{n}" if n > 1 else k for k, n in fallbacks.most_common())
        lines.append(f"[lazy] NumPy fallbacks ({c.fallbacks}): {named}")
    return "\n".join(lines)


def _exit_status(code: object) -> int:
    """What `SystemExit(code)` makes the process return, as Python itself does."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def run(script: str, args: list[str]) -> int:
    """Run `script` as __main__ with NumPy redirected; returns its exit status."""
    path = os.path.abspath(script)
    sys.argv = [script, *args]
    if not sys.flags.safe_path:  # `python -P` puts no script directory on the path
        sys.path[0] = os.path.dirname(path)
    try:
        with NumpyRedirect(os.path.dirname(path)):
            runpy.run_path(path, run_name="__main__")
        status = 0
    except SystemExit as e:
        status = _exit_status(e.code)
    except BaseException as e:  # the script's traceback, without this runner's frames
        tb = e.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename != path:
            tb = tb.tb_next
        traceback.print_exception(type(e), e, tb)
        status = 1
    sys.stdout.flush()
    print(summary(), file=sys.stderr)
    return status


def main(argv: list[str]) -> int:
    if not argv:
        print(USAGE, file=sys.stderr)
        return 2
    if argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    if not os.path.isfile(argv[0]):
        print(f"python -m lazy: can't open file {argv[0]!r}", file=sys.stderr)
        return 2
    return run(argv[0], argv[1:])
