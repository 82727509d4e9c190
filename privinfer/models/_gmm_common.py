r"""Pieces shared by every private GMM engine: options, fit record, engine base, J-test.

An engine turns validated :class:`FitOptions` and a random generator into a frozen
:class:`GMMFit`; the :class:`~privinfer.models.gmm.PrivateGMM` façade turns that into
results. The covariance algebra (clusters, moment covariance, sandwich) lives in
:mod:`privinfer.covariance`, shared with the other models.

All engines act on the *private* moment rows
:math:`\bar\phi_i = (Q_X^{-1}\phi_{\hat\theta})(V_i, Z_i)`, which are i.i.d. under
:math:`P_{VZ}` with mean zero at :math:`\theta_0` (Kormos and van der Vaart 2026,
Proposition 2); their covariance is the outer-product average of the inverted values.
"""

from __future__ import annotations

import warnings
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import chi2

from privinfer._typing import FloatArray
from privinfer._validation import check_in_interval, check_int
from privinfer.covariance import cluster_codes, cluster_counts, warn_few_clusters
from privinfer.exceptions import (
    ClusterError,
    DataMismatchError,
    NonRobustCovarianceWarning,
    SingularDesignError,
)
from privinfer.mechanisms.alpha_identity import AlphaIdentity
from privinfer.models._diagnose import weights_n_eff_fact
from privinfer.models._inputs import check_frame, resolve_mechanism
from privinfer.nuisance.series import GramRepair
from privinfer.results import TestResult

__all__ = [
    "FitOptions",
    "GMMEngine",
    "GMMFit",
    "check_inputs",
    "check_nonsingular",
    "check_start",
    "fit_options",
    "inv_cov",
    "j_statistic",
    "weights_facts",
]


@dataclass(frozen=True)
class FitOptions:
    """Validated options of one ``PrivateGMM.fit`` call (loop state stays in locals).

    Attributes
    ----------
    weighting : {"one-step", "two-step", "iterated"}
    cov_type : {"robust", "clustered", "nonrobust"}
    codes : ndarray of shape (n,) or (n, 2), or None
        Public cluster codes.
    center : bool
        Centre the moment rows before forming their covariance.
    small_g : bool
        Small-number-of-clusters correction ``G / (G - 1)``.
    initial_weight : ndarray or None
        First-step weighting matrix.
    start : ndarray or None
        Starting values (generic engine).
    max_iter : int
    tol : float
    owner : str
        Caller named in messages.
    """

    weighting: str
    cov_type: str
    codes: Any
    center: bool
    small_g: bool
    initial_weight: FloatArray | None
    start: FloatArray | None
    max_iter: int
    tol: float
    owner: str

    @property
    def label(self) -> str:
        """Covariance label for the summary header (the SE type, stated explicitly)."""
        if self.cov_type == "nonrobust":
            return "non-robust"
        if self.codes is None:
            base = "robust (HC0)"
        else:
            groups = getattr(self.codes, "counts", None) or cluster_counts(self.codes)
            counts = " x ".join(str(g) for g in groups)
            base = f"cluster ({counts})" + (", G/(G-1)" if self.small_g else "")
        return base + (" (centred)" if self.center else "")


@dataclass(frozen=True)
class GMMFit:
    """What an engine hands to the façade: estimates, covariance, influence, diagnostics.

    Parameters are in the order of the engine's ``param_names``; nothing here holds
    released or raw private values row by row except the influence values.
    """

    params: FloatArray
    cov: FloatArray
    influence: FloatArray
    tests: Mapping[str, TestResult]
    facts: tuple[tuple[str, str], ...]
    repairs: tuple[GramRepair, ...] = ()
    notes: tuple[str, ...] = ()
    reference_error: Mapping[str, float] = field(default_factory=dict)
    reference_points: int = 0
    reference_exact: bool = True
    n_steps: int = 1
    rsquared: float | None = None
    margeff: Any = None
    weak_iv: Any = None


