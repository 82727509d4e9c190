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

With Dask nothing of the size of the data lives on the client. Building the model reads
the frame once (:func:`dask_treatment_data`): every task checks its partition as the
pandas code checks a frame (private columns, outcome, treatment, weights, clusters,
public covariates) and returns small summaries (its length, treatment counts, outcome
moments, cluster labels, a digest of its public row identity, the private design at the
rows that place the adaptive sieve's knots); the client merges them into the treatment
levels, the normalised weights' mean and Kish effective sample size, the cluster codes'
labels and the data fingerprint. Outcome, treatment codes, weights, cluster codes and
fold labels are rebuilt inside every task from the partition and these small tables,
so Dask and pandas results agree up to floating-point summation order on the same fold
labels (a fold column, or labels passed as an array). Folds drawn from the fit's random
stream are drawn per partition (a child stream each), stratified by treatment and
balanced across the whole frame; with clusters, whole clusters are dealt to folds from
the per-cluster treatment counts exactly as with pandas.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
import pandas as pd

from privinfer._records import data_fingerprint
from privinfer._typing import FloatArray, IntArray
from privinfer.covariance import cluster_columns
from privinfer.exceptions import (
    ClusterError,
    DataMismatchError,
    FoldError,
    UnsupportedBackendError,
    WeightsError,
)
from privinfer.formula import (
    CovariateSpec,
    build_covariate_spec,
    cast_private_categoricals,
    check_public_columns,
)
from privinfer.mechanisms._consistency import check_reference_counts, reference_cells
from privinfer.mechanisms.alpha_identity import AlphaIdentity
from privinfer.mechanisms.reference import check_private_columns
from privinfer.models._crossfit import deal_clusters, draw_split
from privinfer.models._foldboot import N_BLOCKS, block_labels
from privinfer.models._inputs import (
    RowTotals,
    TreatmentData,
    TreatmentOptions,
    _check_routes,
    check_given_folds,
    kish_from_sums,
    order_treatment_levels,
    sorted_levels,
    warn_empty_columns,
    weight_values,
)
from privinfer.models._reduce import (
    LazyCodes,
    LazyInfluence,
    ScoreMoments,
    cluster_dims,
    score_components,
)
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


def _integer_labels_error(name: Any, dtype: Any, owner: str) -> FoldError:
    return FoldError(
        f"{owner}.fit: the fold column {name!r} must hold integer labels without "
        f"missing values; got dtype {dtype}."
    )


def _fold_column(col: pd.Series, owner: str) -> IntArray:
    """Integer fold labels from a public column (checked for range by the caller)."""
    if not pd.api.types.is_integer_dtype(col) or col.isna().any():
        raise _integer_labels_error(col.name, col.dtype, owner)
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


def _malformed_folds(n_folds: int, owner: str) -> FoldError:
    return FoldError(
        f"{owner}.fit: folds must hold one label in 0..{n_folds - 1} per "
        "row (each label used) and needs n_rep=1."
    )


class RowSource:
    """The two passes over the rows of a treatment model (see the module docstring)."""

    inputs: TreatmentData
    #: whether the held-out scores are reduced where they are computed
    #: (:meth:`DaskRows.reduce_rows`) rather than gathered row by row (:meth:`map_rows`)
    reduces = False

    def given_folds(
        self, folds: Any, n_folds: int, n_rep: int, mech: AlphaIdentity, owner: str
    ) -> Any:
        """``folds`` as given to ``fit`` (labels, or a column name), checked; None if None."""
        raise NotImplementedError

    def draw_split(self, n_folds: int, rng: np.random.Generator) -> Any:
        """Folds stratified by treatment (whole clusters when clustered)."""
        raise NotImplementedError

    def block_labels(self, folds: Any, n_folds: int, rng: np.random.Generator) -> Any:
        """The fold-block bootstrap's labels ``fold * N_BLOCKS + block``."""
        raise NotImplementedError

    def cluster_sizes(self) -> tuple[int, ...]:
        """Number of clusters of every dimension of :func:`cluster_dims`."""
        raise NotImplementedError

    def record_clusters(self) -> Any:
        """The cluster codes that results keep (None when not clustered)."""
        raise NotImplementedError

    def basis_inputs(self, sieve: bool = True) -> TreatmentData:
        """Inputs to choose the series basis from (their designs may be stand-ins)."""
        return self.inputs

    def fold_sums(self, folds: Any, func: PartitionFn[FoldStats]) -> FoldStats:
        """Sum the per-partition statistics ``func`` returns."""
        raise NotImplementedError

    def map_rows(self, folds: Any, func: PartitionFn[tuple[Any, ...]]) -> tuple[Any, ...]:
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

    def given_folds(
        self, folds: Any, n_folds: int, n_rep: int, mech: AlphaIdentity, owner: str
    ) -> Any:
        if isinstance(folds, str):
            _check_fold_name(folds, list(self._data.columns), mech, owner)
            folds = _fold_column(self._data[folds], owner)
        return check_given_folds(folds, self.inputs, n_folds, n_rep, owner)

    def draw_split(self, n_folds: int, rng: np.random.Generator) -> IntArray:
        return draw_split(self.inputs.d, self.inputs.first_clusters, n_folds, rng)

    def block_labels(self, folds: Any, n_folds: int, rng: np.random.Generator) -> IntArray:
        return block_labels(folds, n_folds, self.inputs.first_clusters, rng)

    def cluster_sizes(self) -> tuple[int, ...]:
        return tuple(int(c.max()) + 1 for c in cluster_dims(self.inputs.clusters))

    def record_clusters(self) -> IntArray | None:
        return self.inputs.clusters

    def fold_sums(self, folds: IntArray, func: PartitionFn[FoldStats]) -> FoldStats:
        return func(self.inputs, folds, 0)

    def map_rows(self, folds: IntArray, func: PartitionFn[tuple[Any, ...]]) -> tuple[Any, ...]:
        return func(self.inputs, folds, 0)

    def warn_empty_columns(self, owner: str) -> None:
        warn_empty_columns(self.inputs, owner, stacklevel=4)


# -- what a task needs ------------------------------------------------------------------
@dataclass(frozen=True)
class _Plan:
    """What a task needs to build the inputs of its partition like the whole frame's.

    ``cluster_labels`` holds, per cluster column, its labels in order of first appearance
    in the frame (the order of :func:`pandas.factorize`, so codes equal pandas' codes);
    ``pair_keys`` the two-way intersections' keys ``code0 * G1 + code1`` in that order.
    """

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
    clusters: tuple[str, ...] = ()
    cluster_labels: tuple[Any, ...] = ()
    pair_keys: IntArray | None = None


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


def _cluster_dims(part: pd.DataFrame, plan: _Plan) -> tuple[IntArray, ...]:
    """Cluster codes of a partition's rows, per dimension of :func:`cluster_dims`."""
    codes = [
        np.asarray(pd.Index(labels).get_indexer(part[col]), dtype=np.int64)
        for col, labels in zip(plan.clusters, plan.cluster_labels, strict=True)
    ]
    if len(codes) == 2:
        assert plan.pair_keys is not None  # internal invariant: two-way plans carry them
        keys = codes[0] * len(plan.cluster_labels[1]) + codes[1]
        codes.append(np.asarray(pd.Index(plan.pair_keys).get_indexer(keys), dtype=np.int64))
    return tuple(codes)


@dataclass(frozen=True)
class _FoldRule:
    """Fold labels made inside a partition's task (nothing per row on the client).

    ``kind``: ``"column"`` (read from a public column), ``"drawn"`` (stratified by
    treatment from child stream ``i`` of ``seed``; ``starts[i, k]`` rows of level ``k``
    in the partitions before ``i`` continue the round-robin, so every fold gets its
    share of every level of the whole frame), or ``"clusters"`` (``cluster_fold`` of the
    row's cluster, first dimension).
    """

    kind: str
    n_folds: int
    column: str | None = None
    seed: tuple[int, ...] = ()
    starts: IntArray | None = None
    cluster_fold: IntArray | None = None

    def labels(self, i: int, part: pd.DataFrame, x: TreatmentData, dims: tuple[Any, ...]) -> Any:
        if self.kind == "column":
            assert self.column is not None  # internal invariant
            return part[self.column].to_numpy(dtype=np.int64)
        if self.kind == "clusters":
            assert self.cluster_fold is not None  # internal invariant
            return self.cluster_fold[dims[0]]
        assert self.starts is not None  # internal invariant: a drawn rule
        rng = np.random.default_rng(np.random.SeedSequence(list(self.seed), spawn_key=(i,)))
        out = np.empty(x.d.size, dtype=np.int64)
        for k in range(self.starts.shape[1]):
            idx = rng.permutation(np.flatnonzero(x.d == k))
            out[idx] = (self.starts[i, k] + np.arange(idx.size)) % self.n_folds
        return out


@dataclass(frozen=True)
class _Blocks:
    """The fold-block bootstrap's labels of a partition: its folds and its blocks.

    ``rows``: each row's block (drawn on the client as pandas draws them, one byte a row:
    the bootstrap only runs while ``n * alpha^2`` is small); ``cluster_block``: each
    cluster's block.
    """

    folds: Any
    rows: np.ndarray | None = None
    cluster_block: IntArray | None = None


def _labels(arg: Any, i: int, part: pd.DataFrame, x: TreatmentData, dims: tuple[Any, ...]) -> Any:
    """A partition's fold labels from what the client sent its task."""
    if isinstance(arg, _Blocks):
        base = _labels(arg.folds, i, part, x, dims)
        block = arg.rows if arg.cluster_block is None else arg.cluster_block[dims[0]]
        return base * N_BLOCKS + np.asarray(block, dtype=np.int64)
    if isinstance(arg, _FoldRule):
        return arg.labels(i, part, x, dims)
    return arg


def _stats_task(part: pd.DataFrame, plan: _Plan, arg: Any, func: Any, i: int, off: int) -> Any:
    x = _partition_inputs(part, plan, check=False)
    dims = _cluster_dims(part, plan) if plan.clusters else ()
    return func(x, _labels(arg, i, part, x, dims), off)


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
    arg: Any,
    func: Any,
    i: int,
    off: int,
    reducer: Any,
    extras: list[Any],
) -> tuple[ScoreMoments, tuple[Any, ...]]:
    x = _partition_inputs(part, plan, check=False)
    dims = _cluster_dims(part, plan) if plan.clusters else ()
    rows, totals = func(x, _labels(arg, i, part, x, dims), off)
    return reducer(rows, x, *extras, *dims), totals


