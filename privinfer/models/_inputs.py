"""Inputs of the models: options, data and mechanism checks, treatment levels, weights.

Everything a model validates when it is built lives here, so that every estimator
checks its inputs the same way and with the same messages:

* :class:`TreatmentOptions`, the frozen options of the treatment-effect estimators
  (one definition of their names, types and defaults);
* :func:`check_frame` and :func:`resolve_mechanism`, the released frame and its mechanism;
* :func:`treatment_levels`, the levels and integer codes of a public treatment;
* :func:`_sampling_weights`, public weights, and :func:`kish_n_eff`, their effective
  sample size (clusters: :mod:`privinfer.covariance`);
* :class:`TreatmentData` and :func:`treatment_data`, the validated arrays a fit needs;
* :func:`release_guarantees` and :func:`mechanism_record`, what results report about
  the mechanism.
"""

from __future__ import annotations

import dataclasses
import inspect
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

from privinfer._typing import FloatArray, IntArray
from privinfer._validation import check_in_interval, check_int
from privinfer.covariance import cluster_codes_from_frame
from privinfer.exceptions import (
    DataMismatchError,
    EmptyLevelWarning,
    FoldError,
    MechanismMismatchError,
    MissingValueError,
    WeightsError,
)
from privinfer.formula import (
    CovariateSpec,
    build_covariate_spec,
    cast_private_categoricals,
    check_public_columns,
)
from privinfer.mechanisms.alpha_identity import AlphaIdentity
from privinfer.results import data_fingerprint

__all__ = [
    "OutcomeRoute",
    "RieszRoute",
    "RowTotals",
    "TreatmentData",
    "TreatmentOptions",
    "check_arm_sizes",
    "check_frame",
    "check_given_folds",
    "kish_from_sums",
    "kish_n_eff",
    "mechanism_record",
    "public_treatment_data",
    "release_guarantees",
    "resolve_mechanism",
    "treatment_data",
    "treatment_levels",
    "warn_empty_columns",
    "with_options_signature",
]

RieszRoute = Literal["auto", "propensity"]
OutcomeRoute = Literal["series", "kernel"]


@dataclass(frozen=True)
class TreatmentOptions:
    """Options of the treatment-effect estimators (the keyword arguments of the models).

    The single definition of their names, types and defaults; the models and their
    ``from_formula`` constructors forward them without repeating them. See
    :class:`privinfer.PrivateATE` for what each option means.
    :meth:`validated` checks them and resolves ``split_nuisances=None`` and ``ridge=None``.
    """

    degree: int | str | None = None
    ridge: float | Literal["cv"] | None = None
    riesz: RieszRoute = "auto"
    outcome_model: OutcomeRoute = "series"
    kernel_bandwidth: float | Literal["scott", "cv"] = "scott"
    n_folds: int = 5
    n_rep: int = 1
    clip: float = 0.01
    reference_level: Any = None
    reference_size: int = 8192
    split_nuisances: bool | None = None
    cluster: str | list[str] | None = None
    weights: str | None = None
    variance: Literal["auto", "influence", "bootstrap"] = "auto"

    @classmethod
    def from_keywords(cls, owner: str, options: dict[str, Any]) -> TreatmentOptions:
        """Build from keyword arguments; an unknown name is a ``TypeError`` naming them all."""
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = sorted(set(options) - set(names))
        if unknown:
            raise TypeError(f"{owner}: unexpected option(s) {unknown}; the options are {names}.")
        return cls(**options)

    def validated(self, owner: str, alpha: float) -> TreatmentOptions:
        """Checked options, with ``split_nuisances`` resolved for keep probability ``alpha``.

        Raises
        ------
        ValueError
            A value out of range or not among the choices.
        TypeError
            ``split_nuisances`` not a bool.
        """
        if self.riesz not in ("auto", "propensity"):
            raise ValueError(f"{owner}: riesz must be 'auto' or 'propensity'; got {self.riesz!r}.")
        if isinstance(self.degree, str):
            if self.degree != "cv":
                raise ValueError(
                    f"The 'degree' parameter of {owner} must be an integer >= 1, None or 'cv'. "
                    f"Got {self.degree!r} instead."
                )
            degree: int | str | None = self.degree
        else:
            degree = None if self.degree is None else check_int(self.degree, "degree", owner, 1)
        ridge = self.ridge
        if isinstance(ridge, str):
            if ridge != "cv":
                raise ValueError(
                    f"{owner}: ridge must be a non-negative number, 'cv' or None; got {ridge!r}."
                )
        elif ridge is not None:
            ridge = check_in_interval(ridge, "ridge", owner, 0.0, np.inf)
        else:
            # a user-chosen polynomial at alpha = 1 is fitted by ordinary least squares (as
            # DoubleML's IRM); everything else gets its ridge from private CV
            ridge = 0.0 if isinstance(degree, int) and alpha >= 1.0 else "cv"
        n_folds = check_int(self.n_folds, "n_folds", owner, 2)
        n_rep = check_int(self.n_rep, "n_rep", owner, 1)
        clip = check_in_interval(self.clip, "clip", owner, 0.0, 0.5, high_open=True)
        reference_size = check_int(self.reference_size, "reference_size", owner, 64)
        if self.outcome_model not in ("series", "kernel"):
            raise ValueError(
                f"{owner}: outcome_model must be 'series' or 'kernel'; got {self.outcome_model!r}."
            )
        _check_bandwidth(self.kernel_bandwidth, owner)
        if self.variance not in ("auto", "influence", "bootstrap"):
            raise ValueError(
                f"{owner}: variance must be 'auto', 'influence' or 'bootstrap'; "
                f"got {self.variance!r}."
            )
        split = self.split_nuisances
        if split is None:
            split = False
        if not isinstance(split, bool):
            raise TypeError(f"{owner}: split_nuisances must be a bool; got {split!r}.")
        if split and n_folds < 3:
            raise ValueError(f"{owner}: split_nuisances=True needs n_folds >= 3.")
        return dataclasses.replace(
            self,
            degree=degree,
            ridge=ridge,
            n_folds=n_folds,
            n_rep=n_rep,
            clip=clip,
            reference_size=reference_size,
            split_nuisances=split,
        )