class GMMEngine(ABC):
    """One way of computing private moments; ``fit(options, rng) -> GMMFit``.

    Attributes
    ----------
    kind : str
        ``"ols"``, ``"iv"``, ``"logit"`` or ``"generic"``.
    mechanism : AlphaIdentity
    param_names : tuple of str
    k_params, k_moms, n_obs : int
    dep_variable : str
    formula : str or None
    reference_size : int
    """

    kind: str
    mechanism: AlphaIdentity
    param_names: tuple[str, ...]
    k_params: int
    k_moms: int
    n_obs: int
    dep_variable: str
    formula: str | None
    reference_size: int

    @abstractmethod
    def fit(self, options: FitOptions, rng: np.random.Generator) -> GMMFit:
        """Estimate with validated options; ``rng`` seeds the reference sample."""

    def supports_nonrobust(self) -> bool:
        """Whether ``cov_type="nonrobust"`` is defined for this engine."""
        return False


def inv_cov(Phi: FloatArray, names: Sequence[str], owner: str) -> FloatArray:
    r"""Efficient weight :math:`\hat{\bar\Phi}^{-1}`; a singular estimate is an error."""
    check_nonsingular(Phi, names, "covariance of the moment conditions (efficient weight)", owner)
    return np.linalg.inv(Phi)


#: Relative eigenvalue below which a scaled Gram / Jacobian product counts as singular.
_SINGULAR_TOL = 1e-10


def check_nonsingular(M: FloatArray, names: Sequence[str], what: str, owner: str) -> None:
    """Raise :class:`SingularDesignError` naming the columns in a near-null direction."""
    d = np.sqrt(np.abs(np.diag(M)))
    zero = d == 0
    if np.any(zero):
        bad = [names[j] for j in np.flatnonzero(zero)]
        raise SingularDesignError(
            f"{owner}: the private {what} is singular: column(s) {bad!r} are identically zero "
            "after deconvolution."
        )
    scaled = M / np.outer(d, d)
    sym = 0.5 * (scaled + scaled.T)
    sv = np.linalg.svd(sym, compute_uv=False)
    if sv.min() > _SINGULAR_TOL * sv.max():
        return
    _, vec = np.linalg.eigh(sym)
    lam = np.linalg.eigvalsh(sym)
    null = vec[:, np.abs(lam) <= _SINGULAR_TOL * sv.max()]
    if null.shape[1] == 0:
        null = vec[:, [int(np.argmin(np.abs(lam)))]]
    weight = np.abs(null).max(axis=1)
    bad = [names[j] for j in np.flatnonzero(weight > 0.05)]
    raise SingularDesignError(
        f"{owner}: the private {what} is singular (condition number "
        f"{sv.max() / max(sv.min(), 1e-300):.3g}); the columns {bad!r} are collinear "
        "in the deconvolved moments. Drop one of them or check the formula."
    )


def j_statistic(
    gbar: FloatArray, weight: FloatArray, n_obs: int, k_params: int, *, efficient: bool
) -> TestResult:
    r"""Hansen's J, :math:`n\,\bar g'\,\hat W\,\bar g \sim \chi^2_{m-p}` (efficient weighting)."""
    name = "Hansen J-test of overidentifying restrictions"
    null = "all moment conditions hold"
    df = gbar.size - k_params
    if df <= 0:
        return TestResult(
            name,
            float("nan"),
            0,
            float("nan"),
            null,
            reason="the model is exactly identified (no overidentifying restriction)",
        )
    if not efficient:
        return TestResult(
            name,
            float("nan"),
            df,
            float("nan"),
            null,
            reason="one-step weighting is not efficient; fit with weighting='two-step'"
            " or 'iterated'",
        )
    stat = float(n_obs * gbar @ weight @ gbar)
    return TestResult(name, stat, df, float(chi2.sf(stat, df)), null, f"chi2({df})")


def check_inputs(data: Any, mechanism: AlphaIdentity | None, owner: str) -> AlphaIdentity:
    """The mechanism of a released frame (read from ``data.attrs`` when ``None``), validated.

    The checks of the treatment models (:func:`~privinfer.models._inputs.check_frame`,
    :func:`~privinfer.models._inputs.resolve_mechanism`), so every model says the same.
    """
    check_frame(data, owner)
    return resolve_mechanism(data, mechanism, owner)


