"""NumPy's einsum as views, fused products and sums, and matmuls.

An einsum names each operand's axes with letters; a letter in two places
is one axis, and a letter missing from the output is summed over. Nothing
runs at the call. The plan, in ops of ours that fuse with their neighbours:

1. the subscripts are read by NumPy's rules: without `->` the output is
   the letters used once, in alphabetical order; `...` stands for the
   broadcast axes, which come first;
2. on each operand, a repeated letter is a diagonal (one axis whose stride
   is the repeated axes' strides added: a view), and a letter no other
   operand and not the output names is summed away at once;
3. two operands at a time are contracted, the pair with the smallest
   result first (`_contract`): when both keep letters of their own and
   sum over shared ones it is a matrix product (matmul, BLAS on the CPU);
   otherwise one broadcast product, summed where letters go (a single
   fused kernel, as `vecdot`'s);
4. the result's axes are put in the output's order (a view).

A result that is a view of its one operand (`einsum('ii->i', a)`,
`einsum('ij->ji', a)`) is that view, as NumPy's is. Results are in the
operands' common dtype, as NumPy's: integer sums wrap in it, and a bool
einsum is the OR of ANDs.
"""
from __future__ import annotations

import math
import string

import numpy as np

from scheduler.dtypes import bool_, int64, result_type

from . import elementwise, linalg, reductions, views
from .tensor import Tensor

Labels = tuple[str, ...]
_ELLIPSIS = 0x100  # broadcast axes get the characters from here on: never letters


def einsum(subscripts: str, operands: list[Tensor]) -> Tensor:
    """The einsum of `operands` (tensors; NumPy's `dtype=` casts them first)."""
    devices = sorted({t.device for t in operands})
    if len(devices) > 1:
        raise ValueError(f"einsum: expected all operands on the same device, but found "
                         f"{' and '.join(devices)}")
    labels, out = parse(subscripts, [t.shape for t in operands])
    size = _sizes(labels, operands)
    common = result_type(*(t.dtype for t in operands))
    work = int64 if common == bool_ else common  # AND is *, OR is a sum != 0
    terms = [_prepare(t, ls, out, labels[:i] + labels[i + 1:], size)
             for i, (t, ls) in enumerate(zip(operands, labels))]
    if _is_view(terms, operands, out):
        return _ordered(terms[0], out)
    terms = [(elementwise.cast(t, work), ls) for t, ls in terms]
    while len(terms) > 1:
        i, j = _cheapest_pair(terms, out, size)
        rest = terms[:i] + terms[i + 1:j] + terms[j + 1:]
        keep = set(out).union(*(ls for _, ls in rest))
        terms = rest + [_contract(terms[i], terms[j], keep, size)]
    # every label left is the output's: _prepare and each contraction sum
    # away the labels nothing later reads
    return elementwise.cast(_ordered(terms[0], out), common)  # to bool: nonzero, an OR


def parse(subscripts: str, shapes: list[tuple[int, ...]]) -> tuple[list[Labels], Labels]:
    """Each operand's axis labels and the output's, with NumPy's checks and
    messages. Broadcast (`...`) axes are labelled right-aligned, so the same
    label is the same broadcast axis in every operand."""
    s = subscripts.replace(" ", "")
    ins, arrow, out = s.partition("->")
    terms = ins.split(",")
    if len(terms) < len(shapes):
        raise ValueError("more operands provided to einstein sum function than specified in "
                         "the subscripts string")
    if len(terms) > len(shapes):
        raise ValueError("fewer operands provided to einstein sum function than specified in "
                         "the subscripts string")
    for i, term in enumerate(terms + ([out] if arrow else [])):
        _check_term(term, i if i < len(terms) else "output")
    spans = []  # how many axes each operand's "..." covers
    for i, (term, shape) in enumerate(zip(terms, shapes)):
        letters = len(term.replace("...", ""))
        if "..." not in term and letters != len(shape):
            raise ValueError("operand has more dimensions than subscripts given in einstein "
                             "sum, but no '...' ellipsis provided to broadcast the extra "
                             "dimensions." if letters < len(shape) else
                             f"einstein sum subscripts string contains too many subscripts "
                             f"for operand {i}")
        if letters > len(shape):
            raise ValueError(f"einstein sum subscripts string contains too many subscripts "
                             f"for operand {i}")
        spans.append(len(shape) - letters if "..." in term else 0)
    wide = max(spans, default=0)
    labels = [_expand(term, span, wide) for term, span in zip(terms, spans)]
    if not arrow:
        once = sorted(c for c in set(ins) if c.isalpha() and ins.count(c) == 1)
        return labels, _expand("...", wide, wide) + tuple(once)
    for c in out.replace("...", ""):
        if c not in ins:
            raise ValueError(f"einstein sum subscripts string included output subscript "
                             f"'{c}' which never appeared in an input")
        if out.count(c) > 1:
            raise ValueError(f"einstein sum subscripts string includes output subscript "
                             f"'{c}' multiple times")
    if wide and "..." not in out:
        raise ValueError("output has more dimensions than subscripts given in einstein sum, "
                         "but no '...' ellipsis provided to broadcast the extra dimensions.")
    return labels, _expand(out, wide, wide)


