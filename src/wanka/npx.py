"""numpy, with fast paths for one strategy: the array namespace of the step model.

The step model (:mod:`wanka.engine.core`, with :mod:`wanka.engine.feasibility` and
:func:`wanka.network.groups.comm_group`) is written once, against numpy, for a batch of strategies.
One strategy (:func:`wanka.engine.estimate_step`) runs the same code on numpy scalars
(``np.int64``/``np.float64``/``np.bool_`` columns, :meth:`Strategies.scalars`): their arithmetic is
numpy's own (IEEE float64, division by zero gives inf), but a numpy *function* call on a scalar costs
~1-3 µs, 10-30x the arithmetic. The functions below take a shortcut when every input is a Python
or numpy float/int/bool scalar and call numpy otherwise (arrays, lists, other dtypes); every other
name is numpy's own.

Every shortcut returns the value numpy returns (NaN propagating and the second of two equal
arguments, signed zeros included, as ``np.maximum``/``np.minimum`` do), as a scalar instead of a 0-d
array. tests/engine/test_speed_equivalence.py checks the shortcuts against numpy and the scalar path
against the batch path, bit for bit, on every preset and on random strategies.
"""

from __future__ import annotations

import math
import threading
from typing import Any

import numpy
from numpy import bool_ as bool_
from numpy import float64 as float64
from numpy import int64 as int64
from numpy import ndarray as ndarray

__all__ = [
    "all",
    "any",
    "asarray",
    "bool_",
    "ceil",
    "clip",
    "float64",
    "floor",
    "full_like",
    "int64",
    "maximum",
    "minimum",
    "ndarray",
    "ndim",
    "ones_like",
    "sqrt",
    "unique",
    "where",
    "zeros_like",
]

_DTYPES: dict[Any, Any] = {float: numpy.float64, bool: numpy.bool_, int: numpy.int64}


def __getattr__(name: str) -> Any:  # everything not overridden here is numpy's (for type checkers;
    return getattr(numpy, name)  # at run time the names are copied in below, a plain lookup)


# the scalar types the fast paths take; anything else (arrays, lists, other dtypes) goes to numpy
_S = frozenset({float, int, bool, numpy.float64, numpy.int64, numpy.bool_})


def where(c: Any, a: Any, b: Any) -> Any:
    if type(c) in _S and type(a) in _S and type(b) in _S:
        return a if c else b
    if type(c) is numpy.ndarray and c.dtype == numpy.bool_ and c.ndim:
        got = _select(c, a, b)
        if got is not None:
            return got
    return numpy.where(c, a, b)


_U64 = numpy.dtype(numpy.uint64)
_F64 = numpy.dtype(numpy.float64)
_I64 = numpy.dtype(numpy.int64)
_FLOATS = (float, numpy.float64)
_INTS = (int, numpy.int64)
_SCRATCH = threading.local()


def _bits(x: Any, shape: tuple[int, ...], dtype: Any, scalars: tuple[type, ...]) -> Any:
    """``x``'s 64 bits (an array's uint64 view, or a scalar's bit pattern) when ``x`` is an array of
    ``dtype`` and ``shape`` or a scalar of ``scalars`` that numpy casts to ``dtype`` exactly; else None."""
    if type(x) is numpy.ndarray:
        return x.view(_U64) if x.dtype == dtype and x.shape == shape else None
    if type(x) in scalars:
        if dtype is _I64 and not -(2**63) <= x < 2**63:
            return None
        return numpy.array(x, dtype=dtype).view(_U64)[()]
    return None


def _mask(c: Any) -> Any:
    """All-ones 64-bit words where ``c`` is true, zeros elsewhere, written into this thread's scratch
    buffer (reused: the select then allocates its result only, as numpy.where does; a second
    temporary of a large batch costs page faults once the allocator trims the heap it was freed to)."""
    buf = getattr(_SCRATCH, "buf", None)
    if buf is None or buf.size < c.size:
        buf = _SCRATCH.buf = numpy.empty(c.size, dtype=_U64)
    m = buf[: c.size].reshape(c.shape)
    m[...] = c  # 0 or 1 (a plain copy loop; faster than negative() casting on the fly)
    numpy.negative(m, out=m)
    return m


