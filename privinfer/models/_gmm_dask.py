r"""PrivateGMM on Dask DataFrames: every pass is a sum over partitions.

The formula routes of :class:`~privinfer.models.gmm.PrivateGMM` need sums over rows
only (Kormos and van der Vaart 2026, Proposition 2):

* the raw cross-products :math:`\sum_i c_ic_i'` and public column sums, from which every
  deconvolved second moment :math:`S` and so the OLS, 2SLS and GMM estimates follow;
* the outer products of the private moment rows, :math:`\sum_i\bar\phi_i\bar\phi_i'`,
  or with public clusters the within-cluster sums :math:`s_g = \sum_{i\in g}\bar\phi_i`
  (a group-by sum by cluster key), for the efficient weight, the sandwich, the
  Anderson-Rubin blocks and the first-stage F;
* for the logit, the mean private score and its Jacobian at each Newton step, and the
  sums behind the average marginal effects.

:class:`DaskLinearDesign` has the interface of
:class:`~privinfer.models._gmm_design.LinearDesign` that the engines use, so the linear
and logit engines run unchanged on it. Each pass is one task per partition; a task
builds the released design of its partition (the same formulaic specs as the whole
frame, so a partition that lacks a categorical level still yields every column) and
returns a few small arrays, added in a tree. Nothing of length ``n`` comes back to the
client: the influence values are *omitted* (:class:`OmittedInfluence` keeps their shape
so ``nobs`` holds; reading them raises
:class:`~privinfer.exceptions.UnsupportedBackendError`), and cluster labels stay in the
frame. The rows, the specs and every sum are those of the pandas fit, so estimates,
standard errors and tests agree up to floating-point summation order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privinfer._typing import FloatArray, IntArray
from privinfer.covariance import outer_from_sums
from privinfer.exceptions import (
    ClusterError,
    DataMismatchError,
    UnsupportedBackendError,
    WeightsError,
)
from privinfer.formula import check_public_columns
from privinfer.mechanisms._consistency import check_reference_counts, reference_cells
from privinfer.mechanisms.alpha_identity import AlphaIdentity
from privinfer.models._backend import (
    _public_variables,
    _spec_frame,
    _tree_sum,
    check_dask_columns,
    is_dask_frame,
    level_coded_columns,
)
from privinfer.models._gmm_design import LinearDesign, LinearFormula, LinearSpecs, linear_specs
from privinfer.models._inputs import kish_from_sums, weight_values

__all__ = [
    "ClusterKeys",
    "DaskLinearDesign",
    "OmittedCodes",
    "OmittedInfluence",
    "dask_linear_design",
]

#: A pass over one partition: its design and a row slice -> rows (n_rows x k).
RowsFn = Callable[[LinearDesign, slice], FloatArray]

_HINT = "compute() the Dask frame to pandas first"


class OmittedInfluence:
    """Stand-in for the influence values of a Dask fit: their shape, never their values.

    The covariance of a Dask fit is reduced over partitions, so the ``n x p`` influence
    values are never gathered. Reading them (``res.influence``, the multiplier bootstrap)
    raises :class:`~privinfer.exceptions.UnsupportedBackendError`.

    Examples
    --------
    >>> omitted = OmittedInfluence((1000, 2))
    >>> omitted.shape, len(omitted), omitted[:, [0]].shape
    ((1000, 2), 1000, (1000, 1))
    """

    what = "the influence values"

    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = tuple(int(s) for s in shape)
        self.ndim = len(self.shape)

    def __len__(self) -> int:
        return self.shape[0]

    def __getitem__(self, key: Any) -> OmittedInfluence:
        cols = key[1] if isinstance(key, tuple) and len(key) == 2 else slice(None)
        return type(self)((self.shape[0], len(np.empty(self.shape[1])[cols])))

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        raise UnsupportedBackendError(
            f"This fit ran on a Dask DataFrame: {self.what} were reduced over the "
            f"partitions and never gathered, nor saved with its results (n = "
            f"{self.shape[0]} rows). Refit on pandas ({_HINT}) for row-level values and "
            "the multiplier bootstrap."
        )

    def __iter__(self) -> Any:
        self.__array__()

    def _arith(self, other: Any) -> Any:
        # combining results (``a - b``) needs the values themselves
        return self.__array__()

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = _arith

    def __repr__(self) -> str:
        return f"{type(self).__name__}(shape={self.shape})"


class OmittedCodes(OmittedInfluence):
    """Stand-in for the cluster codes of a Dask fit: their counts, never their values.

    Examples
    --------
    >>> codes = OmittedCodes(1000, (12, 5))
    >>> int(codes[:, 0].max()) + 1, int(codes[:, 1].max()) + 1
    (12, 5)
    """

    what = "the cluster codes"

    def __init__(self, n_obs: int, counts: Sequence[int]) -> None:
        self.counts = tuple(int(c) for c in counts)
        super().__init__((n_obs,) if len(self.counts) == 1 else (n_obs, len(self.counts)))

    def __getitem__(self, key: Any) -> OmittedCodes:
        j = key[1] if isinstance(key, tuple) and len(key) == 2 else 0
        return OmittedCodes(self.shape[0], (self.counts[j],))

    def max(self) -> int:
        """Largest code, ``G - 1`` (one dimension)."""
        return self.counts[0] - 1

    def copy(self) -> OmittedCodes:
        """The stand-in itself (immutable)."""
        return self


@dataclass(frozen=True)
class ClusterKeys:
    """Public cluster labels of a Dask fit: columns of ``frame``, with their counts.

    Attributes
    ----------
    columns : tuple of str
        One or two label columns of ``frame``.
    counts : tuple of int
        Number of clusters in each dimension.
    frame : dask DataFrame
        The model's columns and the label columns.
    n_obs : int
    """

    columns: tuple[str, ...]
    counts: tuple[int, ...]
    frame: Any
    n_obs: int

    @property
    def ndim(self) -> int:
        """1 (one-way) or 2 (two-way)."""
        return len(self.columns)

    def omitted(self) -> OmittedCodes:
        """The stand-in the results record carries."""
        return OmittedCodes(self.n_obs, self.counts)


# -- per-partition tasks -----------------------------------------------------------------
def _weight_sums(part: pd.DataFrame, weights: str, mech: AlphaIdentity, owner: str) -> Any:
    """Check a partition's sampling weights; their sum, count and sum of squares."""
    w = weight_values(part, weights, mech, owner)
    return np.array([w.sum(), w.size, w @ w])