def _add_reduced(a: tuple[Any, Any], b: tuple[Any, Any]) -> tuple[Any, Any]:
    return a[0].merge(b[0]), tuple(p + q for p, q in zip(a[1], b[1], strict=True))


def _influence_task(
    part: pd.DataFrame,
    plan: _Plan,
    arg: Any,
    func: Any,
    i: int,
    off: int,
    kind: str,
    m: FloatArray,
    C: FloatArray,
    c0: FloatArray | None,
) -> FloatArray:
    x = _partition_inputs(part, plan, check=False)
    dims = _cluster_dims(part, plan) if plan.clusters else ()
    rows, _ = func(x, _labels(arg, i, part, x, dims), off)
    s = score_components(kind, rows[0], rows[1], x.d, c0)
    w = np.ones(s.shape[0]) if x.w is None else x.w
    return (w[:, None] * (s - m)) @ C


def _codes_task(part: pd.DataFrame, plan: _Plan) -> IntArray:
    dims = _cluster_dims(part, plan)
    return dims[0] if len(dims) == 1 else np.column_stack(dims[:2])


def _fold_check_task(
    part: pd.DataFrame, plan: _Plan, arg: Any, i: int, owner: str
) -> tuple[IntArray, IntArray | None]:
    """A partition's fold labels (distinct), and its distinct (cluster, fold) pairs."""
    if isinstance(arg, _FoldRule):
        col = part[arg.column]
        if col.isna().any():
            raise _integer_labels_error(arg.column, col.dtype, owner)
        labels = col.to_numpy(dtype=np.int64)
    else:
        labels = np.asarray(arg, dtype=np.int64)
    pairs = None
    if plan.clusters:
        first = _cluster_dims(part, plan)[0]
        pairs = np.unique(np.column_stack([first, labels]), axis=0)
    return np.unique(labels), pairs