def with_options_signature(
    func: Callable[..., Any], base: Callable[..., Any] | None = None
) -> Callable[..., Any]:
    """Show the fields of :class:`TreatmentOptions` as keyword-only parameters of ``func``.

    ``func`` takes them as ``**options`` (forwarded, never repeated); its introspected
    signature (``help``, IDEs, Sphinx) lists them with their defaults, after the
    keyword-only parameters of ``base`` that ``func`` also forwards.
    """
    sig = inspect.signature(func)
    params = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
    if base is not None:
        names = {p.name for p in params} | {f.name for f in dataclasses.fields(TreatmentOptions)}
        params += [
            p
            for p in inspect.signature(base).parameters.values()
            if p.kind is p.KEYWORD_ONLY and p.name not in names
        ]
    params += [
        inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                          annotation=f.type)
        for f in dataclasses.fields(TreatmentOptions)
    ]  # fmt: skip
    func.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
    return func


def _check_bandwidth(bandwidth: object, owner: str) -> None:
    if isinstance(bandwidth, str):
        if bandwidth not in ("scott", "cv"):
            raise ValueError(
                f"{owner}: kernel_bandwidth must be a positive number, 'scott' or 'cv'; got "
                f"{bandwidth!r}."
            )
    else:
        check_in_interval(bandwidth, "kernel_bandwidth", owner, 0.0, np.inf, low_open=True)


def check_frame(data: object, owner: str) -> None:
    """Raise :class:`DataMismatchError` unless ``data`` is a non-empty DataFrame."""
    if not isinstance(data, pd.DataFrame):
        raise DataMismatchError(f"{owner} expects a pandas DataFrame; got {type(data).__name__}.")
    if len(data) == 0:
        raise DataMismatchError(f"{owner}: the data frame is empty.")


def resolve_mechanism(data: pd.DataFrame, mechanism: object, owner: str) -> AlphaIdentity:
    """The given mechanism, or the one described by ``data.attrs``; must be an AlphaIdentity."""
    if mechanism is None:
        mechanism = AlphaIdentity.from_released(data)
    if not isinstance(mechanism, AlphaIdentity):
        raise MechanismMismatchError(
            f"{owner}: mechanism must be an AlphaIdentity; got {type(mechanism).__name__}."
        )
    return mechanism