def _check_task(part: pd.DataFrame, specs: LinearSpecs) -> tuple[Any, ...]:
    """Validate one partition; its row count, raw cross-products, public sums and
    reference-cell counts (for the whole frame's reference-share floor test).
    """
    if len(part):
        specs.mechanism.check_data(part, specs.owner, verify=False)
        check_public_columns(part, specs.public_used, specs.mechanism, {}, specs.owner)
    d = specs.design(part)
    raw, pub = d.raw_sums()
    return np.array([d.n_obs]), raw, pub, tuple(reference_cells(specs.mechanism, part))


def _sum_task(part: pd.DataFrame, specs: LinearSpecs, func: Any) -> Any:
    return func(specs.design(part))


def _add(a: Any, b: Any) -> Any:
    """Add two (nested tuples of) arrays."""
    if isinstance(a, tuple):
        return tuple(_add(x, y) for x, y in zip(a, b, strict=True))
    return a + b


def _group_sums(r: FloatArray, labels: Sequence[np.ndarray]) -> list[pd.DataFrame]:
    """Within-cluster sums of ``r`` by each dimension (two-way: and the intersections)."""
    frame = pd.DataFrame(r)
    keys: list[Any] = [labels[0]] if len(labels) == 1 else [labels[0], labels[1], list(labels)]
    return [frame.groupby(k, sort=False).sum() for k in keys]


def _add_groups(a: Any, b: Any) -> Any:
    if isinstance(a, np.ndarray):
        return a + b
    return [x.add(y, fill_value=0.0) for x, y in zip(a, b, strict=True)]