def _concat(outs: Sequence[tuple[tuple[Any, ...], tuple[Any, ...]]]) -> tuple[Any, Any]:
    """Row-wise arrays of the partitions concatenated in row order; their totals added."""
    rows = tuple(np.concatenate(parts) for parts in zip(*(o[0] for o in outs), strict=True))
    totals = tuple(sum(parts[1:], parts[0]) for parts in zip(*(o[1] for o in outs), strict=True))
    return rows, totals


@dataclass
class _Summary:
    """What the construction pass learns about the whole frame (all of it small)."""

    lengths: IntArray
    level_counts: IntArray  # (partitions, levels)
    nonzero: np.ndarray
    sample_priv: FloatArray
    sample_pub: FloatArray
    pub_mean: FloatArray
    pub_std: FloatArray
    pub_binary: np.ndarray
    cluster_table: FloatArray | None = None  # (clusters, levels) counts, first dimension
    extra: dict[str, Any] = field(default_factory=dict)


class DaskRows(RowSource):
    """The partitions of a Dask DataFrame, one task each (see the module docstring)."""

    reduces = True

    def __init__(self, data: Any, plan: _Plan, inputs: TreatmentData, summary: _Summary) -> None:
        self._data = data
        self._plan = plan
        self.inputs = inputs
        self._summary = summary
        self._offsets = np.concatenate([[0], np.cumsum(summary.lengths)]).astype(np.int64)

    # -- folds ---------------------------------------------------------------------------
    def given_folds(
        self, folds: Any, n_folds: int, n_rep: int, mech: AlphaIdentity, owner: str
    ) -> Any:
        if folds is None:
            return None
        n = int(self._offsets[-1])
        if isinstance(folds, str):
            _check_fold_name(folds, [str(c) for c in self._data.columns], mech, owner)
            dtype = self._data._meta[folds].dtype
            if not pd.api.types.is_integer_dtype(dtype):
                raise _integer_labels_error(folds, dtype, owner)
            rule: Any = _FoldRule("column", n_folds, column=folds)
        else:
            rule = np.asarray(folds)
            if rule.shape != (n,):
                raise _malformed_folds(n_folds, owner)
            rule = rule.astype(np.int64)
        if n_rep != 1:
            raise _malformed_folds(n_folds, owner)
        import dask

        plan = dask.delayed(self._plan)
        tasks = [
            dask.delayed(_fold_check_task)(p, plan, a, i, owner)
            for i, (p, a) in enumerate(zip(self._data.to_delayed(), self._args(rule), strict=True))
        ]
        (checked,) = dask.compute(tasks)
        used = np.unique(np.concatenate([c[0] for c in checked]))
        if set(used.tolist()) != set(range(n_folds)):
            raise _malformed_folds(n_folds, owner)
        if self._plan.clusters:
            pairs = np.unique(np.vstack([c[1] for c in checked]), axis=0)
            per_cluster = np.bincount(pairs[:, 0])
            if (per_cluster > 1).any():
                raise FoldError(
                    f"{owner}.fit: folds split {int((per_cluster > 1).sum())} "
                    "cluster(s) across folds; cluster cross-fitting keeps clusters whole."
                )
        return rule

    def draw_split(self, n_folds: int, rng: np.random.Generator) -> _FoldRule:
        s = self._summary
        if s.cluster_table is not None:
            return _FoldRule("clusters", n_folds, cluster_fold=deal_clusters(
                s.cluster_table, n_folds, rng))  # fmt: skip
        starts = np.cumsum(s.level_counts, axis=0) - s.level_counts
        seed = tuple(int(v) for v in rng.integers(0, 2**63, size=4))
        return _FoldRule("drawn", n_folds, seed=seed, starts=starts)

    def fold_array(self, folds: Any) -> IntArray:
        """The fold labels of every row (computed; for checks and diagnostics only)."""
        import dask

        plan = dask.delayed(self._plan)

        def labels(part: pd.DataFrame, plan: _Plan, arg: Any, i: int) -> IntArray:
            x = _partition_inputs(part, plan, check=False)
            dims = _cluster_dims(part, plan) if plan.clusters else ()
            return np.asarray(_labels(arg, i, part, x, dims), dtype=np.int64)

        parts = zip(self._data.to_delayed(), self._args(folds), strict=True)
        tasks = [dask.delayed(labels)(p, plan, a, i) for i, (p, a) in enumerate(parts)]
        (out,) = dask.compute(tasks)
        return np.concatenate(out)

    def block_labels(self, folds: Any, n_folds: int, rng: np.random.Generator) -> _Blocks:
        if self._plan.clusters:
            G = len(self._plan.cluster_labels[0])
            return _Blocks(folds, cluster_block=rng.integers(0, N_BLOCKS, size=G))
        n = int(self._offsets[-1])
        # N_BLOCKS <= 127: one byte a row, only while the bootstrap runs (small n alpha^2)
        return _Blocks(folds, rows=rng.integers(0, N_BLOCKS, size=n).astype(np.int8))

    def _args(self, folds: Any) -> list[Any]:
        """What each partition's task gets to make its fold labels."""
        off = self._offsets
        parts = range(len(off) - 1)
        if isinstance(folds, _Blocks):
            bases = self._args(folds.folds)
            if folds.rows is None:
                return [dataclasses.replace(folds, folds=b) for b in bases]
            return [
                _Blocks(b, rows=folds.rows[off[i] : off[i + 1]])
                for i, b in zip(parts, bases, strict=True)
            ]
        if isinstance(folds, _FoldRule):
            return [folds] * len(parts)
        folds = np.asarray(folds)
        return [folds[off[i] : off[i + 1]] for i in parts]

    # -- clusters ------------------------------------------------------------------------
    def cluster_sizes(self) -> tuple[int, ...]:
        plan = self._plan
        sizes = [len(lv) for lv in plan.cluster_labels]
        if len(sizes) == 2:
            assert plan.pair_keys is not None  # internal invariant
            sizes.append(len(plan.pair_keys))
        return tuple(sizes)

    def record_clusters(self) -> LazyCodes | None:
        if not self._plan.clusters:
            return None
        data, plan, off = self._data, self._plan, self._offsets
        two = len(plan.clusters) == 2

        def make() -> Any:
            import dask
            import dask.array as da

            blocks = [
                da.from_delayed(
                    dask.delayed(_codes_task)(p, plan),
                    shape=(int(off[i + 1] - off[i]), 2) if two else (int(off[i + 1] - off[i]),),
                    dtype=np.int64,
                )
                for i, p in enumerate(data.to_delayed())
            ]
            return da.concatenate(blocks, axis=0)

        return LazyCodes(int(off[-1]), self.cluster_sizes()[:2], make)

    # -- the passes ----------------------------------------------------------------------
    def basis_inputs(self, sieve: bool = True) -> TreatmentData:
        s = self._summary
        if sieve:  # the designs at the rows whose deconvolved quantiles place the knots
            return dataclasses.replace(self.inputs, U_priv=s.sample_priv, U_pub=s.sample_pub)
        # a fixed degree reads the public columns' means, standard deviations and which
        # are binary: three rows with the same
        half = np.sqrt(1.5) * s.pub_std
        rows = np.vstack([s.pub_mean - half, s.pub_mean, s.pub_mean + half])
        rows[:, s.pub_binary] = np.array([[0.0], [1.0], [0.0]])
        return dataclasses.replace(self.inputs, U_priv=s.sample_priv[:0], U_pub=rows)

    def _tasks(self, folds: Any, func: Any) -> list[Any]:
        import dask

        off = self._offsets
        # the plan and the pass are one shared node each, sent once to a cluster's workers
        plan, shared = dask.delayed(self._plan), dask.delayed(func)
        return [
            dask.delayed(_stats_task)(p, plan, a, shared, i, int(off[i]))
            for i, (p, a) in enumerate(zip(self._data.to_delayed(), self._args(folds), strict=True))
        ]

    def fold_sums(self, folds: Any, func: PartitionFn[FoldStats]) -> FoldStats:
        import dask

        (out,) = dask.compute(_tree_sum(self._tasks(folds, func), add_stats))
        return out

    def map_rows(self, folds: Any, func: PartitionFn[tuple[Any, ...]]) -> tuple[Any, ...]:
        import dask

        return _concat(dask.compute(*self._tasks(folds, func)))

    def reduce_rows(
        self,
        folds: Any,
        func: PartitionFn[tuple[Any, ...]],
        reducer: Callable[..., ScoreMoments],
        extras: Sequence[Any],
    ) -> tuple[ScoreMoments, tuple[Any, ...]]:
        """Run ``func`` on every partition and reduce its row arrays there.

        ``reducer(rows, inputs, *extras, *cluster_codes)`` gets the partition's slices of
        the row-aligned arrays ``extras`` (None stays None) and its cluster codes; the
        statistics and the totals are added up in a tree. No row-level array reaches the
        client.
        """
        import dask

        off = self._offsets
        plan, shared, red = dask.delayed(self._plan), dask.delayed(func), dask.delayed(reducer)
        tasks = []
        for i, (p, a) in enumerate(zip(self._data.to_delayed(), self._args(folds), strict=True)):
            sl = slice(int(off[i]), int(off[i + 1]))
            ex = [None if e is None else e[sl] for e in extras]
            tasks.append(dask.delayed(_reduce_task)(p, plan, a, shared, i, int(off[i]), red, ex))
        (out,) = dask.compute(_tree_sum(tasks, _add_reduced))
        return out

    def lazy_influence(
        self,
        folds: Any,
        func: PartitionFn[tuple[Any, ...]],
        kind: str,
        m: FloatArray,
        C: FloatArray,
        c0: FloatArray | None,
    ) -> LazyInfluence:
        r"""Influence values :math:`C'\omega_i(s_i - m)` as a lazy Dask array (on request)."""
        data, plan, offsets, args = self._data, self._plan, self._offsets, self._args(folds)

        def make() -> Any:
            import dask
            import dask.array as da

            shared_plan, shared = dask.delayed(plan), dask.delayed(func)
            blocks = []
            for i, p in enumerate(data.to_delayed()):
                a, b = int(offsets[i]), int(offsets[i + 1])
                task = dask.delayed(_influence_task)(
                    p, shared_plan, args[i], shared, i, a, kind, m, C,
                    None if c0 is None else c0[a:b],
                )  # fmt: skip
                blocks.append(da.from_delayed(task, shape=(b - a, C.shape[1]), dtype=float))
            return da.concatenate(blocks, axis=0)

        return LazyInfluence(int(offsets[-1]), C.shape[1], make)

    def warn_empty_columns(self, owner: str) -> None:
        # one-row stand-ins whose columns are nonzero exactly where the data's are
        k = self.inputs.U_priv.shape[1]
        flags = self._summary.nonzero.astype(float)[None, :]
        proxy = dataclasses.replace(self.inputs, U_priv=flags[:, :k], U_pub=flags[:, k:])
        warn_empty_columns(proxy, owner, stacklevel=4)


