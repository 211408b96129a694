"""`Tensor`: a handle on a storage (`Buffer`) seen through a `View`.

Building ops never computes: methods record nodes. Reading values
(`numpy()`, `item()`, `repr`, `bool()`, ...) syncs implicitly and is
logged with its cause. The op logic lives in `elementwise`, `views`,
`reductions` and `linalg`; this class is the user-facing surface.
"""
from __future__ import annotations

from typing import Any, Iterator

import numpy as np

from scheduler.dtypes import DType, as_dtype
from scheduler.graph import Buffer, host_view
from scheduler.view import View

from . import methods, runtime
from .host import buffer_and_view, from_python, pending_shared_view
from .interop import ArrayProtocols


def asarray_like(x: object, device: str, *, copy: bool = True) -> "Tensor":
    """Turn a NumPy array, NumPy scalar or nested list operand into a tensor.

    A NumPy array is copied: NumPy reads an operand's values when the op
    is called, a lazy op only at sync, and the array may change in between
    (the caller writes it, or a tensor whose `numpy()` view it is is
    written in place). `lazy.asarray` shares memory instead, as
    `torch.from_numpy`. `copy=False` is for arrays only lazyrt holds.
    A list converts as NumPy converts it (`[0.1]` is float64, not
    PyTorch's float32 of `lazy.tensor`): it is an operand in NumPy's rules.
    """
    if isinstance(x, (list, tuple)):
        x, copy = from_python(x, None, numpy_rules=True), False  # a new array already
    elif copy and isinstance(x, np.ndarray):
        shared = pending_shared_view(x)
        if shared is not None:  # its values now, in program order: a lazy copy of them
            return elementwise.apply("copy", Tensor._of(*shared))
    buf, view = buffer_and_view(x, None, copy=copy and isinstance(x, np.ndarray))
    if device != "cpu":
        raise ValueError(f"expected all tensors on the same device, but found {device} and cpu")
    return Tensor._wrap(buf, view)


class Storage:
    """The identity every view of a tensor shares; `buf` is its current version.

    A write makes a new Buffer (a scatter over the old one) and points the
    storage at it, so every view sees the write, while ops built earlier
    keep reading the old Buffer they captured.
    """
    __slots__ = ("buf", "__weakref__")

    def __init__(self, buf: Buffer):
        self.buf = buf
        if buf.array is None:  # pending
            runtime.track(self)

    def __reduce__(self) -> tuple:
        """Its memory: `Tensor.__reduce__` synced it. One object in a pickle,
        so the tensors pickled with it share it again when loaded."""
        buf = self.buf
        return _storage_of, (type(self), buf.array, buf.device, buf.dtype)


def _storage_of(kind: type, array: object, device: str, dtype: DType) -> Storage:
    return kind(Buffer.realized(array, device, dtype))


class ElementStorage(Storage):
    """The storage of one element `a[i, j]` (views._element): NumPy's scalar,
    a copy. PyTorch's in-place methods on it raise: in PyTorch they would
    write `a`, here they would silently write only the copy."""
    __slots__ = ()


