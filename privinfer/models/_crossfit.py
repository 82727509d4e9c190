"""Cross-fitting: stratified folds, cluster folds, repeated splits from independent streams."""

from __future__ import annotations

import numpy as np

from privinfer._typing import FloatArray, IntArray
from privinfer.exceptions import ClusterError, FoldError

__all__ = [
    "deal_clusters",
    "draw_cluster_folds",
    "draw_folds",
    "draw_split",
    "fold_spread_se",
    "median_aggregate",
    "training_folds",
]


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


def draw_cluster_folds(
    strata: IntArray, clusters: IntArray, n_folds: int, rng: np.random.Generator
) -> IntArray:
    """Fold label of each row such that every cluster lies within one fold.

    Clusters, not rows, are dealt to folds. Treatment is usually not constant within a
    cluster, so exact stratification is impossible; instead each cluster is labelled by
    its most frequent treatment level (ties to the lower code), and the clusters of each
    label are dealt round-robin, in random order, to the folds. Folds then get about the
    same number of mostly-treated and mostly-control clusters.

    Parameters
    ----------
    strata : ndarray of shape (n,)
        Integer treatment codes ``0..L-1``.
    clusters : ndarray of shape (n,)
        Integer cluster codes ``0..G-1`` (the first clustering dimension).
    n_folds : int
        Number of folds.
    rng : Generator
        Source of the random order.

    Returns
    -------
    ndarray of shape (n,)
        Fold label in ``0..n_folds-1``.

    Raises
    ------
    ClusterError
        Fewer clusters than folds.
    FoldError
        A fold without a unit of some treatment level.
    """
    strata = np.asarray(strata, dtype=np.int64)
    clusters = np.asarray(clusters, dtype=np.int64)
    n_groups = int(clusters.max()) + 1
    n_levels = int(strata.max()) + 1
    tab = np.zeros((n_groups, n_levels))
    np.add.at(tab, (clusters, strata), 1.0)
    return deal_clusters(tab, n_folds, rng)[clusters]


def deal_clusters(tab: FloatArray, n_folds: int, rng: np.random.Generator) -> IntArray:
    """Fold of every cluster from its counts per treatment level (``tab``, G x L).

    The dealing of :func:`draw_cluster_folds`, from a table that a data source not in
    memory (the partitions of a Dask frame) adds up cluster by cluster.

    Raises
    ------
    ClusterError
        Fewer clusters than folds.
    FoldError
        A fold without a unit of some treatment level.

    Examples
    --------
    >>> tab = np.array([[3.0, 0.0], [0.0, 2.0], [1.0, 1.0], [2.0, 1.0]])
    >>> sorted(deal_clusters(tab, 2, np.random.default_rng(0)).tolist())
    [0, 0, 1, 1]
    """
    n_groups, n_levels = tab.shape
    if n_groups < n_folds:
        raise ClusterError(
            f"Cluster cross-fitting needs at least n_folds={n_folds} clusters; got {n_groups}. "
            "Use fewer folds."
        )
    label = np.argmax(tab, axis=1)
    cluster_fold = np.empty(n_groups, dtype=np.int64)
    start = 0
    for s in range(n_levels):
        idx = rng.permutation(np.flatnonzero(label == s))
        # continue the round-robin across labels so fold sizes stay balanced
        cluster_fold[idx] = (start + np.arange(idx.size)) % n_folds
        start += idx.size
    present = np.zeros((n_folds, n_levels))
    np.add.at(present, cluster_fold, tab)
    if not (present > 0).all():
        f, s = np.argwhere(present == 0)[0]
        raise FoldError(
            f"Cluster cross-fitting: fold {int(f)} has no unit of treatment level code {int(s)} "
            "(clusters are kept whole). Use fewer folds or more clusters."
        )
    return cluster_fold


def draw_split(
    strata: IntArray, clusters: IntArray | None, n_folds: int, rng: np.random.Generator
) -> IntArray:
    """Folds stratified by ``strata``; whole clusters (first dimension) when clustered."""
    if clusters is None:
        return draw_folds(strata, n_folds, rng)
    return draw_cluster_folds(strata, clusters, n_folds, rng)


def training_folds(f: int, n_folds: int, split: bool) -> tuple[np.ndarray, np.ndarray]:
    """Training folds (boolean masks over folds) of the outcome and the Riesz fits for fold ``f``.

    Without ``split`` both are every other fold. With ``split`` (double cross-fitting) the
    outcome uses the ``n_folds // 2`` folds after ``f`` (cyclically) and the Riesz
    representer the rest, so their estimation errors are independent.

    Examples
    --------
    >>> mu, rho = training_folds(0, 5, True)
    >>> mu.tolist(), rho.tolist()
    ([False, True, True, False, False], [False, False, False, True, True])
    """
    offsets = (np.arange(n_folds) - f) % n_folds
    if not split:
        mask = offsets >= 1
        return mask, mask
    half = n_folds // 2
    return (offsets >= 1) & (offsets <= half), offsets > half


def median_aggregate(estimates: np.ndarray, ses: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Median over repeated splits; SE adds the split-to-split spread (as DoubleML).

    ``se = sqrt(median(se_r^2 + (theta_r - theta_med)^2))``.
    """
    med = np.median(estimates, axis=0)
    se = np.sqrt(np.median(ses**2 + (estimates - med) ** 2, axis=0))
    return med, se


def fold_spread_se(terms: FloatArray, n_rows: FloatArray) -> FloatArray:
    r"""Standard error of a sum of per-fold terms from their spread over the folds.

    ``terms[f] = w_f\Delta_f`` with :math:`w_f = n_f/n` and :math:`\Delta_f` fold ``f``'s
    own value; treating the :math:`\Delta_f` as independent with a common variance
    :math:`\sigma^2`, :math:`\mathrm{var}(\sum_f w_f\Delta_f) = \sigma^2\sum_f w_f^2`
    with :math:`\hat\sigma^2 = \frac{F}{F-1}\sum_f w_f(\Delta_f - \bar\Delta)^2`.

    Examples
    --------
    >>> fold_spread_se(np.array([[0.1], [0.3]]), np.array([1.0, 1.0])).round(3).tolist()
    [0.2]
    """
    terms = np.asarray(terms, dtype=float)
    w = np.asarray(n_rows, dtype=float) / float(np.sum(n_rows))
    F = w.size
    if F < 2:
        return np.zeros(terms.shape[1:])
    delta = terms / w.reshape((-1,) + (1,) * (terms.ndim - 1))
    total = terms.sum(axis=0)
    s2 = F / (F - 1) * np.tensordot(w, (delta - total) ** 2, 1)
    return np.sqrt(s2 * float(w @ w))