# -- building the model -----------------------------------------------------------------
def _public_variables(covariates: str, columns: list[str], mech: AlphaIdentity) -> list[str]:
    """Public data columns the covariate formula uses."""
    import formulaic

    try:
        needed = {str(v) for v in formulaic.Formula(covariates).required_variables}
    except Exception:  # an unparsable formula is reported by build_covariate_spec
        return []
    return [c for c in columns if c in needed and c not in mech.private_columns]


def level_coded_columns(spec: CovariateSpec) -> list[str]:
    """Public columns that the materialised covariate design codes by their levels.

    Read off the design, not the formula: formulaic's encoder state says which factors it
    coded as categories, so an integer column inside ``C(k)`` is found as well as a string
    column, while a number inside ``center(w)`` or ``bs(w, df=4)`` is not.

    Examples
    --------
    >>> import privinfer as pi
    >>> from privinfer.formula import build_covariate_spec
    >>> frame = pd.DataFrame({"x": [0.1, 0.5, 0.9, 0.3], "k": [0, 1, 2, 0],
    ...                       "w": [1.0, 2.0, 3.0, 4.0], "s": ["a", "b", "a", "b"]})
    >>> mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
    >>> spec = build_covariate_spec("x + C(k):center(w) + s", frame, mech, "demo")
    >>> level_coded_columns(spec)
    ['k', 's']
    """
    import formulaic
    from formulaic.parser.types import Factor

    if spec.public_spec is None:
        return []
    coded: set[str] = set()
    for expr, (kind, _) in spec.public_spec.encoder_state.items():
        if kind is Factor.Kind.CATEGORICAL:
            coded |= {str(v) for v in formulaic.Formula(expr).required_variables}
    return sorted(c for c in spec.public_variables if c in coded)