def _outer_task(
    part: pd.DataFrame, specs: LinearSpecs, func: RowsFn, keys: tuple[str, ...], k: int
) -> Any:
    """Sum of ``r r'`` over the partition, or its within-cluster sums of ``r``."""
    d = specs.design(part)
    labels = [part[c].to_numpy() for c in keys]
    if not keys:
        tot = np.zeros((k, k))
        for rows in d.chunks():
            r = func(d, rows)
            tot += r.T @ r
        return tot
    out: list[pd.DataFrame] | None = None
    for rows in d.chunks():
        sums = _group_sums(func(d, rows), [lab[rows] for lab in labels])
        out = sums if out is None else _add_groups(out, sums)
    if out is None:  # an empty partition
        index: list[Any] = [pd.Index([])] * len(keys)
        if len(keys) == 2:
            index.append(pd.MultiIndex.from_arrays([[], []]))
        out = [pd.DataFrame(np.zeros((0, k)), index=ix) for ix in index]
    return out


# -- the design ----------------------------------------------------------------------------
class DaskLinearDesign:
    """The released design of a Dask frame, visited partition by partition.

    Same attributes and passes as :class:`~privinfer.models._gmm_design.LinearDesign`
    (names, column roles, ``raw_moments``, ``moment_outer``...); ``public`` and
    ``private`` (the ``n``-row arrays) do not exist.

    Parameters
    ----------
    data : dask DataFrame
        The columns the model uses.
    source : dask DataFrame
        The frame as given (cluster columns are read from it).
    specs : LinearSpecs
    n_obs : int
    raw, pub_sum : ndarray
        Raw cross-products and public column sums (validation pass).
    weights_n_eff : float or None
        Kish's effective sample size of the sampling weights, from the partitions' sums
        of the weights and of their squares; None without weights.
    """

    def __init__(
        self,
        data: Any,
        source: Any,
        specs: LinearSpecs,
        n_obs: int,
        raw: FloatArray,
        pub_sum: FloatArray,
        weights_n_eff: float | None = None,
    ) -> None:
        self._data = data
        self._source = source
        self.specs = specs
        self.weights_n_eff = weights_n_eff
        self.template = specs.design(pd.DataFrame())
        self.n_obs = n_obs
        self._raw = raw
        self._pub_sum = pub_sum
        t = self.template
        self.names, self.x_idx, self.z_idx = t.names, t.x_idx, t.z_idx
        self.endog_idx, self.instr_idx, self.spec = t.endog_idx, t.instr_idx, t.spec
        self.n_public, self.n_private = t.n_public, t.n_private

    # -- what needs no rows ------------------------------------------------------------------
    def reference_table(self, mean: FloatArray, outer: FloatArray) -> FloatArray:
        """As :meth:`LinearDesign.reference_table`."""
        return self.template.reference_table(mean, outer)

    def private_second_moments(self, *args: Any) -> FloatArray:
        """As :meth:`LinearDesign.private_second_moments`."""
        return self.template.private_second_moments(*args)

    def raw_moments(self) -> tuple[FloatArray, FloatArray]:
        """Raw cross-products :math:`C'C/n` and public column means (computed once)."""
        return self._raw / self.n_obs, self._pub_sum / self.n_obs

    @property
    def public(self) -> FloatArray:
        """Not available: the released rows stay in the Dask frame."""
        raise UnsupportedBackendError(
            f"{self.specs.owner}: this model was built on a Dask DataFrame; predictions and "
            "residuals at the released rows would gather n values on the client. Call "
            f"predict(frame) on a pandas frame, or {_HINT}."
        )

    private = public

    # -- passes ----------------------------------------------------------------------------
    def sums(
        self, func: Callable[[LinearDesign], Any], add: Callable[[Any, Any], Any] | None = None
    ) -> Any:
        """``func`` of every partition's design, combined by ``add`` (default: added)."""
        import dask

        specs = dask.delayed(self.specs)
        shared = dask.delayed(func)
        tasks = [dask.delayed(_sum_task)(p, specs, shared) for p in self._data.to_delayed()]
        (out,) = dask.compute(_tree_sum(tasks, add or _add))
        return out

    def outer(self, func: RowsFn, k: int, codes: ClusterKeys | None, small_g: bool) -> FloatArray:
        r""":math:`\frac1n\sum_u s_us_u'` of the rows ``func`` gives, over rows or clusters."""
        import dask

        frame = self._data if codes is None else codes.frame
        keys = () if codes is None else codes.columns
        specs, shared = dask.delayed(self.specs), dask.delayed(func)
        tasks = [dask.delayed(_outer_task)(p, specs, shared, keys, k) for p in frame.to_delayed()]
        (out,) = dask.compute(_tree_sum(tasks, _add_groups))
        if codes is None:
            return out / self.n_obs
        sums = [np.asarray(s.to_numpy(), dtype=float) for s in out]
        return outer_from_sums(sums, self.n_obs, small_g=small_g)

    def moment_outer(
        self,
        W: FloatArray,
        cols: IntArray,
        table: FloatArray,
        alpha: float,
        codes: Any,
        small_g: bool,
        mu: FloatArray | None = None,
        bread: FloatArray | None = None,
    ) -> tuple[FloatArray, Any]:
        """As :meth:`LinearDesign.moment_outer`; the influence values are omitted."""
        func = _MomentRows(W, cols, table, alpha, mu)
        Phi = self.outer(func, cols.size * W.shape[1], codes, small_g)
        infl = None if bread is None else OmittedInfluence((self.n_obs, bread.shape[0]))
        return Phi, infl

    def cluster_keys(self, clusters: Any, owner: str) -> ClusterKeys:
        """Validate public cluster labels given as column name(s) or as a Dask Series/frame.

        Raises
        ------
        ClusterError
            Unknown or private columns, more than two dimensions, missing labels, fewer
            than 2 clusters, or labels that are not in the frame.
        """
        import dask

        private = self.specs.mechanism.private_columns
        frame = self._data
        if isinstance(clusters, str) or (
            isinstance(clusters, (list, tuple)) and all(isinstance(c, str) for c in clusters)
        ):
            names = [clusters] if isinstance(clusters, str) else list(clusters)
            for col in names:
                if col not in self._source.columns:
                    raise ClusterError(
                        f"{owner}: cluster column {col!r} is not in the data (columns: "
                        f"{list(self._source.columns)!r})."
                    )
                if col in private:
                    raise ClusterError(
                        f"{owner}: cluster column {col!r} is covered by the mechanism; cluster "
                        "labels must be public (they group released rows for the variance)."
                    )
            extra = [c for c in dict.fromkeys(names) if c not in frame.columns]
            if extra:
                frame = self._source[[*frame.columns, *extra]]
            columns = names
        elif is_dask_frame(clusters) or type(clusters).__module__.split(".")[0] == "dask":
            series = isinstance(getattr(clusters, "_meta", None), pd.Series)
            labels = clusters.to_frame() if series else clusters
            columns = [f"__cluster{j}__" for j in range(len(labels.columns))]
            try:
                frame = frame.assign(
                    **{c: labels[s] for c, s in zip(columns, labels.columns, strict=True)}
                )
            except Exception as err:  # dask says why the partitions do not align
                raise ClusterError(
                    f"{owner}: the cluster labels must be partitioned like the data ({err})."
                ) from err
        else:
            raise ClusterError(
                f"{owner}: on Dask input, clusters must be column name(s) of the data or a Dask "
                f"Series / DataFrame of labels partitioned like it; got {type(clusters).__name__}."
            )
        if not 1 <= len(columns) <= 2:
            raise ClusterError(
                f"{owner}: clusters must hold one label per row, in one column (one-way) or two "
                f"(two-way); got {len(columns)} columns."
            )
        stats = dask.compute(*[(frame[c].isna().sum(), frame[c].nunique()) for c in columns])
        counts = []
        for j, (n_na, n_unique) in enumerate(stats):
            what = "clusters" if len(columns) == 1 else f"cluster dimension {j}"
            if n_na:
                raise ClusterError(f"{owner}: {what} holds {int(n_na)} missing label(s).")
            if n_unique < 2:
                raise ClusterError(
                    f"{owner}: cluster-robust inference needs at least 2 clusters; {what} has "
                    f"{int(n_unique)}."
                )
            counts.append(int(n_unique))
        return ClusterKeys(tuple(columns), tuple(counts), frame, self.n_obs)


