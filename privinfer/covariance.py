r"""Covariance estimators shared by every privinfer model: clusters, influence, moments, sandwich.

Every private estimator reduces to averages of *private rows* (transformed influence
values :math:`\varphi_i` or private moment rows :math:`\bar\phi_i`), which are independent
across released rows, or across public clusters. This module holds the one
implementation of

* public cluster codes, one-way or two-way (:func:`cluster_codes`,
  :func:`cluster_codes_from_frame`);
* within-cluster sums (:func:`cluster_sums`) and their outer products, accumulated
  chunk by chunk (:class:`OuterAccumulator`);
* the covariance of an estimate from its influence values (:func:`influence_cov`) and of
  a mean moment (:func:`moment_covariance`), with an optional small-G correction;
* the GMM sandwich (:func:`sandwich`).

One-way clustering sums the rows within each cluster,
:math:`\hat\Omega = \frac1n\sum_g s_gs_g'`, :math:`s_g = \sum_{i\in g}r_i`; two-way
clustering (Cameron, Gelbach and Miller 2011) uses
:math:`\hat\Omega_1 + \hat\Omega_2 - \hat\Omega_{12}` with the last term clustered on the
intersections, and floors negative eigenvalues at zero. The optional small-G correction
multiplies a one-way clustered estimate by :math:`G/(G-1)` (each two-way term by its own
:math:`G_k/(G_k-1)`), as Stata and linearmodels' ``debiased`` cluster option do for the
number of clusters.

The rows are the *private* rows, i.e. the inverted values: their outer products estimate
the released-data variance :math:`P_{VZ}\bar\phi\bar\phi'` (Kormos and van der Vaart 2026,
Proposition 2), which is what the standard errors need. Applying :math:`Q_X^{-1}` to the
products instead would estimate the non-private variance and understate the errors.

References
----------
Cameron, A. C., Gelbach, J. B. and Miller, D. L. (2011). Robust inference with multiway
clustering. Journal of Business & Economic Statistics 29(2).
Cameron, A. C. and Miller, D. L. (2015). A practitioner's guide to cluster-robust
inference. Journal of Human Resources 50(2).
Kormos, M. and van der Vaart, A. (2026). Private rate-double-robust inference.
arXiv:2606.20427.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from privinfer._typing import FloatArray, IntArray
from privinfer.exceptions import ClusterError, FewClustersWarning

__all__ = [
    "MIN_CLUSTERS",
    "OuterAccumulator",
    "cluster_codes",
    "cluster_codes_from_frame",
    "cluster_counts",
    "cluster_sums",
    "influence_cov",
    "moment_covariance",
    "outer_from_sums",
    "sandwich",
    "warn_few_clusters",
]

#: A FewClustersWarning fires under this many clusters (in any cluster dimension). In the
#: clustered held-out designs of ``benchmarks/validate.py`` the intervals held with 100 and
#: 160 clusters (n = 4000) and under-covered at alpha = 1 with 25 and 40 (n = 1000:
#: coverage 0.80-0.88); Cameron and Miller (2015) put the line between 20 and 50.
MIN_CLUSTERS = 50


def _factorize(labels: Any, what: str, owner: str) -> IntArray:
    series = labels if isinstance(labels, pd.Series) else pd.Series(np.asarray(labels))
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    if np.any(codes < 0):
        raise ClusterError(f"{owner}: {what} holds {int(np.sum(codes < 0))} missing label(s).")
    if uniques.size < 2:
        raise ClusterError(
            f"{owner}: cluster-robust inference needs at least 2 clusters; {what} has "
            f"{uniques.size}."
        )
    return np.asarray(codes, dtype=np.int64)


def cluster_codes(clusters: Any, n_obs: int, owner: str) -> IntArray:
    """Integer codes ``0..G-1`` of public cluster labels: shape (n,) one-way, (n, 2) two-way.

    Parameters
    ----------
    clusters : array-like of shape (n,) or (n, 2), or DataFrame with one or two columns
        Public cluster labels of any hashable type.
    n_obs : int
        Number of rows the labels must cover.
    owner : str
        Caller named in error messages.

    Returns
    -------
    ndarray of int64, shape (n,) or (n, 2)

    Raises
    ------
    ClusterError
        Wrong shape, missing labels, more than two dimensions or fewer than 2 clusters.

    Examples
    --------
    >>> cluster_codes(["a", "b", "a"], 3, "demo").tolist()
    [0, 1, 0]
    >>> cluster_codes([[1, 5], [1, 6], [2, 5]], 3, "demo").tolist()
    [[0, 0], [0, 1], [1, 0]]
    """
    frame = clusters if isinstance(clusters, pd.DataFrame) else None
    arr = np.asarray(clusters, dtype=object) if frame is None else frame.to_numpy(dtype=object)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.shape[:1] != (n_obs,) or arr.ndim > 2 or (arr.ndim == 2 and arr.shape[1] != 2):
        raise ClusterError(
            f"{owner}: clusters must hold one label per row ({n_obs}), in one column (one-way) "
            f"or two (two-way); got shape {arr.shape}."
        )
    if arr.ndim == 1:
        return _factorize(arr, "clusters", owner)
    return np.column_stack(
        [_factorize(arr[:, j], f"cluster dimension {j}", owner) for j in range(2)]
    )


def cluster_codes_from_frame(
    data: pd.DataFrame, cluster: str | Sequence[str] | None, private: Sequence[str], owner: str
) -> tuple[tuple[str, ...], IntArray | None]:
    """Codes of one or two public cluster *columns* of ``data`` (``None`` when not clustered).

    Parameters
    ----------
    data : DataFrame
        Released data.
    cluster : str, list of one or two str, or None
        Cluster column name(s).
    private : sequence of str
        Columns covered by the mechanism (cluster labels must be public).
    owner : str
        Caller named in error messages.

    Returns
    -------
    names : tuple of str
    codes : ndarray of shape (n,) or (n, 2), or None

    Raises
    ------
    ClusterError
        Unknown, private or constant cluster column, missing labels.

    Examples
    --------
    >>> import pandas as pd
    >>> df = pd.DataFrame({"g": ["a", "b", "a"], "x": [0.1, 0.2, 0.3]})
    >>> names, codes = cluster_codes_from_frame(df, "g", ["x"], "demo")
    >>> names, codes.tolist()
    (('g',), [0, 1, 0])
    """
    if cluster is None:
        return (), None
    names = cluster_columns(list(data.columns), cluster, private, owner)
    codes = [_factorize(data[col], f"cluster column {col!r}", owner) for col in names]
    arr = codes[0] if len(codes) == 1 else np.column_stack(codes)
    return tuple(names), arr


def cluster_columns(
    columns: Sequence[Any], cluster: str | Sequence[str], private: Sequence[str], owner: str
) -> list[str]:
    """The cluster column names, checked against the data's ``columns`` (no data read).

    Raises
    ------
    ClusterError
        Not one or two names, an unknown or a private column.
    """
    names = [cluster] if isinstance(cluster, str) else list(cluster)
    if not names or len(names) > 2 or not all(isinstance(c, str) for c in names):
        raise ClusterError(
            f"{owner}: cluster must be a column name or a list of one or two column names; "
            f"got {cluster!r}."
        )
    for col in names:
        if col not in columns:
            raise ClusterError(
                f"{owner}: cluster column {col!r} is not in the data (columns: "
                f"{list(columns)!r})."
            )
        if col in private:
            raise ClusterError(
                f"{owner}: cluster column {col!r} is covered by the mechanism; cluster labels "
                "must be public (they group released rows for the variance)."
            )
    return names


def cluster_counts(codes: IntArray) -> tuple[int, ...]:
    """Number of clusters in each dimension of ``codes``.

    Examples
    --------
    >>> import numpy as np
    >>> cluster_counts(np.array([0, 1, 1, 2]))
    (3,)
    """
    arr = np.asarray(codes)
    if arr.ndim == 1:
        return (int(arr.max()) + 1,)
    return tuple(int(arr[:, j].max()) + 1 for j in range(arr.shape[1]))


def warn_few_clusters(
    owner: str,
    counts: Sequence[int],
    n_obs: int,
    *,
    summed: str,
    worst_case: str,
    stacklevel: int,
) -> None:
    r"""Warn (:class:`~privinfer.exceptions.FewClustersWarning`) when a dimension has few
    clusters, naming the sample size needed.

    With :math:`G = \min_k G_k < G_{\min}` (:data:`MIN_CLUSTERS`) clusters the cluster-robust
    variance, a spread estimated from :math:`G` cluster sums, is too small and too noisy
    (Cameron and Miller, 2015). At the same cluster size :math:`n/G`, about
    :math:`n \, G_{\min} / G` rows would be needed.

    Parameters
    ----------
    owner : str
        Model named in the message.
    counts : sequence of int
        Number of clusters in each dimension (nothing is checked when empty).
    n_obs : int
        Number of rows.
    summed : str
        What the clusters sum (e.g. ``"influence values"``, ``"moment rows"``).
    worst_case : str
        The design where few clusters hurt most (e.g. ``"whole clusters are treated"``).
    stacklevel : int
        Frames above the caller of this function at which the warning points, as for
        :func:`warnings.warn` called there.
    """
    if not counts or min(counts) >= MIN_CLUSTERS:
        return
    g = int(min(counts))
    need = int(np.ceil(MIN_CLUSTERS * n_obs / g))
    warnings.warn(
        f"{owner}: only {g} clusters: cluster-robust standard errors estimate the spread "
        f"of the clusters' sums of {summed} from the clusters alone, and with fewer than "
        f"about {MIN_CLUSTERS} they are too small and noisy (Cameron and Miller, 2015), the "
        f"more so when {worst_case}; about n >= {need} rows in {MIN_CLUSTERS} clusters of "
        "this size would be needed. Read the interval as indicative.",
        FewClustersWarning,
        stacklevel=stacklevel + 1,
    )


def cluster_sums(rows: FloatArray, codes: IntArray, n_groups: int | None = None) -> FloatArray:
    """Sums of the rows of ``rows`` within each one-way cluster code (G x p).

    Examples
    --------
    >>> import numpy as np
    >>> cluster_sums(np.array([[1.0], [2.0], [3.0]]), np.array([0, 1, 0])).tolist()
    [[4.0], [2.0]]
    """
    g = int(codes.max()) + 1 if n_groups is None else n_groups
    rows = np.asarray(rows, dtype=float)
    out = np.empty((g, rows.shape[1]))
    for j in range(rows.shape[1]):  # one bincount per column: O(n p), no (n x G) temporaries
        out[:, j] = np.bincount(codes, weights=rows[:, j], minlength=g)
    return out


def _intersections(codes: IntArray) -> IntArray:
    inter = pd.factorize(pd.MultiIndex.from_arrays([codes[:, 0], codes[:, 1]]))[0]
    return np.asarray(inter, dtype=np.int64)


def _psd(V: FloatArray) -> FloatArray:
    V = 0.5 * (V + V.T)
    w, U = np.linalg.eigh(V)
    if np.any(w < 0):
        V = (U * np.maximum(w, 0.0)) @ U.T
    return V


class OuterAccumulator:
    r"""Accumulate :math:`\sum_u s_us_u'` over units (rows or clusters), chunk by chunk.

    Parameters
    ----------
    k : int
        Number of columns of the rows.
    codes : ndarray of shape (n,) or (n, 2), optional
        Cluster codes (rows are the units when ``None``).
    small_g : bool, default=False
        Multiply each clustered term by :math:`G/(G-1)`.

    Examples
    --------
    >>> import numpy as np
    >>> acc = OuterAccumulator(1, np.array([0, 0, 1, 1]))
    >>> acc.add(np.array([[1.0], [1.0]]), slice(0, 2))
    >>> acc.add(np.array([[-1.0], [-1.0]]), slice(2, 4))
    >>> acc.result(4).tolist()  # (2^2 + 2^2) / 4
    [[2.0]]
    """

    def __init__(self, k: int, codes: IntArray | None = None, *, small_g: bool = False) -> None:
        self.k = k
        self.codes = None if codes is None else np.asarray(codes)
        self.small_g = small_g
        if self.codes is None:
            self._dims: list[IntArray] = []
            self._acc = np.zeros((k, k))
            return
        if self.codes.ndim == 1:
            self._dims = [self.codes]
        else:
            self._dims = [self.codes[:, 0], self.codes[:, 1], _intersections(self.codes)]
        self._sizes = [int(c.max()) + 1 for c in self._dims]
        self._sums = [np.zeros((g, k)) for g in self._sizes]

    def add(self, rows: FloatArray, where: slice) -> None:
        """Add the rows ``where`` of the data (``rows`` holds their values)."""
        if self.codes is None:
            self._acc += rows.T @ rows
            return
        for c, g, s in zip(self._dims, self._sizes, self._sums, strict=True):
            s += cluster_sums(rows, c[where], g)

    def result(self, n_obs: int) -> FloatArray:
        r"""The accumulated :math:`\frac1n\sum_u s_us_u'` (two-way: the CGM combination)."""
        if self.codes is None:
            return self._acc / n_obs
        return outer_from_sums(self._sums, n_obs, small_g=self.small_g)


def outer_from_sums(
    sums: Sequence[FloatArray], n_obs: int, *, small_g: bool = False
) -> FloatArray:
    r"""Clustered :math:`\frac1n\sum_g s_gs_g'` from the within-cluster sums themselves.

    For sums reduced elsewhere (e.g. a group-by over the partitions of a Dask frame):
    one array of shape (G, k) for one-way clustering, three (first dimension, second
    dimension, intersections) for two-way, combined as :class:`OuterAccumulator` does,
    small-G correction included.

    Examples
    --------
    >>> import numpy as np
    >>> float(outer_from_sums([np.array([[2.0], [-2.0]])], 4)[0, 0])
    2.0
    """
    terms = []
    for s in sums:
        g = s.shape[0]
        f = g / (g - 1.0) if small_g and g > 1 else 1.0
        terms.append(f * (s.T @ s) / n_obs)
    if len(terms) == 1:
        return terms[0]
    return _psd(terms[0] + terms[1] - terms[2])


def moment_covariance(
    rows: FloatArray,
    clusters: IntArray | None = None,
    *,
    center: bool = False,
    small_g: bool = False,
) -> FloatArray:
    r"""Covariance of the mean of private rows, :math:`n\,\widehat{\mathrm{Var}}(\bar r)`.

    Parameters
    ----------
    rows : ndarray of shape (n, k)
        Private moment rows :math:`\bar\phi_i` (inverted values; see the module notes).
    clusters : ndarray of shape (n,) or (n, 2), optional
        Integer cluster codes (one- or two-way).
    center : bool, default=False
        Subtract the mean row first (linearmodels' ``center``).
    small_g : bool, default=False
        Small-number-of-clusters correction :math:`G/(G-1)`.

    Returns
    -------
    ndarray of shape (k, k)
        :math:`\frac1n\sum_i r_ir_i'` or :math:`\frac1n\sum_g s_gs_g'`.

    Examples
    --------
    >>> import numpy as np
    >>> r = np.array([[1.0], [1.0], [-1.0], [-1.0]])
    >>> float(moment_covariance(r)[0, 0]), float(moment_covariance(r, np.array([0, 0, 1, 1]))[0, 0])
    (1.0, 2.0)
    """
    rows = np.asarray(rows, dtype=float)
    g = rows - rows.mean(axis=0) if center else rows
    acc = OuterAccumulator(g.shape[1], clusters, small_g=small_g)
    acc.add(g, slice(0, g.shape[0]))
    return acc.result(g.shape[0])


def influence_cov(
    phi: FloatArray, clusters: IntArray | None = None, *, small_g: bool = False
) -> FloatArray:
    r"""Covariance of an estimate from its (centred) influence values.

    Parameters
    ----------
    phi : ndarray of shape (n, p)
        Influence values :math:`\varphi_i`.
    clusters : ndarray of shape (n,) or (n, 2), optional
        Integer cluster codes; two columns give two-way clustering.
    small_g : bool, default=False
        Small-number-of-clusters correction :math:`G/(G-1)`.

    Returns
    -------
    ndarray of shape (p, p)
        :math:`\frac1{n^2}\sum_i\varphi_i\varphi_i'` or its clustered version.

    Notes
    -----
    Without clusters :math:`V = \frac1{n^2}\sum_i\varphi_i\varphi_i'`. One-way:
    :math:`V = \frac1{n^2}\sum_g S_gS_g'`, :math:`S_g = \sum_{i\in g}\varphi_i` (as
    linearmodels' ``cov_type="clustered"`` without small-sample corrections). Two-way
    (Cameron, Gelbach and Miller 2011): :math:`V = V_1 + V_2 - V_{12}` with
    :math:`V_{12}` clustered on the intersections; negative eigenvalues are set to zero.
    Also importable as ``privinfer.results.influence_cov``.

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.array([[1.0], [1.0], [-1.0], [-1.0]])
    >>> float(influence_cov(phi)[0, 0]), float(influence_cov(phi, np.array([0, 0, 1, 1]))[0, 0])
    (0.25, 0.5)
    """
    phi = np.asarray(phi, dtype=float)
    return moment_covariance(phi, clusters, small_g=small_g) / phi.shape[0]


def sandwich(
    D: FloatArray, A: FloatArray, Phi: FloatArray, n_obs: int
) -> tuple[FloatArray, FloatArray]:
    r"""GMM sandwich :math:`(D'AD)^{-1}D'A\Phi AD(D'AD)^{-1}/n` and the influence map.

    Parameters
    ----------
    D : ndarray of shape (k_moms, k_params)
        Jacobian of the mean moment.
    A : ndarray of shape (k_moms, k_moms)
        Weighting matrix.
    Phi : ndarray of shape (k_moms, k_moms)
        Covariance of the moment rows (:func:`moment_covariance`).
    n_obs : int
        Number of rows.

    Returns
    -------
    cov : ndarray of shape (k_params, k_params)
    bread : ndarray of shape (k_params, k_moms)
        :math:`B = -(D'AD)^{-1}D'A`; the influence value of row ``i`` is
        :math:`B\bar\phi_i`.

    Examples
    --------
    >>> import numpy as np
    >>> cov, bread = sandwich(-np.eye(1), np.eye(1), np.array([[4.0]]), 100)
    >>> float(cov[0, 0]), float(bread[0, 0])
    (0.04, 1.0)
    """
    DA = D.T @ A
    H = DA @ D
    bread = -np.linalg.solve(H, DA)
    cov = bread @ Phi @ bread.T / n_obs
    return 0.5 * (cov + cov.T), bread