def sorted_levels(values: list[Any], name: Any, owner: str) -> list[Any]:
    """The distinct values of treatment ``name`` in sorted order.

    Raises
    ------
    DataMismatchError
        The values cannot be ordered: they mix types (``1`` and ``"1"``, as an object
        column from two merged files holds), which would also make them distinct levels.
    """
    try:
        return sorted(values)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in values})
        raise DataMismatchError(
            f"{owner}: treatment {name!r} mixes value types {kinds!r} (e.g. 1 and '1', which "
            "would count as different levels). Convert it to one type first, e.g. "
            "data[col].astype(str) or pd.to_numeric(data[col])."
        ) from None


def order_treatment_levels(
    levels: list[Any], col: pd.Series, reference_level: Any, owner: str
) -> list[Any]:
    """Check the levels found in treatment ``col`` (data or metadata); reference level first.

    Raises
    ------
    DataMismatchError
        A single level, a continuous-looking treatment, or an unknown ``reference_level``.
    """
    if len(levels) < 2:
        raise DataMismatchError(f"{owner}: treatment {col.name!r} takes a single value {levels!r}.")
    if pd.api.types.is_float_dtype(col.dtype) and len(levels) > 20:
        raise DataMismatchError(
            f"{owner}: treatment {col.name!r} looks continuous ({len(levels)} distinct "
            "values); it must be binary or categorical."
        )
    if reference_level is not None:
        if reference_level not in levels:
            raise DataMismatchError(
                f"{owner}: reference_level {reference_level!r} not in {levels!r}."
            )
        levels = [reference_level] + [lv for lv in levels if lv != reference_level]
    return levels


def treatment_levels(
    col: pd.Series, reference_level: Any, owner: str
) -> tuple[list[Any], IntArray]:
    """Levels of a public treatment (``reference_level`` first) and each row's level code.

    Raises
    ------
    DataMismatchError
        A single level, a continuous-looking treatment, or an unknown ``reference_level``.
    """
    if isinstance(col.dtype, pd.CategoricalDtype):
        levels = [lv for lv in col.cat.categories if (col == lv).any()]
    else:
        levels = sorted_levels(pd.unique(col).tolist(), col.name, owner)
    levels = order_treatment_levels(levels, col, reference_level, owner)
    mapping = {lv: i for i, lv in enumerate(levels)}
    codes = col.map(mapping).to_numpy()
    return levels, np.asarray(codes, dtype=np.int64)


@dataclass(frozen=True)
class RowTotals:
    """Sums over the rows of a frame whose rows are not in memory (Dask partitions).

    Attributes
    ----------
    n : int
        Number of rows.
    arm_counts : ndarray of shape (L,)
        Rows of every treatment level.
    arm_weights : ndarray of shape (L,)
        Sum of the normalised sampling weights of every level (``arm_counts`` unweighted).
    y_var : float
        Variance of the outcome (``ddof=0``).
    weights_n_eff : float or None
        Kish's effective sample size of the sampling weights (:func:`kish_n_eff`, from the
        partitions' sums of the weights and of their squares); None without weights.
    """

    n: int
    arm_counts: IntArray
    arm_weights: FloatArray
    y_var: float
    weights_n_eff: float | None = None