@dataclass(frozen=True)
class _MomentRows:
    """The stacked private moment rows of :meth:`LinearDesign.moment_outer`, less ``mu``."""

    W: FloatArray
    cols: IntArray
    table: FloatArray
    alpha: float
    mu: FloatArray | None

    def __call__(self, d: LinearDesign, rows: slice) -> FloatArray:
        W = self.W
        parts = [d.moment_rows(W[:, b], self.cols, self.table, self.alpha, rows)
                 for b in range(W.shape[1])]  # fmt: skip
        r = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=1)
        if self.mu is not None:
            r -= self.mu
        return r


def _levels_frame(data: Any, columns: list[str], *, every: bool = False) -> pd.DataFrame:
    """Every level of the non-numeric public ``columns`` (one short column each).

    ``every`` takes the numeric ones too (numbers the design codes by level, ``C(k)``).
    """
    import dask

    meta = data._meta
    wanted = [
        c for c in columns
        if every
        or not (pd.api.types.is_numeric_dtype(meta[c]) and not pd.api.types.is_bool_dtype(meta[c]))
        or isinstance(meta[c].dtype, pd.CategoricalDtype)
    ]  # fmt: skip
    if not wanted:
        return pd.DataFrame(index=pd.RangeIndex(0))
    uniques = dask.compute(*[data[c].drop_duplicates() for c in wanted])
    width = max(len(u) for u in uniques)
    out = {}
    for c, u in zip(wanted, uniques, strict=True):
        vals = u.to_numpy(dtype=object)
        vals = np.resize(vals, width) if len(vals) else vals
        if isinstance(meta[c].dtype, pd.CategoricalDtype):
            cats = meta[c].cat.categories
            if len(cats) == 0:  # unknown categories: the observed ones
                cats = pd.Index(pd.unique(vals))
            out[c] = pd.Categorical(vals, categories=cats)
        else:
            out[c] = pd.Series(vals, dtype=object)
    return pd.DataFrame(out)