def _check_term(term: str, which: int | str) -> None:
    where = f"operand {which}" if which != "output" else "the output"
    if term.count("...") > 1 or "." in term.replace("...", "", 1):
        raise ValueError(f"einstein sum subscripts string contains a '.' that is not part of "
                         f"an ellipsis ('...') in {where}")
    for c in term.replace("...", ""):
        if c not in string.ascii_letters:
            raise ValueError(f"invalid subscript '{c}' in einstein sum subscripts string, "
                             f"subscripts must be letters")


def _expand(term: str, span: int, wide: int) -> Labels:
    """`term`'s labels with its "..." replaced by the last `span` of `wide` broadcast labels."""
    head, dots, tail = term.partition("...")
    if not dots:
        return tuple(term)
    return tuple(head) + tuple(chr(_ELLIPSIS + k) for k in range(wide - span, wide)) + \
        tuple(tail)


def sublists(args: tuple) -> tuple[str, list]:
    """NumPy's other form, `einsum(a, [0, 1], b, [1, 2], [0, 2])`: the
    subscripts string it stands for (0-25 are A-Z, 26-51 a-z) and the operands."""
    def letters(sub: object) -> str:
        out = []
        for k in sub:
            if k is Ellipsis:
                out.append("...")
            elif isinstance(k, (int, np.integer)) and 0 <= k < 52:
                out.append(string.ascii_letters[(int(k) + 26) % 52])
            else:
                raise ValueError(f"subscript is not within the valid range [0, 52): {k!r}")
        return "".join(out)
    operands, terms = list(args[0::2]), [letters(s) for s in args[1::2]]
    if len(args) % 2:  # an output sublist ends the arguments
        operands, out = operands[:-1], letters(args[-1])
        return ",".join(terms) + "->" + out, operands
    return ",".join(terms), operands


def _sizes(labels: list[Labels], operands: list[Tensor]) -> dict[str, int]:
    """Each label's length; an axis of length 1 broadcasts, as in NumPy."""
    size: dict[str, int] = {}
    for i, (ls, t) in enumerate(zip(labels, operands)):
        mine: dict[str, int] = {}
        for l, n in zip(ls, t.shape):  # a repeated label takes a diagonal: equal lengths
            if mine.setdefault(l, n) != n:
                raise ValueError(f"dimensions in single operand for collapsing index '{l}' "
                                 f"don't match ({mine[l]} != {n})")
        for l, n in mine.items():
            if size.get(l, 1) != 1 and n != 1 and size[l] != n:
                name = f"'{l}'" if l.isalpha() else "of the broadcast ('...') axes"
                raise ValueError(f"einsum: the axis labelled {name} has length {size[l]} in an "
                                 f"earlier operand but {n} in operand {i} (shape {t.shape})")
            if n != 1 or l not in size:
                size[l] = n
    return size