@dataclass(frozen=True)
class TreatmentData:
    """The validated public columns and covariate designs of a treatment-effect model.

    Attributes
    ----------
    outcome, treatment : str
        Column names.
    spec : CovariateSpec
        The covariate design, split by privacy role.
    y : ndarray of shape (n,)
        Outcome.
    d : ndarray of shape (n,)
        Treatment level codes ``0..L-1``.
    levels : list
        Treatment levels (``reference_level`` first).
    U_priv, U_pub : ndarray
        Released private and public covariate designs.
    cluster_names : tuple of str
        Public cluster columns.
    clusters : ndarray or None
        Cluster codes, shape (n,) or (n, 2).
    weights_name : str or None
        Public sampling weights column.
    w : ndarray or None
        Sampling weights normalised to mean one.
    fingerprint : str
        Hash of the public row identity (index, treatment, weights, clusters).
    totals : RowTotals or None
        Sums over rows that stand in for ``y``, ``d`` and ``w`` when those stay in the
        partitions of a Dask frame (then empty); None when the arrays hold every row.
    """

    outcome: str
    treatment: str
    spec: CovariateSpec
    y: FloatArray
    d: IntArray
    levels: list[Any]
    U_priv: FloatArray
    U_pub: FloatArray
    cluster_names: tuple[str, ...]
    clusters: IntArray | None
    weights_name: str | None
    w: FloatArray | None
    fingerprint: str
    totals: RowTotals | None = None

    @property
    def n_levels(self) -> int:
        """Number of treatment levels."""
        return len(self.levels)

    @property
    def n_obs(self) -> int:
        """Number of rows."""
        return self.y.size if self.totals is None else self.totals.n

    @property
    def arm_counts(self) -> IntArray:
        """Rows of every treatment level (in the order of ``levels``)."""
        if self.totals is None:
            return np.bincount(self.d, minlength=self.n_levels)
        return self.totals.arm_counts

    @property
    def y_var(self) -> float:
        """Variance of the outcome (``ddof=0``)."""
        return float(self.y.var()) if self.totals is None else self.totals.y_var

    @property
    def weights_n_eff(self) -> float | None:
        """Kish's effective sample size of the sampling weights (None without weights)."""
        if self.weights_name is None:
            return None
        if self.totals is not None:
            return self.totals.weights_n_eff
        assert self.w is not None
        return kish_n_eff(self.w)

    @property
    def treated_weight(self) -> float:
        """Rows of treatment level code 1, weighted by the sampling weights if any."""
        if self.totals is not None:
            return float(self.totals.arm_weights[1])
        treated = self.d == 1
        return float(np.count_nonzero(treated)) if self.w is None else float(self.w @ treated)

    @property
    def treated_share(self) -> float:
        """``treated_weight / n``: the (weighted) share of treatment level code 1."""
        if self.totals is not None:
            return float(self.totals.arm_weights[1]) / self.totals.n
        wt = np.ones(self.d.size) if self.w is None else self.w
        return float(np.mean(wt * (self.d == 1)))

    @property
    def first_clusters(self) -> IntArray | None:
        """Cluster codes of the first clustering dimension (kept whole within folds)."""
        if self.clusters is None:
            return None
        return self.clusters if self.clusters.ndim == 1 else self.clusters[:, 0]


def treatment_data(
    data: pd.DataFrame,
    mechanism: AlphaIdentity,
    *,
    outcome: str,
    treatment: str,
    covariates: str,
    options: TreatmentOptions,
    binary_reason: str | None,
    owner: str,
) -> TreatmentData:
    """Validate the released data of a treatment-effect model and build its designs.

    ``binary_reason`` names the estimand when it needs a binary treatment (the ATT).

    Raises
    ------
    MechanismMismatchError, DataMismatchError, MissingValueError, ClusterError, WeightsError
        As documented by :class:`privinfer.PrivateATE`.
    """
    mechanism.check_data(data, owner)
    check_public_columns(
        data, [outcome, treatment], mechanism, {outcome: "outcome", treatment: "treatment"}, owner
    )
    released = cast_private_categoricals(data, mechanism)
    spec = build_covariate_spec(covariates, released, mechanism, owner)
    public = public_treatment_data(
        data,
        mechanism,
        spec=spec,
        outcome=outcome,
        treatment=treatment,
        options=options,
        binary_reason=binary_reason,
        owner=owner,
    )
    U_priv = spec.private_design(released)
    if U_priv.shape[0] != len(data):
        raise DataMismatchError(f"{owner}: formulaic dropped rows; check for missing values.")
    return dataclasses.replace(public, U_priv=U_priv)