def dask_linear_design(
    parsed: LinearFormula,
    data: Any,
    mechanism: AlphaIdentity,
    owner: str,
    *,
    persist: bool = False,
    weights: str | None = None,
) -> DaskLinearDesign:
    """Validate a Dask frame and sum its raw cross-products, as ``build_linear_design`` does.

    The formulaic specs are learned on the first rows plus one row per level of every
    public categorical column (the levels of private categoricals come from the
    mechanism; those of a number coded by level, ``C(k)``, are read off the design and
    scanned in one more pass); one pass then checks every partition (release columns,
    missing values) and sums its cross-products. With ``persist`` the model's columns are kept in
    (cluster) memory for the later passes (the logit's Newton steps).

    Raises
    ------
    MechanismMismatchError, DataMismatchError, MissingValueError, NonSeparableTermError
        As with pandas input.
    """
    import dask

    columns = check_dask_columns(data, mechanism, owner)
    head = data.head(1000, npartitions=-1)
    if len(head) == 0:
        raise DataMismatchError(f"{owner}: the data frame is empty.")
    mechanism.check_data(head, owner, verify=False)
    mean, n_eff = 1.0, None
    if weights is not None:
        weight_values(data._meta, weights, mechanism, owner)  # name, role and dtype
        tasks = [dask.delayed(_weight_sums)(p, weights, mechanism, owner)
                 for p in data[[weights]].to_delayed()]  # fmt: skip
        (total,) = dask.compute(_tree_sum(tasks, _add))
        mean = float(total[0] / total[1]) if total[1] else 0.0
        if not mean > 0:
            raise WeightsError(f"{owner}: weights column {weights!r} is zero everywhere.")
        n_eff = kish_from_sums(float(total[0]), float(total[2]))
    needed = _public_variables(f"{parsed.rhs} + {parsed.dependent}", columns, mechanism)
    levels = _levels_frame(data, needed)
    frame = _spec_frame(head, levels, mechanism)
    specs = linear_specs(parsed, frame, mechanism, owner, weights, mean)
    extra = [c for c in level_coded_columns(specs.spec) if c not in levels.columns]
    if extra:  # numbers coded by level (C(k)): their levels need one more pass
        levels = pd.concat([levels, _levels_frame(data, extra, every=True)], axis=1)
        frame = _spec_frame(head, levels, mechanism)
        specs = linear_specs(parsed, frame, mechanism, owner, weights, mean)
    used = set(specs.public_used) | set(specs.spec.variables) | set(mechanism.private_columns)
    used |= {weights} if weights is not None else set()
    keep = [c for c in columns if c in used]
    sub = data[keep]
    if persist:
        sub = sub.persist()
    tasks = [dask.delayed(_check_task)(p, dask.delayed(specs)) for p in sub.to_delayed()]
    (out,) = dask.compute(_tree_sum(tasks, _add))
    n_obs, raw, pub_sum = int(out[0][0]), out[1], out[2]
    if n_obs == 0:
        raise DataMismatchError(f"{owner}: the data frame is empty.")
    check_reference_counts(mechanism, list(out[3]), n_obs, owner)
    return DaskLinearDesign(sub, data, specs, n_obs, raw, pub_sum, n_eff)