def _prepare(t: Tensor, labels: Labels, out: Labels, others: list[Labels],
             size: dict[str, int]) -> tuple[Tensor, Labels]:
    """`t` with its repeated labels made diagonals, its length-1 axes
    broadcast, and the labels nothing else reads summed away."""
    unique = tuple(dict.fromkeys(labels))
    if len(unique) < len(labels):
        v = t._view
        shape, strides = [], []
        for l in unique:  # `_sizes` checked that the axes have one length
            axes = [d for d, x in enumerate(labels) if x == l]
            shape.append(t.shape[axes[0]])
            strides.append(sum(v.strides[d] for d in axes))
        t, labels = views.as_strided(t, shape, strides, v.offset), unique
    if any(n != size[l] for l, n in zip(labels, t.shape)):
        t = views.expand(t, tuple(size[l] for l in labels))
    read = set(out).union(*others)
    gone = tuple(d for d, l in enumerate(labels) if l not in read)
    if gone:
        return reductions.reduce(t, "sum", gone), tuple(l for l in labels if l in read)
    return t, labels


def _is_view(terms: list, operands: list[Tensor], out: Labels) -> bool:
    """One operand, nothing summed: the result is a view of it."""
    return len(terms) == 1 and set(terms[0][1]) == set(out) and \
        terms[0][0]._storage is operands[0]._storage


def _ordered(term: tuple[Tensor, Labels], out: Labels) -> Tensor:
    t, labels = term
    order = tuple(labels.index(l) for l in out)
    return t if order == tuple(range(t.ndim)) else views.permute(t, order)


def _cheapest_pair(terms: list, out: Labels, size: dict[str, int]) -> tuple[int, int]:
    """The pair whose contraction has the fewest elements (the first such pair)."""
    best = None
    for i in range(len(terms)):
        for j in range(i + 1, len(terms)):
            rest = [ls for k, (_, ls) in enumerate(terms) if k not in (i, j)]
            keep = set(out).union(*rest)
            kept = set(terms[i][1]).union(terms[j][1]) & keep
            cost = math.prod(size[l] for l in kept)
            if best is None or cost < best[0]:
                best = (cost, i, j)
    return best[1], best[2]


def _contract(a: tuple[Tensor, Labels], b: tuple[Tensor, Labels], keep: set[str],
              size: dict[str, int]) -> tuple[Tensor, Labels]:
    """a times b, summed over the labels they share that nothing keeps.

    Both keep letters of their own and sum shared ones: a matrix product,
    batched over the shared kept letters (matmul). Otherwise: one broadcast
    product and a sum over the summed labels, fused into one kernel, its
    axes in the larger operand's order (so `i,ij->j` sums columns, not a
    transposed view's rows)."""
    (ta, la), (tb, lb) = a, b
    shared = [l for l in la if l in lb]
    summed = [l for l in shared if l not in keep]
    batch = [l for l in shared if l in keep]
    left = [l for l in la if l not in lb]
    right = [l for l in lb if l not in la]
    if summed and left and right:
        lengths = [size[l] for l in batch]
        k = math.prod(size[l] for l in summed)
        am = _aligned(ta, la, batch + left + summed).reshape(
            *lengths, math.prod(size[l] for l in left), k)
        bm = _aligned(tb, lb, batch + summed + right).reshape(
            *lengths, k, math.prod(size[l] for l in right))
        out = linalg.matmul(am, bm).reshape(*lengths, *(size[l] for l in left + right))
        return out, tuple(batch + left + right)
    big, small = (la, lb) if ta.size >= tb.size else (lb, la)
    labels = list(big) + [l for l in small if l not in big]  # the larger one read in its order
    prod = elementwise.apply("mul", _aligned(ta, la, labels), _aligned(tb, lb, labels))
    if not summed:
        return prod, tuple(labels)
    axes = tuple(d for d, l in enumerate(labels) if l in summed)
    return elementwise.cast(reductions.reduce(prod, "sum", axes), ta.dtype), \
        tuple(l for l in labels if l not in summed)


def _aligned(t: Tensor, labels: Labels, order: list[str]) -> Tensor:
    """`t`'s axes in `order`, with a length-1 axis for each label it lacks."""
    mine = [l for l in order if l in labels]
    perm = tuple(labels.index(l) for l in mine)
    if perm != tuple(range(t.ndim)):
        t = views.permute(t, perm)
    if len(mine) == len(order):
        return t
    shape = tuple(t.shape[mine.index(l)] if l in labels else 1 for l in order)
    return views.reshape(t, shape)
