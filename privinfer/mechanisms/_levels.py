"""Codes of a column's values among a categorical reference's public levels.

A level matches a value when they are equal in Python (``True == 1``, ``1 == 1.0``), the
rule :meth:`~privinfer.reference.Categorical.out_of_support` checks membership with. A
``pandas.Categorical`` built with ``categories=levels`` matches by type as well, so bool
data under levels ``[0, 1]`` (or integer data under ``[False, True]``) pass the support
check and would become missing values there.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from privinfer.exceptions import OutOfSupportError

__all__ = ["as_levels", "level_codes"]


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
                f"{list(levels)!r} of its reference."
            )
        codes[unmatched] = mapped
    return codes


def as_levels(values: pd.Series, levels: Sequence[Any], column: str) -> pd.Categorical:
    """``values`` as a categorical over ``levels``, each value replaced by its level."""
    return pd.Categorical.from_codes(level_codes(values, levels, column), categories=list(levels))