def _is_level_column(dtype: Any) -> bool:
    """Whether formulaic codes a column of this dtype by its levels (not as a number)."""
    return not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)


def _spec_frame(
    head: pd.DataFrame, levels: dict[str, list[Any]] | pd.DataFrame, mech: AlphaIdentity
) -> pd.DataFrame:
    """Rows to build the covariate spec on: the first rows, plus one row per public level.

    ``levels`` holds every level of the public level columns (object, string, category,
    bool) of the whole frame (a dict, or a frame with those levels in its columns), so
    that formulaic codes every one; categorical columns keep their categories. Private
    categorical levels come from the mechanism. Stateful transforms (``center(x)``,
    ``bs(w, df=4)``) learn from these rows only.
    """
    if isinstance(levels, pd.DataFrame):
        levels = {
            str(c): (list(levels[c].cat.categories) if isinstance(levels[c].dtype,
                     pd.CategoricalDtype) else []) + [v for v in pd.unique(levels[c].dropna())]
            for c in levels.columns
        }  # fmt: skip
        levels = {c: list(dict.fromkeys(v)) for c, v in levels.items()}
    head = head.copy()
    cats = {}
    for col in levels:
        if isinstance(head[col].dtype, pd.CategoricalDtype):
            cats[col] = list(head[col].cat.categories)
            head[col] = head[col].astype(object)  # cast back below, with every level
    extra = []
    for col, values in levels.items():
        for v in values:
            row = head.iloc[[0]].copy()
            row[col] = v
            extra.append(row)
    frame = pd.concat([head, *extra], ignore_index=True) if extra else head
    for col, values in levels.items():
        if col in cats:
            known = cats[col] + [v for v in values if v not in cats[col]]
            frame[col] = pd.Categorical(frame[col], categories=known)
        else:
            frame[col] = frame[col].astype(head[col].dtype)
    return cast_private_categoricals(frame, mech)


