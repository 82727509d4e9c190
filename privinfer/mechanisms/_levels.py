"""Codes of a column's values among a categorical reference's public levels, and the
categories a release keeps for its public categorical columns.

A level matches a value when they are equal in Python (``True == 1``, ``1 == 1.0``), the
rule :meth:`~privinfer.reference.Categorical.out_of_support` checks membership with. A
``pandas.Categorical`` built with ``categories=levels`` matches by type as well, so bool
data under levels ``[0, 1]`` (or integer data under ``[False, True]``) pass the support
check and would become missing values there.

**Categories of public columns.** A pandas categorical column carries its category list
next to its values. For a public column that list is not part of any declared schema
(the mechanism declares levels for its private columns only), and a category that no row
takes says something the rows do not: typically that rows of that category were removed
before the release. A release therefore keeps, for every public categorical column, only
the categories that occur in its rows, in their original order (``ordered`` kept).
Private categorical columns keep the levels of their reference, which are part of the
mechanism.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from privinfer.exceptions import OutOfSupportError
from privinfer.mechanisms.reference import levels_text

__all__ = [
    "as_levels", "drop_unused_categories", "level_codes", "union_used", "used_categories",
]


def level_codes(values: pd.Series, levels: Sequence[Any], column: str) -> np.ndarray:
    """Integer code of every value among ``levels`` (equality as in Python).

    Raises
    ------
    OutOfSupportError
        A non-missing value equals none of the levels.
    """
    codes = pd.Categorical(values, categories=list(levels)).codes.astype(np.int64)
    unmatched = (codes < 0) & values.notna().to_numpy()
    if unmatched.any():  # a type mismatch: match by value
        # object indexes compare by Python equality (hashing), as ``isin`` does
        rest = values[unmatched].astype(object)
        mapped = pd.Index(list(levels), dtype=object).get_indexer(rest)
        if np.any(mapped < 0):
            bad = rest[mapped < 0].unique()[:5].tolist()
            raise OutOfSupportError(
                f"column {column!r} holds values {bad!r} outside the public levels "
                f"{levels_text(levels)} of its reference."
            )
        codes[unmatched] = mapped
    return codes


def as_levels(values: pd.Series, levels: Sequence[Any], column: str) -> pd.Categorical:
    """``values`` as a categorical over ``levels``, each value replaced by its level."""
    return pd.Categorical.from_codes(level_codes(values, levels, column), categories=list(levels))


def _categorical(frame: pd.DataFrame, columns: Iterable[str]) -> list[str]:
    """The ``columns`` of ``frame`` with a categorical dtype."""
    return [c for c in columns
            if c in frame.columns and isinstance(frame[c].dtype, pd.CategoricalDtype)]


def drop_unused_categories(frame: pd.DataFrame, columns: Iterable[str]) -> pd.DataFrame:
    """``frame`` (the same object when nothing changes, else a copy) whose categorical
    ``columns`` keep only the categories that some row takes (order and ``ordered`` kept).

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"s": pd.Categorical(["a", "b"], categories=["a", "b", "gone"])})
    >>> drop_unused_categories(f, ["s"])["s"].cat.categories.tolist()
    ['a', 'b']
    """
    out = frame
    for col in _categorical(frame, columns):
        values = frame[col]
        if len(values.cat.categories) != values.cat.codes[values.cat.codes >= 0].nunique():
            if out is frame:
                out = frame.copy()
            out[col] = values.cat.remove_unused_categories()
    return out


def used_categories(frame: pd.DataFrame, columns: Iterable[str]
                    ) -> dict[str, tuple[list[Any], list[bool]]]:
    """For each categorical column among ``columns``: its categories and whether some row
    takes each (combined over the partitions of a Dask release by :func:`union_used`).

    Examples
    --------
    >>> import pandas as pd
    >>> f = pd.DataFrame({"s": pd.Categorical(["b"], categories=["a", "b"])})
    >>> used_categories(f, ["s"])
    {'s': (['a', 'b'], [False, True])}
    """
    found = {}
    for col in _categorical(frame, columns):
        cats = frame[col].cat.categories
        codes = frame[col].cat.codes.to_numpy()
        taken = np.zeros(len(cats), dtype=bool)
        taken[codes[codes >= 0]] = True
        found[col] = (cats.tolist(), taken.tolist())
    return found


def union_used(parts: Sequence[dict[str, tuple[list[Any], list[bool]]]]
               ) -> dict[str, list[Any]]:
    """The categories some row of some part takes, per column, in the order of the parts'
    category lists (the shared order when the parts share their categories).

    Examples
    --------
    >>> union_used([{"s": (["a", "b", "c"], [False, True, False])},
    ...             {"s": (["a", "b", "c"], [True, False, False])}])
    {'s': ['a', 'b']}
    """
    order: dict[str, dict[Any, bool]] = {}
    for part in parts:
        for col, (cats, taken) in part.items():
            seen = order.setdefault(col, {})
            for cat, t in zip(cats, taken, strict=True):
                seen[cat] = seen.get(cat, False) or t
    return {col: [c for c, t in seen.items() if t] for col, seen in order.items()}
