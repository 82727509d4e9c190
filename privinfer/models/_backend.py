r"""Where the rows live: one in-memory pandas frame, or the partitions of a Dask frame.

The treatment models are a map-reduce over rows: one pass sums the per fold x arm
sufficient statistics (:func:`~privinfer.models._suffstats.sum_stats`), a second
evaluates the fitted nuisances on every held-out row. Between the passes everything
(Gram matrices, nuisance fits, reference moments) is small. A *row source* runs these
two passes; the estimator code stays one implementation.

* :class:`PandasRows`: the whole frame is one partition.
* :class:`DaskRows`: every partition of a Dask DataFrame is one task. Statistics are
  added up in a tree (:func:`~privinfer.models._suffstats.add_stats`); the held-out
  scores are reduced inside the tasks to the moments and cluster sums that the
  covariance needs (:mod:`privinfer.models._reduce`), and the influence values stay lazy.

With Dask the *public* columns the model uses (outcome, treatment, weights, clusters,
public covariates and the row index) are gathered once, when the model is built, and
validated by the same code as with pandas, so levels, cluster codes, normalised weights,
folds and the data fingerprint are identical. The private columns, the private design
(``n x p``), the series basis (``n x J``) and its products (``n x J^2``) are only ever
built one partition at a time, inside the tasks. Because the rows, the folds and every
sum are the same, Dask and pandas results agree up to floating-point summation order.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from privinfer._typing import FloatArray, IntArray
from privinfer.exceptions import (
    DataMismatchError,
    FoldError,
    MechanismMismatchError,
    UnsupportedBackendError,
)
from privinfer.formula import build_covariate_spec, cast_private_categoricals
from privinfer.mechanisms.alpha_identity import AlphaIdentity
from privinfer.models._inputs import (
    TreatmentData,
    TreatmentOptions,
    public_treatment_data,
    warn_empty_columns,
)
from privinfer.models._reduce import LazyInfluence, ScoreMoments, score_components
from privinfer.models._suffstats import FoldStats, add_stats
from privinfer.nuisance.sieve import quantile_rows

__all__ = [
    "DaskRows",
    "PandasRows",
    "RowSource",
    "check_dask_columns",
    "dask_treatment_data",
    "is_dask_frame",
]

T = TypeVar("T")
#: A pass over one partition: (its inputs, its fold labels, its first row's position).
PartitionFn = Callable[[TreatmentData, IntArray, int], T]


def is_dask_frame(data: object) -> bool:
    """Whether ``data`` is a Dask DataFrame (checked without importing Dask)."""
    return type(data).__module__.split(".")[0] == "dask" and hasattr(data, "to_delayed")


def _fold_column(col: pd.Series, owner: str) -> IntArray:
    """Integer fold labels from a public column (checked for range by the caller)."""
    if not pd.api.types.is_integer_dtype(col) or col.isna().any():
        raise FoldError(
            f"{owner}.fit: the fold column {col.name!r} must hold integer labels without "
            f"missing values; got dtype {col.dtype}."
        )
    return col.to_numpy(dtype=np.int64)


def _check_fold_name(name: str, columns: Sequence[Any], mech: AlphaIdentity, owner: str) -> None:
    if name not in columns:
        raise FoldError(
            f"{owner}.fit: folds={name!r} is not a column of the data (columns: {list(columns)!r})."
        )
    if name in mech.private_columns:
        raise FoldError(
            f"{owner}.fit: the fold column {name!r} is covered by the mechanism; fold labels "
            "must be public."
        )


class RowSource:
    """The two passes over the rows of a treatment model (see the module docstring)."""

    inputs: TreatmentData
    #: whether the held-out scores are reduced where they are computed
    #: (:meth:`DaskRows.reduce_rows`) rather than gathered row by row (:meth:`map_rows`)
    reduces = False

    def fold_labels(self, folds: Any, mech: AlphaIdentity, owner: str) -> Any:
        """``folds`` as given to ``fit``: a column name becomes that column's labels."""
        raise NotImplementedError

    def basis_inputs(self) -> TreatmentData:
        """Inputs to choose the series basis from (their private design may be a sample)."""
        return self.inputs

    def fold_sums(self, folds: IntArray, func: PartitionFn[FoldStats]) -> FoldStats:
        """Sum the per-partition statistics ``func`` returns."""
        raise NotImplementedError

    def map_rows(self, folds: IntArray, func: PartitionFn[tuple[Any, ...]]) -> tuple[Any, ...]:
        """``func`` returns (row-wise arrays, totals) per partition: concatenate, and add."""
        raise NotImplementedError

    def warn_empty_columns(self, owner: str) -> None:
        """Warn about covariate columns that are zero in every row."""
        raise NotImplementedError