def _select(c: Any, a: Any, b: Any) -> Any:
    """``numpy.where(c, a, b)`` for a boolean array ``c`` and float64 (or int64, or bool) operands of
    its shape or scalars, by selecting bits (``b ^ ((a ^ b) & mask)``) instead of branching per element:
    the same bits as numpy's (NaN payloads and signed zeros included), 2-4x faster on a mask without
    long runs, where numpy's per-element branch mispredicts. None: not such operands (numpy then)."""
    arr_a, arr_b = type(a) is numpy.ndarray, type(b) is numpy.ndarray
    if (arr_a and a.dtype == numpy.bool_) or (arr_b and b.dtype == numpy.bool_):
        if arr_a and arr_b and a.dtype == b.dtype and a.shape == b.shape == c.shape:
            return (c & a) | (~c & b)
        return None
    kind = _I64 if type(a) in _INTS or (arr_a and a.dtype == _I64) else _F64
    scalars = _INTS if kind is _I64 else _FLOATS
    ab, bb = _bits(a, c.shape, kind, scalars), _bits(b, c.shape, kind, scalars)
    if ab is None or bb is None or (not arr_a and not arr_b and kind is _I64):
        return None  # (two int scalars: numpy's result dtype is not simply int64 there)
    if not arr_b and bb == 0:  # where(c, a, 0.0): a's bits under c's mask
        out = numpy.bitwise_and(_mask(c), ab)
    elif not arr_a and ab == 0:  # where(c, 0.0, b): b's bits under ~c's mask
        out = numpy.bitwise_and(_mask(~c), bb)
    else:
        out = numpy.bitwise_xor(ab, bb)
        if type(out) is not numpy.ndarray:  # two scalars
            out = numpy.full(c.shape, out, dtype=_U64)
        numpy.bitwise_and(out, _mask(c), out=out)
        numpy.bitwise_xor(out, bb, out=out)
    return out.view(kind)


def maximum(a: Any, b: Any) -> Any:
    if type(a) in _S and type(b) in _S:
        return a if (a > b or a != a) else b
    return numpy.maximum(a, b)


def minimum(a: Any, b: Any) -> Any:
    if type(a) in _S and type(b) in _S:
        return a if (a < b or a != a) else b
    return numpy.minimum(a, b)


def clip(x: Any, lo: Any, hi: Any) -> Any:
    if type(x) in _S and type(lo) in _S and type(hi) in _S:
        return minimum(maximum(x, lo), hi)
    return numpy.clip(x, lo, hi)


def asarray(x: Any, dtype: Any = None) -> Any:
    t = type(x)
    if t not in _S:
        return numpy.asarray(x, dtype=dtype)
    if dtype is None or (dtype is float and t is numpy.float64):
        return x
    return _scalar_type(dtype)(x)


def any(x: Any) -> Any:
    return bool(x) if type(x) in _S else numpy.any(x)


def all(x: Any) -> Any:
    return bool(x) if type(x) in _S else numpy.all(x)


def _scalar_type(dtype: Any) -> Any:
    got = _DTYPES.get(dtype)
    return numpy.dtype(dtype).type if got is None else got


def _like(x: Any, v: float, dtype: Any) -> Any:
    if dtype is not None:
        return _scalar_type(dtype)(v)
    t = type(x)
    return _DTYPES.get(t, t)(v)  # a Python number's numpy type, as numpy's 0-d result has


def zeros_like(x: Any, dtype: Any = None) -> Any:
    return _like(x, 0.0, dtype) if type(x) in _S else numpy.zeros_like(x, dtype=dtype)


def ones_like(x: Any, dtype: Any = None) -> Any:
    return _like(x, 1.0, dtype) if type(x) in _S else numpy.ones_like(x, dtype=dtype)


def full_like(x: Any, v: Any, dtype: Any = None) -> Any:
    return _like(x, v, dtype) if type(x) in _S else numpy.full_like(x, v, dtype=dtype)


def unique(x: Any, **kwargs: Any) -> Any:
    # one number: the one-element array numpy's sort-based unique returns for it
    return numpy.array([x]) if type(x) in _S and not kwargs else numpy.unique(x, **kwargs)


def ndim(x: Any) -> int:
    return 0 if type(x) in _S else numpy.ndim(x)


def sqrt(x: Any) -> Any:
    # math.sqrt is IEEE correctly rounded, as numpy's is; numpy for negatives and non-floats (nan, arrays)
    if type(x) is numpy.float64 and x >= 0.0:
        return numpy.float64(math.sqrt(x))
    return numpy.sqrt(x)


def ceil(x: Any) -> Any:
    if type(x) is numpy.float64 and 0.0 < x < math.inf:  # numpy's for signed zeros and the rest
        return numpy.float64(math.ceil(x))
    return numpy.ceil(x)


def floor(x: Any) -> Any:
    if type(x) is numpy.float64 and 0.0 < x < math.inf:
        return numpy.float64(math.floor(x))
    return numpy.floor(x)


# (only what numpy has already defined: its lazily imported submodules stay lazy)
globals().update({k: v for k, v in vars(numpy).items() if not k.startswith("_") and k not in globals()})