def check_start(start: Any, k_params: int) -> FloatArray:
    """Starting values of the generic engine: ``k_params`` finite numbers (zeros for None)."""
    if start is None:
        return np.zeros(k_params)
    arr = np.asarray(start, dtype=float).ravel()
    if arr.size != k_params or not np.all(np.isfinite(arr)):
        raise DataMismatchError(
            f"PrivateGMM: start_params must hold {k_params} finite values; got {start!r}."
        )
    return arr


def _refuse_column_names(clusters: Any, n_obs: int, owner: str) -> None:
    """Raise a clear ClusterError for column names passed as the labels of a pandas model.

    The Dask route reads ``clusters="col"``; the pandas route takes the labels. One or
    two strings (with more than two rows) can only be names.
    """
    names = (
        [clusters]
        if isinstance(clusters, str)
        else list(clusters)
        if isinstance(clusters, list | tuple)
        and 1 <= len(clusters) <= 2 < n_obs
        and all(isinstance(c, str) for c in clusters)
        else None
    )
    if names is not None:
        raise ClusterError(
            f"{owner}: clusters={clusters!r} looks like column name(s); on a pandas model "
            f"pass the public labels themselves, one per row, e.g. clusters=data[{names[0]!r}] "
            f"(two-way: clusters=data[{names!r}]). Column names are read on Dask frames only."
        )


def _align_labels(clusters: Any, index: pd.Index | None, owner: str) -> Any:
    """Cluster labels given as a pandas Series / DataFrame, reordered to the data's rows.

    pandas users expect labels to be matched by index, as in ``data.assign(k=labels)``;
    plain arrays (and every label of a model without a data index, e.g. one built by
    ``from_arrays``) stay positional. O(n).

    Raises
    ------
    ClusterError
        The labels' index misses rows of the data, names rows the data lack, or either
        index repeats a label (so the match is ambiguous).
    """
    if index is None or not isinstance(clusters, pd.Series | pd.DataFrame):
        return clusters
    given = clusters.index
    if given.equals(index):
        return clusters
    hint = (
        "Pass labels indexed like the data (e.g. clusters=data['col']) or, to match them "
        "by position, an array in row order (clusters=labels.to_numpy())."
    )
    for what, idx in (("the data's", index), ("the clusters'", given)):
        if not idx.is_unique:
            raise ClusterError(
                f"{owner}: {what} index repeats labels, so the cluster labels cannot be "
                f"matched to the rows by index. {hint}"
            )
    pos = given.get_indexer(index)
    missing = index[pos < 0]
    extra = given[~given.isin(index)]
    if len(missing) or len(extra):
        parts = []
        if len(missing):
            eg = missing[:5].tolist()
            parts.append(f"{len(missing)} row(s) of the data have no label (index e.g. {eg})")
        if len(extra):
            eg = extra[:5].tolist()
            parts.append(f"{len(extra)} label(s) match no row of the data (index e.g. {eg})")
        raise ClusterError(
            f"{owner}: the clusters' index does not match the data's rows: "
            f"{' and '.join(parts)}. {hint}"
        )
    return clusters.iloc[pos]