class PandasRows(RowSource):
    """An in-memory frame: one partition, the validated inputs themselves."""

    def __init__(self, data: pd.DataFrame, inputs: TreatmentData) -> None:
        self._data = data
        self.inputs = inputs

    def fold_labels(self, folds: Any, mech: AlphaIdentity, owner: str) -> Any:
        if isinstance(folds, str):
            _check_fold_name(folds, list(self._data.columns), mech, owner)
            return _fold_column(self._data[folds], owner)
        return folds

    def fold_sums(self, folds: IntArray, func: PartitionFn[FoldStats]) -> FoldStats:
        return func(self.inputs, folds, 0)

    def map_rows(self, folds: IntArray, func: PartitionFn[tuple[Any, ...]]) -> tuple[Any, ...]:
        return func(self.inputs, folds, 0)

    def warn_empty_columns(self, owner: str) -> None:
        warn_empty_columns(self.inputs, owner, stacklevel=4)


@dataclass(frozen=True)
class _Plan:
    """What a task needs to build the inputs of its partition like the whole frame's."""

    mechanism: AlphaIdentity
    spec: Any
    outcome: str
    treatment: str
    levels: tuple[Any, ...]
    weights: str | None
    weight_mean: float
    n_priv: int
    n_pub: int
    owner: str


def _partition_inputs(part: pd.DataFrame, plan: _Plan, *, check: bool) -> TreatmentData:
    """The inputs of one partition, encoded as those of the whole frame.

    Treatment codes use the global levels, weights the global mean and the private
    categoricals the mechanism's levels, so a partition that lacks a level (or a treatment
    arm, or rows altogether) still yields columns in the same order.
    """
    n = len(part)
    if check and n:
        # the release as a whole is verified once, on the frame's description
        plan.mechanism.check_data(part, plan.owner, verify=False)
    codes = part[plan.treatment].map({lv: i for i, lv in enumerate(plan.levels)})
    w = None
    if plan.weights is not None:
        w = part[plan.weights].to_numpy(dtype=float) / plan.weight_mean
    if n:
        released = cast_private_categoricals(part, plan.mechanism)
        U_priv = plan.spec.private_design(released)
        U_pub = plan.spec.public_design(released)
    else:
        U_priv, U_pub = np.zeros((0, plan.n_priv)), np.zeros((0, plan.n_pub))
    return TreatmentData(
        outcome=plan.outcome,
        treatment=plan.treatment,
        spec=plan.spec,
        y=pd.to_numeric(part[plan.outcome]).to_numpy(dtype=float),
        d=np.asarray(codes.to_numpy(), dtype=np.int64),
        levels=list(plan.levels),
        U_priv=U_priv,
        U_pub=U_pub,
        cluster_names=(),
        clusters=None,
        weights_name=plan.weights,
        w=w,
        fingerprint="",
    )


def _validate_partition(
    part: pd.DataFrame, plan: _Plan, rows: IntArray
) -> tuple[np.ndarray, FloatArray]:
    """Check a partition's private columns; flags of its nonzero covariate columns.

    Also returns its private design at ``rows`` (the rows of the whole frame that the
    adaptive sieve's deconvolved quantiles read, :func:`~privinfer.nuisance.sieve.quantile_rows`).
    """
    inputs = _partition_inputs(part, plan, check=True)
    flags = np.concatenate([np.any(inputs.U_priv, axis=0), np.any(inputs.U_pub, axis=0)])
    return flags, inputs.U_priv[rows]


def _stats_task(part: pd.DataFrame, plan: _Plan, folds: IntArray, func: Any, off: int) -> Any:
    return func(_partition_inputs(part, plan, check=False), folds, off)


def _tree_sum(items: list[Any], add: Callable[[Any, Any], Any]) -> Any:
    """Pairwise sum of delayed values (depth log2 of their number)."""
    import dask

    while len(items) > 1:
        nxt = [dask.delayed(add)(a, b) for a, b in zip(items[::2], items[1::2], strict=False)]
        if len(items) % 2:
            nxt.append(items[-1])
        items = nxt
    return items[0]