def _partition_levels(part: pd.DataFrame, columns: list[str]) -> dict[str, list[Any]]:
    """Distinct values (and categories) of a partition's public level columns."""
    out = {}
    for col in columns:
        s = part[col]
        vals = list(s.cat.categories) if isinstance(s.dtype, pd.CategoricalDtype) else []
        out[col] = vals + [v for v in pd.unique(s.dropna()).tolist() if v not in vals]
    return out


def _merged_levels(found: list[dict[str, list[Any]]], columns: list[str]) -> dict[str, list[Any]]:
    """The levels of ``columns`` over all partitions, in order of first appearance."""
    levels: dict[str, list[Any]] = {c: [] for c in columns}
    for part_levels in found:
        for col, vals in part_levels.items():
            levels[col] += [v for v in vals if v not in levels[col]]
    return levels


def check_dask_columns(data: Any, mechanism: AlphaIdentity, owner: str) -> list[str]:
    """The frame's column names; the mechanism's private columns must be among them.

    Checked on the frame's ``_meta`` (columns, dtypes and the release's description), so
    nothing is computed.
    """
    columns = [str(c) for c in data.columns]
    check_private_columns(mechanism.private_columns, columns, owner)
    # columns, dtypes and the release's description (carried by the frame's _meta)
    mechanism.check_data(data._meta, owner)
    return columns


def _moments(v: FloatArray) -> tuple[int, FloatArray, FloatArray]:
    """Count, column means and centred sums of squares (merged by :func:`_merge_moments`)."""
    n = v.shape[0]
    mean = v.mean(axis=0) if n else np.zeros(v.shape[1:])
    return n, mean, ((v - mean) ** 2).sum(axis=0)


def _merge_moments(parts: Sequence[tuple[int, FloatArray, FloatArray]]) -> tuple[Any, Any]:
    """Mean and variance (``ddof=0``) of the union of the parts (Chan et al., 1983)."""
    n = np.array([p[0] for p in parts], dtype=float)
    means = np.array([p[1] for p in parts], dtype=float)
    m2 = np.array([p[2] for p in parts], dtype=float)
    total = n.sum()
    mean = np.tensordot(n, means, 1) / total
    dev = means - mean
    return mean, (m2.sum(axis=0) + np.tensordot(n, dev * dev, 1)) / total


def _summarise(part: pd.DataFrame, plan: _Plan, rows: IntArray) -> dict[str, Any]:
    """Check one partition as the pandas code checks a frame; its small summaries.

    ``rows``: the partition's rows among those that place the adaptive sieve's knots
    (:func:`~privinfer.nuisance.sieve.quantile_rows` of the whole frame).
    """
    owner, mech, spec = plan.owner, plan.mechanism, plan.spec
    n = len(part)
    out: dict[str, Any] = {"n": n}
    out["ref_cells"] = None
    if n:
        mech.check_data(part, owner, verify=False)
        out["ref_cells"] = reference_cells(mech, part)
        check_public_columns(
            part, [plan.outcome, plan.treatment], mech,
            {plan.outcome: "outcome", plan.treatment: "treatment"}, owner,
        )  # fmt: skip
        check_public_columns(part, list(spec.public_variables), mech, {}, owner)
    y = pd.to_numeric(part[plan.outcome], errors="coerce").to_numpy(dtype=float)
    if not np.all(np.isfinite(y)):
        raise DataMismatchError(f"{owner}: outcome {plan.outcome!r} must be numeric and finite.")
    out["y"] = _moments(y[:, None])
    t = part[plan.treatment]
    codes, uniques = pd.factorize(t)
    out["t_values"] = uniques.tolist()  # Python scalars, as pandas' levels are
    out["t_counts"] = np.bincount(codes, minlength=len(uniques))
    w = None
    if plan.weights is not None:
        w = weight_values(part, plan.weights, mech, owner)
        out["t_weights"] = np.bincount(codes, weights=w, minlength=len(uniques))
        out["w_sq"] = float(w @ w)  # for Kish's effective sample size of the weights
    # clusters: labels in order of first appearance; the first dimension's counts by level
    labels = []
    for col in plan.clusters:
        s = part[col]
        if s.isna().any():
            raise ClusterError(
                f"{owner}: cluster column {col!r} holds {int(s.isna().sum())} missing label(s)."
            )
        labels.append(pd.unique(s))
    out["clusters"] = labels
    if plan.clusters:
        frame = pd.DataFrame({"c": part[plan.clusters[0]].to_numpy(), "t": codes})
        out["cluster_t"] = frame.groupby(["c", "t"], sort=False).size()
    if len(plan.clusters) == 2:
        out["pairs"] = part[list(plan.clusters)].drop_duplicates()
    # designs: checked, which columns are nonzero, the sieve's rows, public moments
    if n:
        released = cast_private_categoricals(part, mech)
        U_priv, U_pub = spec.private_design(released), spec.public_design(released)
        if U_priv.shape[0] != n or U_pub.shape[0] != n:
            raise DataMismatchError(f"{owner}: formulaic dropped rows; check for missing values.")
    else:
        U_priv, U_pub = np.zeros((0, plan.n_priv)), np.zeros((0, plan.n_pub))
    out["nonzero"] = np.concatenate([np.any(U_priv, axis=0), np.any(U_pub, axis=0)])
    out["sample"] = (U_priv[rows], U_pub[rows])
    out["pub"] = _moments(U_pub)
    out["binary"] = np.all((U_pub == 0) | (U_pub == 1), axis=0)
    # the partition's public row identity (merged into the data fingerprint)
    ident = [part.index.to_numpy(), t.to_numpy(), w, *(part[c].to_numpy() for c in plan.clusters)]
    out["digest"] = data_fingerprint(*ident)
    return out