# -- the logit's passes ---------------------------------------------------------------------
Scaling = tuple[FloatArray, FloatArray, FloatArray, FloatArray]
Span = Any  # privinfer.inversion.IndexSpan


class _Max(float):
    """A float that partitions combine by ``max`` (interpolation errors)."""


def _add_max(a: Any, b: Any) -> Any:
    if isinstance(a, _Max):
        return _Max(max(a, b))
    if isinstance(a, tuple):
        return tuple(_add_max(x, y) for x, y in zip(a, b, strict=True))
    return a + b


def logit_arrays(d: LinearDesign, scaling: Scaling | None) -> tuple[FloatArray, ...]:
    """Outcome, ``(1, public)`` and private columns of a logit design, standardised."""
    pub, priv = d.public[:, 2:], d.private
    if scaling is not None:
        pub_c, pub_s, priv_c, priv_s = scaling
        pub, priv = (pub - pub_c) / pub_s, (priv - priv_c) / priv_s
    return d.public[:, 0], np.column_stack([np.ones(d.n_obs), pub]), priv


@dataclass(frozen=True)
class _IndexRange:
    """Smallest and largest public index ``t = W g_w`` of a partition, and its values."""

    gw: FloatArray
    scaling: Scaling | None
    grid_size: int

    def __call__(self, d: LinearDesign) -> tuple[float, float, FloatArray | None]:
        if d.n_obs == 0:
            return np.inf, -np.inf, np.empty(0)
        t = logit_arrays(d, self.scaling)[1] @ self.gw
        uniq = np.unique(t)
        return float(uniq[0]), float(uniq[-1]), uniq if uniq.size <= self.grid_size else None


def _merge_range(a: Any, b: Any) -> Any:
    uniq = None
    if a[2] is not None and b[2] is not None:
        uniq = np.union1d(a[2], b[2])
    return min(a[0], b[0]), max(a[1], b[1]), uniq


def index_span(
    design: DaskLinearDesign, gw: FloatArray, scaling: Scaling | None, grid_size: int = 129
) -> Span:
    """The span of the public index over all rows (see ``index_expectation``)."""
    from privinfer.inversion import IndexSpan

    lo, hi, uniq = design.sums(_IndexRange(gw, scaling, grid_size), add=_merge_range)
    return IndexSpan(lo, hi, uniq is not None and uniq.size <= grid_size)


@dataclass(frozen=True)
class _LogitPass:
    """Sums of a partition's private logistic moment (and Jacobian) at ``g``."""

    g: FloatArray
    scaling: Scaling | None
    ref_U: FloatArray
    ref_w: FloatArray
    alpha: float
    span: Span | None
    with_jac: bool

    def __call__(self, d: LinearDesign) -> tuple[Any, ...]:
        from privinfer.nuisance.logit import _logit_moments

        k = self.g.size
        n = d.n_obs
        if n == 0:
            return np.zeros(k), np.zeros((k, k)), _Max(0.0)
        y, W, priv = logit_arrays(d, self.scaling)
        m, jac, _, err = _logit_moments(
            self.g, y, W, priv, self.ref_U, self.ref_w, self.alpha,
            with_jac=self.with_jac, with_rows=False, grid_size=129, span=self.span,
            weights=d.w,
        )  # fmt: skip
        return m * n, (jac * n if jac is not None else np.zeros((k, k))), _Max(err)

    def rows(self, d: LinearDesign, rows: slice) -> FloatArray:
        """Private score rows of ``rows`` (for their outer products)."""
        from privinfer.nuisance.logit import _logit_moments

        y, W, priv = logit_arrays(d, self.scaling)
        _, _, r, _ = _logit_moments(
            self.g, y[rows], W[rows], priv[rows], self.ref_U, self.ref_w, self.alpha,
            with_jac=False, with_rows=True, grid_size=129, span=self.span,
            weights=None if d.w is None else d.w[rows],
        )  # fmt: skip
        assert r is not None
        return r