def _reduce_task(
    part: pd.DataFrame,
    plan: _Plan,
    folds: IntArray,
    func: Any,
    off: int,
    reducer: Any,
    extras: list[Any],
) -> tuple[ScoreMoments, tuple[Any, ...]]:
    x = _partition_inputs(part, plan, check=False)
    rows, totals = func(x, folds, off)
    return reducer(rows, x, *extras), totals


def _add_reduced(a: tuple[Any, Any], b: tuple[Any, Any]) -> tuple[Any, Any]:
    return a[0].merge(b[0]), tuple(p + q for p, q in zip(a[1], b[1], strict=True))


def _influence_task(
    part: pd.DataFrame,
    plan: _Plan,
    folds: IntArray,
    func: Any,
    off: int,
    kind: str,
    m: FloatArray,
    C: FloatArray,
    c0: FloatArray | None,
) -> FloatArray:
    x = _partition_inputs(part, plan, check=False)
    rows, _ = func(x, folds, off)
    s = score_components(kind, rows[0], rows[1], x.d, c0)
    w = np.ones(s.shape[0]) if x.w is None else x.w
    return (w[:, None] * (s - m)) @ C


def _concat(outs: Sequence[tuple[tuple[Any, ...], tuple[Any, ...]]]) -> tuple[Any, Any]:
    """Row-wise arrays of the partitions concatenated in row order; their totals added."""
    rows = tuple(np.concatenate(parts) for parts in zip(*(o[0] for o in outs), strict=True))
    totals = tuple(sum(parts[1:], parts[0]) for parts in zip(*(o[1] for o in outs), strict=True))
    return rows, totals


class DaskRows(RowSource):
    """The partitions of a Dask DataFrame, one task each (see the module docstring)."""

    def __init__(
        self,
        data: Any,
        plan: _Plan,
        inputs: TreatmentData,
        lengths: IntArray,
        nonzero: np.ndarray,
        quantile_sample: FloatArray,
    ) -> None:
        self._data = data
        self._plan = plan
        self.inputs = inputs
        self._offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        self._nonzero = nonzero
        self._quantile_sample = quantile_sample

    def basis_inputs(self) -> TreatmentData:
        # the private design at the rows the adaptive sieve's quantiles read
        return dataclasses.replace(self.inputs, U_priv=self._quantile_sample)

    def _tasks(self, folds: IntArray, func: Any) -> list[Any]:
        import dask

        parts = self._data.to_delayed()
        off = self._offsets
        # the plan and the pass are one shared node each, sent once to a cluster's workers
        plan, shared = dask.delayed(self._plan), dask.delayed(func)
        return [
            dask.delayed(_stats_task)(p, plan, folds[off[i] : off[i + 1]], shared, int(off[i]))
            for i, p in enumerate(parts)
        ]

    def fold_labels(self, folds: Any, mech: AlphaIdentity, owner: str) -> Any:
        if isinstance(folds, str):
            _check_fold_name(folds, list(self._data.columns), mech, owner)
            return _fold_column(self._data[folds].compute(), owner)
        return folds

    def fold_sums(self, folds: IntArray, func: PartitionFn[FoldStats]) -> FoldStats:
        import dask

        (out,) = dask.compute(_tree_sum(self._tasks(folds, func), add_stats))
        return out

    def map_rows(self, folds: IntArray, func: PartitionFn[tuple[Any, ...]]) -> tuple[Any, ...]:
        import dask

        return _concat(dask.compute(*self._tasks(folds, func)))

    reduces = True

    def reduce_rows(
        self,
        folds: IntArray,
        func: PartitionFn[tuple[Any, ...]],
        reducer: Callable[..., ScoreMoments],
        extras: Sequence[Any],
    ) -> tuple[ScoreMoments, tuple[Any, ...]]:
        """Run ``func`` on every partition and reduce its row arrays there.

        ``reducer(rows, inputs, *extras)`` gets the partition's slices of the row-aligned
        arrays ``extras`` (None stays None); the statistics and the totals are added up
        in a tree. No row-level array reaches the client.
        """
        import dask

        parts = self._data.to_delayed()
        off = self._offsets
        plan, shared, red = dask.delayed(self._plan), dask.delayed(func), dask.delayed(reducer)
        tasks = []
        for i, p in enumerate(parts):
            sl = slice(int(off[i]), int(off[i + 1]))
            ex = [None if e is None else e[sl] for e in extras]
            tasks.append(
                dask.delayed(_reduce_task)(p, plan, folds[sl], shared, int(off[i]), red, ex)
            )
        (out,) = dask.compute(_tree_sum(tasks, _add_reduced))
        return out

    def lazy_influence(
        self,
        folds: IntArray,
        func: PartitionFn[tuple[Any, ...]],
        kind: str,
        m: FloatArray,
        C: FloatArray,
        c0: FloatArray | None,
    ) -> LazyInfluence:
        r"""Influence values :math:`C'\omega_i(s_i - m)` as a lazy Dask array (on request)."""
        data, plan, offsets = self._data, self._plan, self._offsets

        def make() -> Any:
            import dask
            import dask.array as da

            parts = data.to_delayed()
            shared_plan, shared = dask.delayed(plan), dask.delayed(func)
            blocks = []
            for i, p in enumerate(parts):
                a, b = int(offsets[i]), int(offsets[i + 1])
                task = dask.delayed(_influence_task)(
                    p, shared_plan, folds[a:b], shared, a, kind, m, C,
                    None if c0 is None else c0[a:b],
                )  # fmt: skip
                blocks.append(da.from_delayed(task, shape=(b - a, C.shape[1]), dtype=float))
            return da.concatenate(blocks, axis=0)

        return LazyInfluence(int(offsets[-1]), C.shape[1], make)

    def warn_empty_columns(self, owner: str) -> None:
        # one-row stand-ins whose columns are nonzero exactly where the data's are
        k = self.inputs.U_priv.shape[1]
        flags = self._nonzero.astype(float)[None, :]
        proxy = dataclasses.replace(self.inputs, U_priv=flags[:, :k], U_pub=flags[:, k:])
        warn_empty_columns(proxy, owner, stacklevel=4)


