"""numpy.random, with shuffles that understand tensors.

NumPy's `shuffle` treats anything but an ndarray as a sequence and swaps
its rows with `x[i], x[j] = x[j], x[i]`. A tensor's rows are views (as in
PyTorch), so the first assignment overwrites the row the second one then
reads: rows are duplicated and others lost, silently. Here a tensor is
shuffled by one gather through the permutation NumPy's own shuffle would
apply (`permutation(n)` draws the same swaps from the same state), so a
seeded script shuffles exactly as it does under NumPy. Everything else
is numpy.random itself: its numbers are ndarrays, which lazyrt reads as
inputs.
"""
from __future__ import annotations

from typing import Callable

import numpy.random as _random
from numpy.random import *  # noqa: F401,F403

from scheduler.view import normalize_dim as _normalize_dim

from ..tensor import Tensor as _Tensor


def _shuffle(x: _Tensor, axis: int, permutation: Callable[[int], object]) -> None:
    """Write `x` back in the order `permutation(n)` gives along `axis`. An
    empty tensor draws no number, as in NumPy."""
    if x.ndim == 0:
        raise TypeError("shuffle of a 0-d tensor: it has no axis to shuffle (NumPy: "
                        "'len() of unsized object')")
    axis = _normalize_dim(axis, x.ndim, "axis")
    if x.size == 0:
        return
    index = [slice(None)] * x.ndim
    index[axis] = permutation(x.shape[axis])
    x[...] = x[tuple(index)]


def shuffle(x: object) -> None:
    """numpy.random.shuffle; a tensor is shuffled along its first axis in place."""
    if not isinstance(x, _Tensor):
        return _random.shuffle(x)
    _shuffle(x, 0, _random.permutation)


def _reduce(rng: object, reduced: tuple) -> tuple:
    """NumPy's `__reduce__` of `rng` (its constructor takes the bit generator,
    as ours do), rebuilding this module's class: a copy that came back as
    NumPy's Generator would duplicate tensor rows again."""
    _, args, *state = reduced
    return (type(rng), args, *state)


class Generator(_random.Generator):
    """numpy.random.Generator whose `shuffle` understands tensors."""

    def shuffle(self, x: object, axis: int = 0) -> None:
        if not isinstance(x, _Tensor):
            return super().shuffle(x, axis=axis)
        _shuffle(x, axis, self.permutation)

    def __reduce__(self) -> tuple:
        return _reduce(self, super().__reduce__())


class RandomState(_random.RandomState):
    """numpy.random.RandomState whose `shuffle` understands tensors."""

    def shuffle(self, x: object) -> None:
        if not isinstance(x, _Tensor):
            return super().shuffle(x)
        _shuffle(x, 0, self.permutation)

    def __reduce__(self) -> tuple:
        return _reduce(self, super().__reduce__())


def default_rng(seed: object = None) -> Generator:
    """numpy.random.default_rng, giving this module's Generator over the same bits."""
    if isinstance(seed, Generator):
        return seed
    return Generator(_random.default_rng(seed).bit_generator)
