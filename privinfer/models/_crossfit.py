"""Cross-fitting: stratified folds, repeated splits from independent child streams."""

from __future__ import annotations

import numpy as np

from privinfer._typing import IntArray
from privinfer.exceptions import FoldError

__all__ = ["draw_folds", "median_aggregate"]


def draw_folds(strata: IntArray, n_folds: int, rng: np.random.Generator) -> IntArray:
    """Fold label of each row, balanced within each stratum (e.g. treatment arm).

    Raises
    ------
    FoldError
        If a stratum has fewer rows than folds (some fold would lack that arm).
    """
    strata = np.asarray(strata)
    folds = np.empty(strata.size, dtype=np.int64)
    for s in np.unique(strata):
        idx = np.flatnonzero(strata == s)
        if idx.size < n_folds:
            raise FoldError(
                f"Treatment level {s!r} has {idx.size} row(s), fewer than n_folds={n_folds}: some "
                "fold would have no unit of that level. Use fewer folds or more data."
            )
        perm = rng.permutation(idx)
        folds[perm] = np.arange(idx.size) % n_folds
    return folds


def median_aggregate(estimates: np.ndarray, ses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Median over repeated splits; SE adds the split-to-split spread (as DoubleML).

    ``se = sqrt(median(se_r^2 + (theta_r - theta_med)^2))``.
    """
    med = np.median(estimates, axis=0)
    se = np.sqrt(np.median(ses**2 + (estimates - med) ** 2, axis=0))
    return med, se