def _public_variables(covariates: str, columns: list[str], mech: AlphaIdentity) -> list[str]:
    """Public data columns the covariate formula uses."""
    import formulaic

    try:
        needed = {str(v) for v in formulaic.Formula(covariates).required_variables}
    except Exception:  # an unparsable formula is reported by build_covariate_spec
        return []
    return [c for c in columns if c in needed and c not in mech.private_columns]


def _spec_frame(head: pd.DataFrame, public: pd.DataFrame, mech: AlphaIdentity) -> pd.DataFrame:
    """Rows to build the covariate spec on: the first rows, plus one row per public level.

    Private categorical levels come from the mechanism; the levels of the public
    categorical columns of the whole frame are appended so that formulaic codes every one.
    Stateful transforms of private columns (``center(x)``) learn from these rows only.
    """
    head = head.copy()
    for col in public.columns:
        if isinstance(head[col].dtype, pd.CategoricalDtype):
            head[col] = head[col].astype(object)  # cast back below, with every level
    extra = []
    for col in public.columns:
        s = public[col]
        if s.dtype == object or isinstance(s.dtype, pd.CategoricalDtype) or s.dtype == bool:
            for v in pd.unique(s):
                row = head.iloc[[0]].copy()
                row[col] = v
                extra.append(row)
    frame = pd.concat([head, *extra], ignore_index=True) if extra else head
    for col in public.columns:
        if isinstance(public[col].dtype, pd.CategoricalDtype):
            frame[col] = pd.Categorical(frame[col], categories=public[col].cat.categories)
    return cast_private_categoricals(frame, mech)


def check_dask_columns(data: Any, mechanism: AlphaIdentity, owner: str) -> list[str]:
    """The frame's column names; the mechanism's private columns must be among them.

    Checked on the frame's ``_meta`` (columns, dtypes and the release's description), so
    nothing is computed.
    """
    columns = [str(c) for c in data.columns]
    missing = [c for c in mechanism.private_columns if c not in columns]
    if missing:
        raise MechanismMismatchError(
            f"{owner}: private column(s) {missing!r} of the mechanism are missing from the "
            f"data (columns present: {columns!r})."
        )
    # columns, dtypes and the release's description (carried by the frame's _meta)
    mechanism.check_data(data._meta, owner)
    return columns