def public_treatment_data(
    data: pd.DataFrame,
    mechanism: AlphaIdentity,
    *,
    spec: CovariateSpec,
    outcome: str,
    treatment: str,
    options: TreatmentOptions,
    binary_reason: str | None,
    owner: str,
) -> TreatmentData:
    """The public part of :func:`treatment_data` for a given covariate spec.

    Only the public columns of ``data`` are read (outcome, treatment, public covariates,
    clusters, weights, row index); ``U_priv`` of the result has no rows. Frames too large
    for memory pass their public columns here and build the private design by partition.

    Raises
    ------
    MechanismMismatchError, DataMismatchError, MissingValueError, ClusterError, WeightsError
        As documented by :class:`privinfer.PrivateATE`.
    """
    check_public_columns(
        data, [outcome, treatment], mechanism, {outcome: "outcome", treatment: "treatment"}, owner
    )
    check_public_columns(data, list(spec.public_variables), mechanism, {}, owner)
    y = pd.to_numeric(data[outcome], errors="coerce").to_numpy(dtype=float)
    if not np.all(np.isfinite(y)):
        raise DataMismatchError(f"{owner}: outcome {outcome!r} must be numeric and finite.")
    levels, codes = treatment_levels(data[treatment], options.reference_level, owner)
    _check_routes(levels, spec, options, binary_reason, owner)
    U_pub = spec.public_design(data)
    if U_pub.shape[0] != len(data):
        raise DataMismatchError(f"{owner}: formulaic dropped rows; check for missing values.")
    cluster_names, clusters = cluster_codes_from_frame(
        data, options.cluster, mechanism.private_columns, owner
    )
    w = _sampling_weights(data, options.weights, mechanism, owner)
    if w is not None and options.riesz == "propensity":
        raise WeightsError(
            f"{owner}: sampling weights need riesz='auto' (the private logistic propensity "
            "fit is unweighted); got riesz='propensity'."
        )
    return TreatmentData(
        outcome=outcome,
        treatment=treatment,
        spec=spec,
        y=y,
        d=codes,
        levels=levels,
        U_priv=np.zeros((0, len(spec.private_names))),
        U_pub=U_pub,
        cluster_names=cluster_names,
        clusters=clusters,
        weights_name=options.weights,
        w=w,
        fingerprint=data_fingerprint(data.index.to_numpy(), codes, w, clusters),
    )


def _check_routes(
    levels: list[Any],
    spec: CovariateSpec,
    options: TreatmentOptions,
    binary_reason: str | None,
    owner: str,
) -> None:
    """Combinations of estimand, treatment levels and nuisance routes that are supported."""
    if binary_reason is not None and len(levels) != 2:
        raise DataMismatchError(
            f"{owner}: {binary_reason} needs a binary treatment; got levels {levels!r}."
        )
    if options.riesz == "propensity" and len(levels) != 2:
        raise DataMismatchError(
            f"{owner}: riesz='propensity' supports binary treatments; use riesz='auto' for "
            f"{len(levels)} levels."
        )
    if options.outcome_model == "kernel" and (
        options.riesz != "auto"
        or options.weights is not None
        or spec.public_names
        or spec.categorical_terms
    ):
        raise ValueError(
            f"{owner}: outcome_model='kernel' supports riesz='auto', no sampling "
            "weights and continuous private covariates only (no public or categorical "
            "covariate terms)."
        )


def check_given_folds(
    folds: Any, inputs: TreatmentData, n_folds: int, n_rep: int, owner: str
) -> IntArray | None:
    """Validate user-given fold labels (one per row, every label used, clusters whole).

    Raises
    ------
    FoldError
        Malformed labels, ``n_rep != 1``, or a cluster split across folds.
    """
    if folds is None:
        return None
    given = np.asarray(folds)
    if (
        n_rep != 1
        or given.shape != (inputs.n_obs,)
        or set(np.unique(given).tolist()) != set(range(n_folds))
    ):
        raise FoldError(
            f"{owner}.fit: folds must hold one label in 0..{n_folds - 1} per "
            "row (each label used) and needs n_rep=1."
        )
    given = given.astype(np.int64)
    first = inputs.first_clusters
    if first is not None:
        per_cluster = pd.Series(given).groupby(first).nunique()
        if (per_cluster > 1).any():
            raise FoldError(
                f"{owner}.fit: folds split {int((per_cluster > 1).sum())} "
                "cluster(s) across folds; cluster cross-fitting keeps clusters whole."
            )
    return given


def check_arm_sizes(inputs: TreatmentData, n_folds: int, owner: str) -> None:
    """Raise :class:`FoldError` if some treatment level has fewer rows than folds."""
    counts = inputs.arm_counts
    if counts.min() < n_folds:
        level = inputs.levels[int(np.argmin(counts))]
        raise FoldError(
            f"{owner}: treatment level {level!r} has {counts.min()} row(s), fewer than "
            f"n_folds={n_folds}: some fold would have no unit of that level."
        )