@dataclass(frozen=True)
class _CentredRows:
    pass_: _LogitPass
    mu: FloatArray | None

    def __call__(self, d: LinearDesign, rows: slice) -> FloatArray:
        r = self.pass_.rows(d, rows)
        return r if self.mu is None else r - self.mu


def _centred_sq(cols: int, scaling_mean: FloatArray) -> Callable[[LinearDesign], FloatArray]:
    def func(d: LinearDesign) -> FloatArray:
        X = np.column_stack([d.public[:, 2:], d.private])
        return ((X - scaling_mean) ** 2).sum(axis=0) if d.n_obs else np.zeros(cols)

    return func


def _column_sums(d: LinearDesign) -> tuple[FloatArray, FloatArray]:
    """Unweighted sums of the outcome and of the regressor columns (one partition)."""
    X = np.column_stack([d.public[:, 2:], d.private])
    return np.array([d.public[:, 0].sum()]), X.sum(axis=0)


def dask_logit_scaling(design: DaskLinearDesign) -> tuple[float, Scaling]:
    """Mean outcome and the column standardisation of ``fit_private_logit`` (two passes)."""
    from privinfer.nuisance.logit import standardisation_rule

    n, q = design.n_obs, design.n_public
    y_sum, x_sum = design.sums(_column_sums)
    mean = x_sum / n
    std = np.sqrt(design.sums(_centred_sq(mean.size, mean)) / n)
    kp = q - 2
    pub_c, pub_s = standardisation_rule(mean[:kp], std[:kp])
    priv_c, priv_s = standardisation_rule(mean[kp:], std[kp:])
    return float(y_sum[0] / n), (pub_c, pub_s, priv_c, priv_s)


def dask_logit_solve(
    design: DaskLinearDesign,
    ref_U: FloatArray,
    ref_w: FloatArray,
    alpha: float,
    *,
    tol: float,
    label: str,
) -> Any:
    """``fit_private_logit`` on a Dask frame: each Newton evaluation is one or two passes."""
    from privinfer.nuisance.logit import newton_logit

    d_mean, scaling = dask_logit_scaling(design)
    pub_c, _, priv_c, priv_s = scaling
    ref_std = (ref_U - priv_c) / priv_s
    kw = 1 + pub_c.size

    def moment(g: FloatArray, with_jac: bool) -> tuple[FloatArray, FloatArray | None, float]:
        span = index_span(design, g[:kw], scaling) if alpha < 1.0 else None
        m, jac, err = design.sums(
            _LogitPass(g, scaling, ref_std, ref_w, alpha, span, with_jac), add=_add_max
        )
        n = design.n_obs
        return m / n, (jac / n if with_jac else None), float(err)

    return newton_logit(moment, d_mean, scaling, tol=tol, label=label)


def dask_logit_scores(
    design: DaskLinearDesign,
    coef: FloatArray,
    ref_U: FloatArray,
    ref_w: FloatArray,
    alpha: float,
    codes: ClusterKeys | None,
    *,
    center: bool,
    small_g: bool,
    nonrobust: bool,
) -> tuple[FloatArray, FloatArray, FloatArray | None, float, Span | None]:
    """Mean private score, its Jacobian, the covariance of the score rows and the span."""
    kw = 1 + design.n_public - 2
    span = index_span(design, coef[:kw], None) if alpha < 1.0 else None
    pass_ = _LogitPass(coef, None, ref_U, ref_w, alpha, span, True)
    m, jac, err = design.sums(pass_, add=_add_max)
    n = design.n_obs
    m, jac = m / n, jac / n
    Phi = None
    if not nonrobust:
        Phi = design.outer(_CentredRows(pass_, m if center else None), coef.size, codes, small_g)
    return m, jac, Phi, float(err), span
