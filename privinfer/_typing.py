"""Type aliases shared across privinfer."""

from __future__ import annotations

from typing import TypeAlias

import numpy as np
import numpy.typing as npt
import pandas as pd

FloatArray: TypeAlias = npt.NDArray[np.float64]
IntArray: TypeAlias = npt.NDArray[np.int64]
BoolArray: TypeAlias = npt.NDArray[np.bool_]
ArrayLike: TypeAlias = npt.ArrayLike
RandomStateLike: TypeAlias = int | np.random.SeedSequence | np.random.Generator | None
DataFrameLike: TypeAlias = pd.DataFrame

__all__ = [
    "ArrayLike",
    "BoolArray",
    "DataFrameLike",
    "FloatArray",
    "IntArray",
    "RandomStateLike",
]