def _treatment_levels(
    outs: list[dict[str, Any]], meta: pd.Series, reference_level: Any, owner: str
) -> list[Any]:
    """The levels :func:`~privinfer.models._inputs.treatment_levels` finds, from summaries."""
    values = pd.Series([v for o in outs for v in o["t_values"]], dtype=object)
    counts = np.concatenate([o["t_counts"] for o in outs]) if outs else np.zeros(0)
    present = pd.Series(counts).groupby(values.to_numpy()).sum()
    present = present[present > 0]
    if isinstance(meta.dtype, pd.CategoricalDtype):
        cats = [c for c in meta.cat.categories if c != "__UNKNOWN_CATEGORIES__"]
        known = [c for c in cats if c in present.index]
        seen = [v for v in pd.unique(values).tolist() if v in present.index and v not in known]
        levels = known + seen
    else:
        levels = sorted_levels(pd.unique(values).tolist(), meta.name, owner)
    return order_treatment_levels(levels, meta, reference_level, owner)


def _by_level(outs: list[dict[str, Any]], key: str, levels: list[Any]) -> FloatArray:
    """Per partition, the summaries' ``key`` (counts or weights) by treatment level."""
    index = pd.Index(levels)
    table = np.zeros((len(outs), len(levels)))
    for i, o in enumerate(outs):
        pos = index.get_indexer(pd.Series(o["t_values"], dtype=object))
        np.add.at(table[i], pos, o[key])
    return table


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

    The first rows (and, when the formula uses public level columns, their levels) build the
    covariate spec; a number the design codes by level (``C(k)``) has its levels scanned in
    one more pass over that column, and the spec is built again. Then one pass over the
    partitions checks each of them and returns the small summaries merged here (see the
    module docstring): the treatment levels and counts, the outcome's variance, the weights'
    mean, the cluster labels, the data fingerprint (a hash of the partitions' digests of
    their public row identity), which covariate columns are nonzero, the public design's
    moments and the designs at the rows whose deconvolved quantiles place the adaptive
    sieve's knots (:func:`~privinfer.nuisance.sieve.quantile_rows`, about 100,000 rows), so
    that the sieve is the one pandas builds. The returned inputs hold no rows (their
    :class:`~privinfer.models._inputs.RowTotals` stand in for them).

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
    meta = data._meta
    check_public_columns(
        meta, [outcome, treatment], mechanism, {outcome: "outcome", treatment: "treatment"}, owner
    )
    cl = options.cluster
    cl_names = [] if cl is None else cluster_columns(columns, cl, mechanism.private_columns, owner)
    if options.weights is not None:
        weight_values(meta, options.weights, mechanism, owner)  # name, role and dtype
    pub_vars = _public_variables(covariates, columns, mechanism)
    level_cols = [c for c in pub_vars if _is_level_column(meta[c].dtype)]
    # the first rows from the first partition (all partitions only if it has too few)
    first = dask.delayed(pd.DataFrame.head)(data.to_delayed()[0], 1000)
    found = [] if not level_cols else [
        dask.delayed(_partition_levels)(p, level_cols) for p in data[level_cols].to_delayed()
    ]  # fmt: skip
    head, found = dask.compute(first, found)
    if len(head) < 1000:
        head = data.head(1000, npartitions=-1)
    if len(head) == 0:
        raise DataMismatchError(f"{owner}: the data frame is empty.")
    levels = _merged_levels(found, level_cols)
    mechanism.check_data(head, owner, verify=False)
    spec = build_covariate_spec(covariates, _spec_frame(head, levels, mechanism), mechanism, owner)
    extra = [c for c in level_coded_columns(spec) if c not in levels]
    if extra:  # numbers coded by level (C(k)): their levels need one more pass
        (found,) = dask.compute(
            [dask.delayed(_partition_levels)(p, extra) for p in data[extra].to_delayed()]
        )
        levels |= _merged_levels(found, extra)
        frame = _spec_frame(head, levels, mechanism)
        spec = build_covariate_spec(covariates, frame, mechanism, owner)
    check_public_columns(meta, list(spec.public_variables), mechanism, {}, owner)
    plan = _Plan(
        mechanism=mechanism,
        spec=spec,
        outcome=outcome,
        treatment=treatment,
        levels=(),
        weights=options.weights,
        weight_mean=1.0,
        n_priv=len(spec.private_names),
        n_pub=len(spec.public_names),
        owner=owner,
        clusters=tuple(cl_names),
    )
    parts = data.to_delayed()
    local: list[Any] = [np.zeros(0, dtype=np.int64)] * len(parts)
    if options.degree is None or options.degree == "cv":
        # the adaptive sieve reads the private design at rows of the whole frame: their
        # positions need the partitions' lengths first (one more pass)
        (lengths,) = dask.compute([dask.delayed(len)(p) for p in parts])
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        wanted = quantile_rows(int(offsets[-1]))
        cuts = np.searchsorted(wanted, offsets)
        local = [wanted[cuts[i] : cuts[i + 1]] - offsets[i] for i in range(len(parts))]
    shared = dask.delayed(plan)
    (outs,) = dask.compute(
        [dask.delayed(_summarise)(p, shared, r) for p, r in zip(parts, local, strict=True)]
    )
    return _merge(data, outs, plan, options, binary_reason, owner)


