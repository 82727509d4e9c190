"""Holder side of the one-bit mechanisms: row order, index and published columns.

:class:`~privinfer.PrivateMean`, :class:`~privinfer.pml.BinaryMechanism` and
:class:`~privinfer.pml.PMLTest` protect the released bit, and nothing else about a
record. Bits published in the raw row order, or under the raw index, reveal whatever that
order or index reveals: the ranks of the private values in a file sorted by them, the
values themselves in an index built from them. Two entry points share the rules here:

* ``privatize(x)`` keeps the positions of ``x`` (callers pair the bits with public columns
  by position) and so refuses input whose order visibly reveals the values
  (:func:`~privinfer.mechanisms._leaks.order_leak`) and a Series whose index is not the
  default ``RangeIndex``;
* ``release(data, private, public=...)`` publishes a new frame: the bit column and the
  declared public columns, rows shuffled jointly, a fresh ``RangeIndex``, nothing copied
  from the raw frame's metadata, after the leak checks of
  :func:`~privinfer.mechanisms._leaks.find_leaks` on the public columns. A categorical
  public column keeps only the categories that some row takes (the rule of
  :mod:`privinfer.mechanisms._levels`).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from privinfer._frames import as_pandas
from privinfer._typing import ArrayLike, IntArray, RandomStateLike
from privinfer._validation import check_random_state, user_stacklevel, warn_if_seeded
from privinfer.exceptions import (
    AlreadyReleasedError,
    DataMismatchError,
    DerivedColumnError,
    RowOrderError,
    UndeclaredColumnWarning,
)
from privinfer.mechanisms._leaks import find_leaks, format_leaks, order_leak
from privinfer.mechanisms._levels import drop_unused_categories

__all__ = ["BITS_RELEASE_KEY", "as_released", "check_row_order", "release_bits"]

#: Key under which a frame from ``release`` carries the release's description.
BITS_RELEASE_KEY = "privinfer_bits_release"

#: The key of an alpha-identity release's mechanism description
#: (``privinfer.mechanisms.alpha_identity.ATTRS_KEY``; that module imports this package).
_MECHANISM_KEY = "privinfer_mechanism"

#: Draws the bits of validated values with a generator (no order checks).
DrawBits = Callable[[np.ndarray, np.random.Generator], IntArray]


def check_row_order(x: ArrayLike, owner: str, remedy: str) -> None:
    """Refuse input whose index or row order would reveal the private values.

    Parameters
    ----------
    x : array-like, Series or DataFrame
        The records in the order in which their bits would be returned: shape (n,) or
        (n, d), values already validated by the mechanism.
    owner : str
        The calling function, for messages.
    remedy : str
        What to do instead (names the ``release`` method where there is one).

    Raises
    ------
    RowOrderError
        A Series or DataFrame index other than the default ``RangeIndex``, or an order
        flagged by :func:`~privinfer.mechanisms._leaks.order_leak` in any column.
    """
    if isinstance(x, pd.Series | pd.DataFrame) and not x.index.equals(pd.RangeIndex(len(x))):
        raise RowOrderError(
            f"{owner}: x has an index other than the default RangeIndex(0..n-1) "
            f"({type(x.index).__name__}, first labels {list(x.index[:3])!r}). The bits are "
            "returned by position with a fresh RangeIndex, so the input's index (which may "
            "be built from the private values, e.g. an identifier sorted by them) never "
            "travels with them; bits re-indexed that way would silently misalign with "
            f"columns aligned on the old index, so this input is refused. {remedy}"
        )
    arr = np.asarray(x)
    columns = arr.reshape(arr.shape[0], -1).T if arr.ndim >= 1 and arr.size else []
    for j, column in enumerate(columns):
        relation = order_leak(pd.Series(column))
        if relation is not None:
            which = f" (column {j})" if len(columns) > 1 else ""
            raise RowOrderError(
                f"{owner}: the row order of x reveals its values{which}: {relation}. The "
                "bits keep the positions of x, and a published order shows the private "
                f"values' ranks whatever eps is. {remedy}"
            )


def as_released(x: ArrayLike, bits: IntArray) -> IntArray | pd.Series:
    """The bits as ``privatize`` returns them: a Series for Series input, else an array.

    A Series gets a fresh ``RangeIndex`` (equal to the input's, which
    :func:`check_row_order` requires to be the default) and keeps the input's name.
    """
    if isinstance(x, pd.Series):
        return pd.Series(bits, index=pd.RangeIndex(bits.shape[0]), name=x.name)
    return bits


def release_bits(
    draw: DrawBits,
    data: Any,
    private: Hashable | Sequence[Hashable],
    *,
    public: Sequence[Hashable] | None,
    name: Hashable | None,
    shuffle: bool,
    random_state: RandomStateLike,
    owner: str,
    mechanism: str,
) -> pd.DataFrame:
    """A new frame with one released bit per record and the declared public columns.

    The shared implementation of the mechanisms' ``release`` methods (see their
    docstrings for the user-facing contract). Nothing is returned when a check fails.
    """
    hint = f" For a numpy array use {owner.split('.')[0]}.privatize(...)."
    data = as_pandas(data, owner, array_hint=hint)
    if BITS_RELEASE_KEY in data.attrs or _MECHANISM_KEY in data.attrs:
        raise AlreadyReleasedError(
            f"{owner}: these data already are a privinfer release (their attrs carry a "
            "release description); release the raw records once."
        )
    if not isinstance(shuffle, bool):
        raise TypeError(f"{owner}: shuffle must be a bool; got {shuffle!r}.")
    duplicated = sorted({str(c) for c in data.columns[data.columns.duplicated()]})
    if duplicated:
        raise DataMismatchError(
            f"{owner}: the data hold duplicated column name(s) {duplicated!r}; every column "
            "must have a unique name (rename or drop the duplicates)."
        )
    private_cols = _column_list(private, "private", owner, allow_single=True)
    if not private_cols:
        raise DataMismatchError(f"{owner}: name at least one private column.")
    public_cols = _column_list(public, "public", owner, allow_single=False)
    absent = [c for c in [*private_cols, *public_cols] if c not in data.columns]
    if absent:
        raise DataMismatchError(
            f"{owner}: column(s) {absent!r} are not in the data (columns present: "
            f"{list(data.columns)!r})."
        )
    clash = [c for c in public_cols if c in private_cols]
    if clash:
        raise DataMismatchError(
            f"{owner}: column(s) {clash!r} are private and cannot also be declared public."
        )
    if name is None:
        if len(private_cols) > 1:
            raise DataMismatchError(
                f"{owner}: the bit of the private columns {private_cols!r} needs a column "
                "name; pass name=..."
            )
        name = private_cols[0]
    if name in public_cols:
        raise DataMismatchError(
            f"{owner}: the bit column's name {name!r} is a declared public column; pass "
            "another name=..."
        )
    leaks = find_leaks(data, [str(c) for c in private_cols], public_cols)
    if leaks:
        raise DerivedColumnError(
            f"{owner}: published public column(s) reveal the private ones, whatever the bit "
            f"shows:\n{format_leaks(leaks)}\nDrop these columns from public=[...] or "
            "release them through a mechanism of their own."
        )
    values = data[private_cols].to_numpy()
    if len(private_cols) == 1:
        values = values[:, 0]
    warn_if_seeded(random_state, owner, stacklevel=user_stacklevel() + 1)
    rng = check_random_state(random_state)
    bits = draw(values, rng)  # validates the values; raises before anything is released
    n = len(data)
    columns: dict[Hashable, Any] = {}
    for col in data.columns:
        if col in private_cols and name not in columns:
            columns[name] = bits
        elif col in public_cols:
            columns[col] = data[col].array  # keeps the dtype; copied by the constructor
    out = pd.DataFrame(columns, index=pd.RangeIndex(n), copy=True)
    # a category of a public column that no row takes would tell of removed rows
    out = drop_unused_categories(out, public_cols)
    if shuffle:
        out = out.take(rng.permutation(n))
        out.index = pd.RangeIndex(n)
    dropped = [c for c in data.columns if c not in private_cols and c not in public_cols]
    if dropped:
        warnings.warn(
            f"{owner}: {len(dropped)} column(s) neither private nor declared public were "
            f"dropped from the release: {dropped!r}. Declare the ones to publish with "
            "public=[...].",
            UndeclaredColumnWarning,
            stacklevel=user_stacklevel(),
        )
    out.attrs = {
        BITS_RELEASE_KEY: {
            "mechanism": mechanism,
            "bit": str(name),
            "private": [str(c) for c in private_cols],
            "public": [str(c) for c in public_cols],
            "dropped": [str(c) for c in dropped],
            "shuffled": shuffle,
            "leak_check": "passed",
            "n_rows": n,
        }
    }
    return out


def _column_list(
    cols: Hashable | Sequence[Hashable] | None, what: str, owner: str, *, allow_single: bool
) -> list[Hashable]:
    """Column names as a list: ``None`` is empty; a single name only where allowed."""
    if cols is None:
        return []
    if isinstance(cols, str) or not isinstance(cols, Sequence | pd.Index):
        if allow_single and isinstance(cols, Hashable):
            return [cols]
        raise TypeError(f"{owner}: {what} must be a list of column names; got {cols!r}.")
    return list(cols)