def warn_empty_columns(inputs: TreatmentData, owner: str, stacklevel: int = 3) -> None:
    """Warn (:class:`EmptyLevelWarning`) about covariate columns that are zero in every row."""
    design = np.hstack([inputs.U_priv, inputs.U_pub])
    names = inputs.spec.private_names + inputs.spec.public_names
    empty = [name for name, col in zip(names, design.T, strict=True) if not np.any(col)]
    if empty:
        warnings.warn(
            f"{owner}: covariate column(s) {empty} are zero in every released row "
            "(a level with no released record?); their coefficients are not identified and "
            "the Gram matrices will be repaired. Consider merging or dropping the level.",
            EmptyLevelWarning,
            stacklevel=stacklevel,
        )


def release_guarantees(mechanism: AlphaIdentity) -> Any:
    """The mechanism's privacy guarantees, or None where its scipy reference is too large.

    :meth:`AlphaIdentity.guarantees` never enumerates the joint support, so a large
    finite reference (a big public sample, many categorical levels) has its guarantees
    too; only a scipy distribution with more than ten million support points has none.
    """
    try:
        return mechanism.guarantees()
    except DataMismatchError:
        return None


def mechanism_record(mechanism: AlphaIdentity) -> dict[str, Any]:
    """The mechanism's description for results; empirical references (maybe large) are left out."""
    if any(type(c).__name__ == "Empirical" for _, c in mechanism.reference.parts):
        return {"mechanism": "alpha-identity", "alpha": mechanism.alpha}
    return mechanism.to_dict()


def _sampling_weights(
    data: pd.DataFrame, weights: str | None, mech: AlphaIdentity, owner: str
) -> FloatArray | None:
    """Public sampling weights, validated and normalised to mean one."""
    if weights is None:
        return None
    w = weight_values(data, weights, mech, owner)
    if not np.any(w > 0):
        raise WeightsError(f"{owner}: weights column {weights!r} is zero everywhere.")
    return w / w.mean()


def kish_n_eff(w: FloatArray) -> float:
    r"""Kish's (1965) effective sample size of sampling weights.

    .. math:: n_{\mathrm{eff}} = \frac{(\sum_i w_i)^2}{\sum_i w_i^2}
       = \frac{n}{1 + \mathrm{CV}^2(w)},

    the number of equally weighted rows whose mean has the variance of the weighted mean
    (for rows of equal variance). It does not change when the weights are rescaled, lies
    between 1 (one row carries all the weight) and ``n`` (equal weights), and is
    computed here on ``w / max(w)`` so that large weights cannot overflow.

    Examples
    --------
    >>> kish_n_eff(np.ones(4))
    4.0
    >>> round(kish_n_eff(np.array([1.0, 1.0, 1e12])), 6)
    1.0
    """
    top = float(np.max(w))
    if not top > 0:
        return 0.0
    r = np.asarray(w, dtype=float) / top
    return kish_from_sums(float(r.sum()), float(r @ r))


def kish_from_sums(total: float, squares: float) -> float:
    """:func:`kish_n_eff` from the sum of the weights and the sum of their squares.

    The form a Dask frame's partitions can add up; 0 when no weight is positive.
    """
    return total**2 / squares if squares > 0 else 0.0


def weight_values(
    data: pd.DataFrame, weights: str, mech: AlphaIdentity, owner: str
) -> FloatArray:
    """The weights column of ``data`` (or of one partition), checked but not normalised."""
    if not isinstance(weights, str) or weights not in data.columns:
        raise WeightsError(f"{owner}: weights must name a column of the data; got {weights!r}.")
    if weights in mech.private_columns:
        raise WeightsError(
            f"{owner}: the weights column {weights!r} is covered by the mechanism; sampling "
            "weights must be public."
        )
    col = data[weights]
    if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        raise WeightsError(f"{owner}: weights column {weights!r} must be numeric.")
    w = col.to_numpy(dtype=float)
    if not np.all(np.isfinite(w)):
        raise MissingValueError(
            f"{owner}: weights column {weights!r} holds {int(np.sum(~np.isfinite(w)))} NaN or "
            "infinite value(s); privinfer never drops rows silently."
        )
    if np.any(w < 0):
        raise WeightsError(
            f"{owner}: weights column {weights!r} holds {int(np.sum(w < 0))} negative value(s); "
            "sampling weights must be >= 0."
        )
    return w