class Tensor(ArrayProtocols):
    __slots__ = ("_storage", "_view", "__weakref__")
    __array_priority__ = 1000  # NumPy defers `ndarray + Tensor` to us

    @classmethod
    def _wrap(cls, buf: Buffer, view: View) -> "Tensor":
        t = object.__new__(cls)
        t._storage, t._view = Storage(buf), view
        return t

    @classmethod
    def _element(cls, buf: Buffer) -> "Tensor":
        """A 0-d tensor over `buf`, one element copied (views._element)."""
        t = object.__new__(cls)
        t._storage, t._view = ElementStorage(buf), View.contiguous(())
        return t

    def _torch_inplace(self, name: str) -> "Tensor":
        if type(self._storage) is ElementStorage:
            raise RuntimeError(f"{name} on one element t[i, j] would change only a copy: an "
                               f"element is a copy, as NumPy's scalar; write t[i, j] = value, or "
                               f"take the 0-d view t[i, j, ...] (PyTorch's t[i, j])")
        return self

    @classmethod
    def _of(cls, storage: Storage, view: View) -> "Tensor":
        """A view of an existing storage."""
        t = object.__new__(cls)
        t._storage, t._view = storage, view
        return t

    def _as(self, view: View) -> "Tensor":
        """Another view of the same storage (inlined `_of`: views are a hot path)."""
        t = object.__new__(Tensor)
        t._storage, t._view = self._storage, view
        return t

    @property
    def _buf(self) -> Buffer:
        return self._storage.buf

    # -- copying and pickling -------------------------------------------------
    def __reduce__(self) -> tuple:
        """Pickling (and `copy.deepcopy`) reads the values: a sync point,
        logged as `implicit: pickle`. A pending graph holds weak references
        and user code lines, which do not pickle."""
        runtime.implicit_sync(self, "pickle")
        return Tensor._of, (self._storage, self._view)

    def __copy__(self) -> "Tensor":
        """`copy.copy`: another tensor over the same storage, nothing synced."""
        return Tensor._of(self._storage, self._view)

    # -- attributes --------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._view.shape

    @property
    def dtype(self) -> DType:
        return self._storage.buf.dtype

    @property
    def device(self) -> str:
        return self._storage.buf.device

    @property
    def ndim(self) -> int:
        return len(self._view.shape)

    @property
    def size(self) -> int:
        return self._view.size

    @property
    def itemsize(self) -> int:
        return self._buf.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def T(self) -> "Tensor":
        return self.permute(*reversed(range(self.ndim)))

    @property
    def mT(self) -> "Tensor":
        """The last two axes swapped (the array API's matrix transpose): a view."""
        if self.ndim < 2:
            raise ValueError(f"mT needs at least 2 dimensions, got shape {self.shape}")
        return self.transpose(-2, -1)

    def to_device(self, device: object, /, *, stream: object = None) -> "Tensor":
        """The array API's spelling of `to(device)`."""
        return self.to(str(device))

    def __array_namespace__(self, /, *, api_version: str | None = None) -> Any:
        """`lazy.numpy`, the array API namespace of tensors."""
        if api_version not in (None, "2021.12", "2022.12", "2023.12", "2024.12"):
            raise ValueError(f"unsupported array API version {api_version!r}; lazy.numpy "
                             f"implements 2024.12")
        import lazy.numpy
        return lazy.numpy

    def dim(self) -> int:
        return self.ndim

    def numel(self) -> int:
        return self.size

    def element_size(self) -> int:
        return self.itemsize

    def stride(self, dim: int | None = None) -> tuple[int, ...] | int:
        """Strides in elements, as PyTorch gives them."""
        if dim is None:
            return self._view.strides
        from scheduler.view import normalize_dim
        return self._view.strides[normalize_dim(dim, self.ndim)]

    def storage_offset(self) -> int:
        return self._view.offset

    def is_contiguous(self) -> bool:
        return self._view.is_contiguous()

    def __len__(self) -> int:
        if not self.ndim:
            raise TypeError("len() of a 0-d tensor")
        return self.shape[0]

    def __iter__(self) -> Iterator["Tensor"]:
        if not self.ndim:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self.shape[0]))

    def __contains__(self, value: object) -> bool:
        """`value in t`: is any element equal to it (NumPy's and PyTorch's
        `(t == value).any()`), one implicit sync. Python's default iterated
        rows, syncing each, and failed on 0-d and 2-D tensors."""
        found = elementwise.apply("eq", self, value).any()
        return bool(found._scalar("__contains__"))

    __hash__ = object.__hash__

    # -- sync and reading values -------------------------------------------
    def sync(self) -> "Tensor":
        runtime.sync(self)
        return self

    def _host(self, what: str) -> np.ndarray:
        runtime.implicit_sync(self, what)
        if self.device != "cpu":  # a copy to host memory, logged as a transfer
            return self.to("cpu")._host(what)
        array = self._buf.array
        while array is None:  # another thread wrote a new version since: sync that one
            runtime.implicit_sync(self, what)
            array = self._buf.array
        return host_view(array, self._view)

    def numpy(self) -> np.ndarray:
        """A read-only NumPy view of the same memory, with the same strides.

        For a CUDA tensor: a host copy (a logged transfer).
        """
        return self._host("numpy()")

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        a = self._host("__array__")
        if dtype is not None and np.dtype(dtype) != a.dtype:
            return a.astype(dtype)
        return a.copy() if copy else a

    def tolist(self) -> Any:
        return self._host("tolist()").tolist()

    def item(self, *index) -> bool | int | float:
        """The one element as a Python scalar; or, as NumPy's, the element at
        a flat index `item(i)` or at a multi-index `item(i, j)`."""
        if index:
            key = index[0] if len(index) == 1 else index
            return (self[key] if isinstance(key, tuple) else self.reshape(-1)[key]).item()
        if self.size != 1:
            raise ValueError(f"item(): a tensor with {self.size} elements cannot be "
                             f"converted to a Python scalar")
        return self._host("item()").reshape(-1)[0].item()

    def _scalar(self, what: str) -> bool | int | float:
        if self.size != 1:
            raise ValueError(f"{what}: the truth value or number of a tensor with "
                             f"{self.size} elements is ambiguous; use .any() or .all()"
                             if what == "__bool__" else
                             f"{what}: only tensors with one element can be converted "
                             f"to Python scalars (this one has {self.size})")
        return self._host(what).reshape(-1)[0].item()

    def __bool__(self) -> bool:
        return bool(self._scalar("__bool__"))

    def __float__(self) -> float:
        return float(self._scalar("__float__"))

    def __int__(self) -> int:
        return int(self._scalar("__int__"))

    def __index__(self) -> int:
        if not self.dtype.is_int:
            raise TypeError(f"only integer tensors can be used as an index, not {self.dtype.name}")
        return int(self._scalar("__index__"))

    def __format__(self, spec: str) -> str:
        """A 0-d tensor formats as its value (`f"{loss:.4f}"`), as a NumPy
        scalar or 0-d array does; others take only the empty spec, as ndarray."""
        if self.ndim == 0:
            return format(self._host("format").reshape(-1)[0], spec)
        if spec:
            raise TypeError(f"unsupported format string {spec!r} passed to Tensor.__format__ "
                            f"(only a 0-d tensor formats as a number; this one has shape "
                            f"{self.shape})")
        return str(self)

    def __round__(self, ndigits: int | None = None) -> "Tensor | int":
        """round(t): a Python int for a 0-d tensor (as round() of the NumPy
        scalar a NumPy reduction gives), else np.round's half-to-even tensor."""
        from . import numpy as lnp
        if ndigits is None and self.ndim == 0:
            return int(lnp.round(self))
        return lnp.round(self, ndigits or 0)

    def __repr__(self) -> str:
        body = np.array2string(self._host("repr"), separator=", ", prefix="tensor(")
        return f"tensor({body}, dtype={self.dtype.name})"

    def __str__(self) -> str:
        """print() shows the values as NumPy prints them (repr says it is a tensor),
        so a NumPy script run through `python -m lazy` prints what it did before."""
        return str(self._host("str"))

    # -- conversions ---------------------------------------------------------
    def astype(self, dtype: object, order: str = "K", casting: str = "unsafe",
               subok: bool = True, copy: bool = True) -> "Tensor":
        """NumPy's: a new tensor laid out in `order` (K: as this one is); with
        copy=False this tensor itself when it has that dtype and layout."""
        return layout.astype(self, dtype, order, casting, copy)

    def to(self, target: object) -> "Tensor":
        """`to("cuda")`/`to("cpu")` moves (a lazy transfer); `to(dtype)` converts."""
        if type(target).__name__ == "device":  # torch.device("cuda:0"), as creation takes it
            target = str(target)
        if isinstance(target, str) and target.split(":")[0] in ("cpu", "cuda"):
            from .creation import resolve_device
            device = resolve_device(target)
            if device == self.device:
                return self
            return runtime.make("to_device", ((self._buf, self._view),), device, self.dtype,
                                self.shape, device)
        return elementwise.astype(self, target) if as_dtype(target) != self.dtype else self

    def cpu(self) -> "Tensor":
        return self.to("cpu")

    def cuda(self) -> "Tensor":
        return self.to("cuda")

    def float(self) -> "Tensor":
        return self.to("float32")

    def double(self) -> "Tensor":
        return self.to("float64")

    def int(self) -> "Tensor":
        return self.to("int32")

    def long(self) -> "Tensor":
        return self.to("int64")

    def bool(self) -> "Tensor":
        return self.to("bool")

    def contiguous(self) -> "Tensor":
        return self if self.is_contiguous() else elementwise.apply("copy", self)

    def clone(self) -> "Tensor":
        return elementwise.apply("copy", self)

    def copy(self, order: str = "C") -> "Tensor":
        """NumPy's ndarray.copy: a new tensor laid out in `order`."""
        return layout.copy_in(self, order)

    # -- elementwise ---------------------------------------------------------
    def __add__(self, o): return elementwise.apply("add", self, o)
    def __radd__(self, o): return elementwise.apply("add", o, self)
    def __sub__(self, o): return elementwise.apply("sub", self, o)
    def __rsub__(self, o): return elementwise.apply("sub", o, self)
    def __mul__(self, o): return elementwise.apply("mul", self, o)
    def __rmul__(self, o): return elementwise.apply("mul", o, self)
    def __truediv__(self, o): return elementwise.apply("truediv", self, o)
    def __rtruediv__(self, o): return elementwise.apply("truediv", o, self)
    def __floordiv__(self, o): return elementwise.apply("floordiv", self, o)
    def __rfloordiv__(self, o): return elementwise.apply("floordiv", o, self)
    def __mod__(self, o): return elementwise.apply("mod", self, o)
    def __rmod__(self, o): return elementwise.apply("mod", o, self)
    def __divmod__(self, o): return self // o, self % o
    def __rdivmod__(self, o): return o // self, o % self
    def __pow__(self, o): return elementwise.power(self, o)
    def __rpow__(self, o): return elementwise.apply("pow", o, self)
    def __and__(self, o): return elementwise.apply("and", self, o)
    def __rand__(self, o): return elementwise.apply("and", o, self)
    def __or__(self, o): return elementwise.apply("or", self, o)
    def __ror__(self, o): return elementwise.apply("or", o, self)
    def __xor__(self, o): return elementwise.apply("xor", self, o)
    def __rxor__(self, o): return elementwise.apply("xor", o, self)
    def __eq__(self, o): return elementwise.apply("eq", self, o)  # type: ignore[override]
    def __ne__(self, o): return elementwise.apply("ne", self, o)  # type: ignore[override]
    def __lt__(self, o): return elementwise.apply("lt", self, o)
    def __le__(self, o): return elementwise.apply("le", self, o)
    def __gt__(self, o): return elementwise.apply("gt", self, o)
    def __ge__(self, o): return elementwise.apply("ge", self, o)
    def __neg__(self): return elementwise.apply("neg", self)
    def __pos__(self):
        """A new tensor, as NumPy's (PyTorch returns self); bool raises, as in both."""
        if self.dtype.is_bool:
            raise TypeError("unary + is not supported for bool tensors")
        return elementwise.apply("copy", self)
    def __abs__(self): return elementwise.apply("abs", self)
    def __invert__(self): return elementwise.apply("invert", self)
    def __lshift__(self, o): return _shift("bitwise_left_shift", self, o)
    def __rlshift__(self, o): return _shift("bitwise_left_shift", o, self)
    def __rshift__(self, o): return _shift("bitwise_right_shift", self, o)
    def __rrshift__(self, o): return _shift("bitwise_right_shift", o, self)
    def __matmul__(self, o): return linalg.matmul(self, o)
    def __rmatmul__(self, o): return linalg.matmul(o, self)

    def add(self, o): return elementwise.apply("add", self, o)
    def sub(self, o): return elementwise.apply("sub", self, o)
    def mul(self, o): return elementwise.apply("mul", self, o)
    def div(self, o): return elementwise.apply("truediv", self, o)
    def pow(self, o): return elementwise.power(self, o)
    def abs(self): return elementwise.apply("abs", self)
    def exp(self): return elementwise.apply("exp", self)
    def log(self): return elementwise.apply("log", self)
    def sqrt(self): return elementwise.apply("sqrt", self)
    def sin(self): return elementwise.apply("sin", self)
    def cos(self): return elementwise.apply("cos", self)
    def tanh(self): return elementwise.apply("tanh", self)
    def sigmoid(self): return elementwise.apply("sigmoid", self)
    def maximum(self, o): return elementwise.apply("maximum", self, o)
    def minimum(self, o): return elementwise.apply("minimum", self, o)
    def clip(self, min=None, max=None): return elementwise.clip(self, min, max)
    clamp = clip
    def matmul(self, o): return linalg.matmul(self, o)

    # -- writes (new versions of the storage; see lazy/mutation.py) ----------
    def __setitem__(self, key, value):
        if type(self._storage) is ElementStorage and not self.ndim:
            raise TypeError("an element t[i, j] is a copy, as NumPy's scalar, and does not "
                            "support item assignment: write t[i, j] = value, or take the "
                            "0-d view t[i, j, ...] (PyTorch's t[i, j])")
        mutation.setitem(self, key, value)
    def __iadd__(self, o): return mutation.inplace(self, "add", o)
    def __isub__(self, o): return mutation.inplace(self, "sub", o)
    def __imul__(self, o): return mutation.inplace(self, "mul", o)
    def __itruediv__(self, o): return mutation.inplace(self, "truediv", o)
    def __ifloordiv__(self, o): return mutation.inplace(self, "floordiv", o)
    def __imod__(self, o): return mutation.inplace(self, "mod", o)
    def __ipow__(self, o): return mutation.inplace(self, "pow", o)
    def __iand__(self, o): return mutation.inplace(self, "and", o)
    def __ior__(self, o): return mutation.inplace(self, "or", o)
    def __ixor__(self, o): return mutation.inplace(self, "xor", o)
    def __ilshift__(self, o): return mutation.write_back(self, self << o, "lshift")
    def __irshift__(self, o): return mutation.write_back(self, self >> o, "rshift")
    def __imatmul__(self, o): return mutation.imatmul(self, o)
    # PyTorch's in-place methods (the augmented operators above work on an
    # element copy too: NumPy code's `x += 1` on a scalar only rebinds x)
    def add_(self, o): return mutation.inplace(self._torch_inplace("add_"), "add", o)
    def sub_(self, o): return mutation.inplace(self._torch_inplace("sub_"), "sub", o)
    def mul_(self, o): return mutation.inplace(self._torch_inplace("mul_"), "mul", o)
    def div_(self, o): return mutation.inplace(self._torch_inplace("div_"), "truediv", o)
    def clamp_(self, min=None, max=None):
        return mutation.clamp_(self._torch_inplace("clamp_"), min, max)
    clip_ = clamp_
    def fill_(self, value): return mutation.fill_(self._torch_inplace("fill_"), value)
    def zero_(self): return mutation.fill_(self._torch_inplace("zero_"), 0)
    def copy_(self, src): return mutation.copy_(self._torch_inplace("copy_"), src)

    # -- advanced indexing (copies) ------------------------------------------
    def take(self, indices, axis=None): return indexing.take(self, indices, axis)
    def gather(self, dim, index): return indexing.gather_dim(self, dim, index)
    def index_select(self, dim, index): return indexing.index_select(self, dim, index)
    def masked_fill(self, mask, value): return indexing.masked_fill(self, mask, value)
    def nonzero(self): return indexing.nonzero(self)

    # -- views ---------------------------------------------------------------
    def __getitem__(self, key): return views.getitem(self, key)
    def unfold(self, dim, size, step): return views.unfold(self, dim, size, step)
    def reshape(self, *shape, order="C"):
        if order == "C":
            return views.reshape(self, shape)
        from . import numpy as lnp  # NumPy's order="F"/"A"
        return lnp.reshape(self, shape[0] if len(shape) == 1 else shape, order)

    def view(self, *shape): return views.view(self, shape)
    def permute(self, *dims): return views.permute(self, dims)
    def transpose(self, *dims): return views.transpose(self, dims)
    def expand(self, *shape): return views.expand(self, shape)
    def broadcast_to(self, shape): return views.broadcast_to(self, shape)
    def squeeze(self, dim=None): return views.squeeze(self, dim)
    def unsqueeze(self, dim): return views.unsqueeze(self, dim)
    def flatten(self, start_dim=0, end_dim=-1, *, order=None) -> "Tensor":
        """PyTorch's flatten (a view where strides allow), or NumPy's
        `flatten(order)` (a string order: always a copy, as NumPy's)."""
        if isinstance(start_dim, str) or order is not None:
            from . import numpy as lnp
            return lnp.ravel(self, order or start_dim).clone()
        return views.flatten(self, start_dim, end_dim)

    def ravel(self, order: str = "C") -> "Tensor":
        """A contiguous 1-D result (NumPy's and PyTorch's): a view only of a
        C-contiguous tensor; a strided or reversed one is copied."""
        if order == "C":
            return views.reshape(self.contiguous(), (-1,))
        from . import numpy as lnp  # NumPy's F, A and K orders
        return lnp.ravel(self, order)

    def narrow(self, dim, start, length): return views.narrow(self, dim, start, length)
    def select(self, dim, index): return views.select(self, dim, index)
    def diagonal(self, offset=0, dim1=0, dim2=1): return views.diagonal(self, offset, dim1, dim2)
    def as_strided(self, size, stride, storage_offset=None):
        return views.as_strided(self, size, stride, storage_offset)

    # -- reductions (NumPy-only arguments go through lazy.numpy) ------------------
    sum, prod = methods.total("sum"), methods.total("prod")
    max, min = methods.with_options("max"), methods.with_options("min")
    argmax, argmin = methods.reduction("argmax"), methods.reduction("argmin")
    any, all = methods.with_options("any"), methods.with_options("all")

    def aminmax(self, *, dim=None, keepdim=False) -> "reductions.MinMax":
        return reductions.aminmax(self, dim=dim, keepdim=keepdim)

    def mean(self, axis=None, *second, keepdims=False, dim=None, keepdim=False, dtype=None,
             out=None, where=True):
        keepdims, dtype = reductions.keepdims_or_dtype(second, keepdims, dtype)
        if out is None and where is True:
            return reductions.mean(self, axis, keepdims, dim=dim, keepdim=keepdim, dtype=dtype)
        return methods.numpy_reduction("mean", self, axis, dim, keepdims or keepdim,
                                       dtype=dtype, out=out, where=where)

    var, std = methods.spread("var"), methods.spread("std")

    # -- NumPy's ndarray methods, through lazy.numpy (NumPy code run under
    # `python -m lazy` calls them on tensors). Not `repeat` (PyTorch's is
    # NumPy's tile) nor `sort` (NumPy's sorts in place, PyTorch's returns a pair).
    def fill(self, value) -> None:
        """Every element set to `value`, in place; returns None (NumPy's)."""
        self[...] = value

    put = methods.numpy_method("put")

    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        """PyTorch's `x.unique()` (lazy/sets.py)."""
        from .sets import torch_unique  # imported late: sets.py imports this module
        return torch_unique(self, sorted, return_inverse, return_counts, dim)

    def argsort(self, *args, **kwargs) -> Tensor:
        """NumPy's `a.argsort(axis, kind)` and PyTorch's `x.argsort(dim, descending)`."""
        from .sorting import argsort_method  # imported late: sorting.py imports this module
        return argsort_method(self, *args, **kwargs)
    cumsum, cumprod = methods.scan("cumsum"), methods.scan("cumprod")
    swapaxes, dot = methods.numpy_method("swapaxes"), methods.numpy_method("dot")
    trace = methods.numpy_method("trace")
    round, conj = methods.numpy_method("round"), methods.numpy_method("conj")
    conjugate = conj


def _shift(name: str, a: object, b: object) -> Tensor:
    """Shifts are compositions in lazy.numpy (x * 2**n, floor(x / 2**n)), not primitives."""
    from . import numpy as lnp
    return getattr(lnp, name)(a, b)


from . import elementwise, indexing, layout, linalg, mutation, reductions, views  # noqa: E402,I001