def dask_treatment_data(
    data: Any,
    mechanism: AlphaIdentity,
    *,
    outcome: str,
    treatment: str,
    covariates: str,
    options: TreatmentOptions,
    binary_reason: str | None,
    owner: str,
) -> tuple[TreatmentData, DaskRows]:
    """Validate a Dask frame as :func:`~privinfer.models._inputs.treatment_data` does.

    One pass gathers the public columns the model uses (and the partitions' lengths),
    validated by the pandas code (:func:`~privinfer.models._inputs.public_treatment_data`);
    a second checks the private columns partition by partition, records which covariate
    columns are nonzero and gathers the private design at the rows whose deconvolved
    quantiles place the adaptive sieve's knots (:func:`~privinfer.nuisance.sieve.quantile_rows`,
    at most 200,000 rows), so that the sieve is the one pandas builds. The returned inputs
    hold the public vectors; their ``U_priv`` has no rows.

    Raises
    ------
    UnsupportedBackendError
        An option that needs all private rows at once (kernel outcome, propensity Riesz
        route).
    MechanismMismatchError, DataMismatchError, MissingValueError, ClusterError, WeightsError
        As with pandas input.
    """
    import dask

    unsupported = {
        "outcome_model='kernel'": options.outcome_model == "kernel",
        "riesz='propensity'": options.riesz == "propensity",
    }
    bad = [k for k, v in unsupported.items() if v]
    if bad:
        raise UnsupportedBackendError(
            f"{owner}: {', '.join(bad)} is not available on Dask input (it needs every private "
            "row at once); use the default series nuisances (the adaptive sieve or an integer "
            "degree, chosen by private CV from per-fold sums) or compute() to pandas."
        )
    columns = check_dask_columns(data, mechanism, owner)
    cl = options.cluster
    cl_names = [cl] if isinstance(cl, str) else list(cl) if isinstance(cl, list) else []
    pub_vars = _public_variables(covariates, columns, mechanism)
    wanted = [outcome, treatment, *cl_names, *pub_vars]
    if isinstance(options.weights, str):
        wanted.append(options.weights)
    keep = [c for c in dict.fromkeys(wanted) if c in columns and c not in mechanism.private_columns]
    pub_frame = data[keep]
    # the first rows from the first partition (all partitions only if it has too few)
    first = data.partitions[0].map_partitions(pd.DataFrame.head, 1000)
    public, head, lengths = dask.compute(pub_frame, first, pub_frame.map_partitions(len))
    lengths = np.asarray(lengths, dtype=np.int64)
    if len(head) < min(1000, int(lengths.sum())):
        head = data.head(1000, npartitions=-1)
    if len(public) == 0:
        raise DataMismatchError(f"{owner}: the data frame is empty.")
    mechanism.check_data(head, owner, verify=False)
    spec = build_covariate_spec(covariates, _spec_frame(head, public[pub_vars], mechanism),
                                mechanism, owner)  # fmt: skip
    inputs = public_treatment_data(
        public,
        mechanism,
        spec=spec,
        outcome=outcome,
        treatment=treatment,
        options=options,
        binary_reason=binary_reason,
        owner=owner,
    )
    plan = _Plan(
        mechanism=mechanism,
        spec=spec,
        outcome=outcome,
        treatment=treatment,
        levels=tuple(inputs.levels),
        weights=options.weights,
        weight_mean=float(public[options.weights].mean()) if options.weights else 1.0,
        n_priv=len(spec.private_names),
        n_pub=len(spec.public_names),
        owner=owner,
    )
    parts = data.to_delayed()
    offsets = np.concatenate([[0], np.cumsum(lengths)])
    wanted_rows = quantile_rows(int(offsets[-1]))
    cuts = np.searchsorted(wanted_rows, offsets)
    local = [wanted_rows[cuts[i] : cuts[i + 1]] - offsets[i] for i in range(len(parts))]
    (checked,) = dask.compute(
        [dask.delayed(_validate_partition)(p, plan, r) for p, r in zip(parts, local, strict=True)]
    )
    nonzero = np.any(np.vstack([c[0] for c in checked]), axis=0)
    sample = np.vstack([c[1] for c in checked])
    return inputs, DaskRows(data, plan, inputs, lengths, nonzero, sample)