def fit_options(
    engine: GMMEngine,
    weighting: str,
    cov_type: str,
    clusters: Any,
    small_g: bool,
    center: bool,
    initial_weight: Any,
    start_params: Any,
    max_iter: int,
    tol: float,
    index: pd.Index | None = None,
) -> FitOptions:
    """Validate the arguments of ``PrivateGMM.fit`` for ``engine`` into :class:`FitOptions`.

    ``index`` is the row index of the model's pandas data: cluster labels given as a
    pandas Series / DataFrame are aligned to it (``None``: labels are positional).

    Raises
    ------
    ValueError
        Unknown ``weighting`` / ``cov_type``, non-bool flags, ``"nonrobust"`` for user
        moments, bad ``max_iter`` / ``tol``.
    ClusterError
        ``cov_type="clustered"`` without clusters, clusters with another type, bad labels,
        a Series / DataFrame of labels whose index does not match the data's rows.
    DataMismatchError
        ``initial_weight`` or ``start_params`` of the wrong size.

    Warns
    -----
    FewClustersWarning
        Fewer than :data:`~privinfer.covariance.MIN_CLUSTERS` clusters in a dimension.
    """
    owner = "PrivateGMM.fit"
    if weighting not in ("one-step", "two-step", "iterated"):
        raise ValueError(
            f"The 'weighting' parameter of {owner} must be 'one-step', 'two-step' or "
            f"'iterated'. Got {weighting!r} instead."
        )
    if cov_type not in ("robust", "clustered", "nonrobust"):
        raise ValueError(
            f"The 'cov_type' parameter of {owner} must be 'robust', 'clustered' or "
            f"'nonrobust'. Got {cov_type!r} instead."
        )
    for name, flag in (("center", center), ("small_g", small_g)):
        if not isinstance(flag, bool):
            raise ValueError(f"The {name!r} parameter of {owner} must be a bool. Got {flag!r}.")
    if cov_type == "nonrobust":
        _check_nonrobust(engine, owner)
    codes = None
    if cov_type == "clustered":
        if clusters is None:
            raise ClusterError(f"{owner}: cov_type='clustered' needs clusters.")
        design = getattr(engine, "design", None)
        if hasattr(design, "cluster_keys"):  # a Dask frame: labels stay in its partitions
            codes = design.cluster_keys(clusters, owner)
        else:
            _refuse_column_names(clusters, engine.n_obs, owner)
            clusters = _align_labels(clusters, index, owner)
            codes = cluster_codes(clusters, engine.n_obs, owner)
        warn_few_clusters(
            "PrivateGMM",
            getattr(codes, "counts", None) or cluster_counts(codes),
            engine.n_obs,
            summed="moment rows",
            worst_case="a regressor varies only between clusters",
            stacklevel=3,  # fit_options <- PrivateGMM.fit <- the caller
        )
    elif clusters is not None:
        raise ClusterError(f"{owner}: clusters given but cov_type={cov_type!r}.")
    k_moms = engine.k_moms
    if initial_weight is not None:
        initial_weight = np.asarray(initial_weight, dtype=float)
        if initial_weight.shape != (k_moms, k_moms):
            raise DataMismatchError(
                f"{owner}: initial_weight must be a {k_moms} x {k_moms} matrix; got "
                f"shape {initial_weight.shape}."
            )
    start = None
    if engine.kind == "generic" and start_params is not None:
        start = check_start(start_params, engine.k_params)
    return FitOptions(
        weighting=weighting,
        cov_type=cov_type,
        codes=codes,
        center=center,
        small_g=small_g,
        initial_weight=initial_weight,
        start=start,
        max_iter=check_int(max_iter, "max_iter", owner, 1),
        tol=check_in_interval(tol, "tol", owner, 0.0, 1.0, low_open=True),
        owner=owner,
    )


def weights_facts(
    weights: str | None, n_eff: float | None, n_obs: int
) -> tuple[tuple[str, str], ...]:
    """The summary's lines on the sampling weights: their column and Kish's effective
    sample size (the warning on a small one comes when the model is built).
    """
    if weights is None:
        return ()
    facts: tuple[tuple[str, str], ...] = (("Sampling weights:", weights),)
    if n_eff is not None:
        facts += (weights_n_eff_fact(n_eff, n_obs),)
    return facts


def _check_nonrobust(engine: GMMEngine, owner: str) -> None:
    if not engine.supports_nonrobust():
        raise ValueError(
            f"{owner}: cov_type='nonrobust' is defined for the formula routes (.ols, .iv, "
            "logit); user moment functions have no classical covariance. Use 'robust'."
        )
    alpha = engine.mechanism.alpha
    if alpha < 1.0:
        warnings.warn(
            f"{owner}: cov_type='nonrobust' ignores the variance that the privacy noise adds "
            f"to the moment rows; at alpha={alpha:g} its standard errors are "
            "too small. Use cov_type='robust' for inference.",
            NonRobustCovarianceWarning,
            stacklevel=4,  # fit_options <- PrivateGMM.fit <- the caller
        )