def _merge(
    data: Any,
    outs: list[dict[str, Any]],
    plan: _Plan,
    options: TreatmentOptions,
    binary_reason: str | None,
    owner: str,
) -> tuple[TreatmentData, DaskRows]:
    """The whole frame's inputs from its partitions' summaries."""
    lengths = np.array([o["n"] for o in outs], dtype=np.int64)
    n = int(lengths.sum())
    if n == 0:
        raise DataMismatchError(f"{owner}: the data frame is empty.")
    cells = [o["ref_cells"] for o in outs if o["ref_cells"] is not None]
    # the reference-share floor of the whole frame: cell counts add over partitions
    check_reference_counts(plan.mechanism, [sum(c) for c in zip(*cells, strict=True)], n, owner)
    levels = _treatment_levels(outs, data._meta[plan.treatment], options.reference_level, owner)
    _check_routes(levels, plan.spec, options, binary_reason, owner)
    counts = _by_level(outs, "t_counts", levels).astype(np.int64)
    weight_mean, arm_weights = 1.0, counts.sum(axis=0).astype(float)
    n_eff = None
    if plan.weights is not None:
        wsum = _by_level(outs, "t_weights", levels).sum(axis=0)
        if not np.any(wsum > 0):
            raise WeightsError(f"{owner}: weights column {plan.weights!r} is zero everywhere.")
        weight_mean = float(wsum.sum()) / n
        arm_weights = wsum / weight_mean
        n_eff = kish_from_sums(float(wsum.sum()), float(sum(o["w_sq"] for o in outs)))
    cluster_labels: list[Any] = []
    for j, col in enumerate(plan.clusters):
        found = [o["clusters"][j] for o in outs if len(o["clusters"][j])]
        lab = pd.unique(np.concatenate(found)) if found else np.array([])
        if lab.size < 2:
            raise ClusterError(
                f"{owner}: cluster-robust inference needs at least 2 clusters; cluster column "
                f"{col!r} has {lab.size}."
            )
        cluster_labels.append(lab)
    pair_keys = None
    if len(plan.clusters) == 2:
        pairs = pd.concat([o["pairs"] for o in outs]).drop_duplicates()
        c0 = pd.Index(cluster_labels[0]).get_indexer(pairs.iloc[:, 0])
        c1 = pd.Index(cluster_labels[1]).get_indexer(pairs.iloc[:, 1])
        pair_keys = np.asarray(c0 * len(cluster_labels[1]) + c1, dtype=np.int64)
    table = None
    if plan.clusters:
        table = np.zeros((len(cluster_labels[0]), len(levels)))
        index, level_index = pd.Index(cluster_labels[0]), pd.Index(levels)
        for o in outs:
            ct = o["cluster_t"]
            if len(ct):
                g = index.get_indexer(ct.index.get_level_values(0))
                t_vals = pd.Series(o["t_values"], dtype=object).to_numpy()
                k = level_index.get_indexer(t_vals[ct.index.get_level_values(1).to_numpy()])
                np.add.at(table, (g, k), ct.to_numpy(dtype=float))
    _, y_var = _merge_moments([o["y"] for o in outs])
    pub_mean, pub_var = _merge_moments([o["pub"] for o in outs])
    plan = dataclasses.replace(
        plan,
        levels=tuple(levels),
        weight_mean=weight_mean,
        cluster_labels=tuple(cluster_labels),
        pair_keys=pair_keys,
    )
    summary = _Summary(
        lengths=lengths,
        level_counts=counts,
        nonzero=np.any(np.vstack([o["nonzero"] for o in outs]), axis=0),
        sample_priv=np.vstack([o["sample"][0] for o in outs]),
        sample_pub=np.vstack([o["sample"][1] for o in outs]),
        pub_mean=np.atleast_1d(pub_mean),
        pub_std=np.sqrt(np.atleast_1d(pub_var)),
        pub_binary=np.all(np.vstack([o["binary"] for o in outs]), axis=0),
        cluster_table=table,
    )
    digests = np.array([o["digest"] for o in outs])
    inputs = TreatmentData(
        outcome=plan.outcome,
        treatment=plan.treatment,
        spec=plan.spec,
        y=np.zeros(0),
        d=np.zeros(0, dtype=np.int64),
        levels=levels,
        U_priv=np.zeros((0, plan.n_priv)),
        U_pub=np.zeros((0, plan.n_pub)),
        cluster_names=plan.clusters,
        clusters=None,
        weights_name=plan.weights,
        w=None,
        fingerprint=data_fingerprint(lengths, digests),
        totals=RowTotals(n, counts.sum(axis=0), arm_weights, float(np.squeeze(y_var)), n_eff),
    )
    return inputs, DaskRows(data, plan, inputs, summary)
