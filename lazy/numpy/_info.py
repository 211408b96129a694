"""`__array_namespace_info__()`: what this namespace supports (array API 2024.12)."""
from __future__ import annotations

from scheduler import backends
from scheduler.dtypes import DType, bool_, float32, float64, int32, int64

from ._dtypes import isdtype

_DTYPES = {"bool": bool_, "int32": int32, "int64": int64, "float32": float32,
           "float64": float64}


class Info:
    """Capabilities, devices and dtypes of `lazy.numpy`."""

    def capabilities(self) -> dict[str, object]:
        # boolean masks and nonzero sync (their result's size depends on the data)
        return {"boolean indexing": True, "data-dependent shapes": True,
                "max dimensions": None}

    def default_device(self) -> str:
        return backends.default_device()[0]

    def devices(self) -> list[str]:
        return ["cpu"] + (["cuda"] if backends.device_status("cuda")[0] else [])

    def default_dtypes(self, *, device: object = None) -> dict[str, DType | None]:
        """NumPy's defaults; lazyrt has no complex dtype (None)."""
        return {"real floating": float64, "complex floating": None, "integral": int64,
                "indexing": int64}

    def dtypes(self, *, device: object = None, kind: object = None) -> dict[str, DType]:
        if kind is None:
            return dict(_DTYPES)
        return {n: d for n, d in _DTYPES.items() if isdtype(d, kind)}


def __array_namespace_info__() -> Info:
    return Info()
