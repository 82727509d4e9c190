r"""Public reference distributions :math:`\bar Q` of the alpha-identity mechanism.

A reference distribution is public knowledge: when a record's private covariates are
not kept, the data holder releases a fresh draw from :math:`\bar Q` instead (Kormos and
van der Vaart, 2026, sec. 4.1). The analyst needs :math:`\bar Q` to invert the mechanism
(:mod:`privinfer.inversion`), so every reference here can

* draw i.i.d. samples (holder side, :meth:`ProductReference.sample`);
* draw a scrambled Sobol (quasi-Monte Carlo) sample of size ``M`` split into
  independent replicates, whose spread measures the numerical error of reference
  expectations (:meth:`ProductReference.qmc_sample`);
* enumerate its support exactly when it is finite (categorical and empirical
  components, :meth:`ProductReference.enumerate`);
* check that values lie in its support and report exact moments where they exist;
* serialise itself to a JSON-compatible dict and back.

The marginals are :class:`Uniform`, :class:`Categorical`, :class:`Frozen` (any frozen
``scipy.stats`` distribution) and :class:`Empirical` (a public sample, possibly over
several columns jointly). :class:`ProductReference` is the product over named columns.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from scipy.stats import qmc

from privinfer._typing import FloatArray, RandomStateLike
from privinfer._validation import (
    check_int,
    check_no_nan,
    check_random_state,
    spawn_generators,
)
from privinfer.exceptions import (
    DataMismatchError,
    MechanismMismatchError,
    OutOfSupportError,
    PrivateDtypeError,
    UnknownCategoryError,
)

__all__ = [
    "Categorical",
    "Component",
    "Empirical",
    "Frozen",
    "ProductReference",
    "ReferenceDraw",
    "Uniform",
    "as_reference",
]

#: Largest support that :meth:`ProductReference.enumerate` expands exactly.
MAX_ENUMERATION = 200_000


class Component(ABC):
    """One factor of a product reference: a distribution over one or more columns.

    The abstract base of :class:`Uniform`, :class:`Categorical`, :class:`Frozen` and
    :class:`Empirical`. A component maps uniforms on [0, 1) to its values
    (:meth:`from_unit`), checks support and serialises itself; :class:`ProductReference`
    combines components over named columns.

    Examples
    --------
    >>> comp = Uniform(0, 2)
    >>> isinstance(comp, Component), comp.is_discrete, comp.n_support()
    (True, False, inf)
    >>> comp.from_unit(np.array([0.0, 0.25, 0.5])).tolist()  # quantile transform
    [0.0, 0.5, 1.0]
    >>> Categorical(["a", "b"]).support_points()[1].tolist()
    [0.5, 0.5]
    """

    #: Names of the columns this component covers (set when attached to a product).
    n_columns: int = 1

    @property
    @abstractmethod
    def is_discrete(self) -> bool:
        """Whether the distribution has finite support (every point an atom)."""

    @abstractmethod
    def from_unit(self, u: FloatArray) -> pd.DataFrame | np.ndarray:
        """Push uniforms ``u`` in [0, 1) through the quantile transform."""

    @abstractmethod
    def out_of_support(self, values: pd.DataFrame) -> np.ndarray:
        """Boolean mask of rows whose values lie outside the support."""

    @abstractmethod
    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible description (see :func:`component_from_dict`)."""

    def support_points(self) -> tuple[pd.DataFrame | np.ndarray, FloatArray]:
        """Support points and their probabilities (finite supports only)."""
        raise DataMismatchError(f"{type(self).__name__} has no finite support to enumerate.")

    def n_support(self) -> float:
        """Number of support points (``inf`` for continuous components)."""
        return math.inf

    @property
    def is_atomless(self) -> bool:
        """Whether no single point has positive probability (uniform, continuous scipy)."""
        return False

    def numeric_column(self, j: int) -> bool:
        """Whether column ``j`` of the component holds real numbers (a dtype requirement)."""
        return True

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.to_dict() == other.to_dict()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return description_hash(self.to_dict())


class Uniform(Component):
    """Uniform distribution on the public interval ``[low, high]``.

    Parameters
    ----------
    low, high : float
        Public bounds, ``low < high``.

    Examples
    --------
    >>> Uniform(0, 2).mean
    1.0
    """

    def __init__(self, low: float, high: float) -> None:
        low, high = float(low), float(high)
        if not (np.isfinite(low) and np.isfinite(high) and low < high):
            raise ValueError(
                f"Uniform(low, high) needs finite bounds with low < high; got low={low!r}, "
                f"high={high!r}."
            )
        if not np.isfinite(high - low):
            raise ValueError(
                f"Uniform(low, high) needs a finite width high - low; got low={low!r}, "
                f"high={high!r} (width overflows). Rescale the variable first."
            )
        self.low, self.high = low, high

    @property
    def is_discrete(self) -> bool:
        """A uniform distribution on an interval is atomless."""
        return False

    @property
    def is_atomless(self) -> bool:
        """A uniform distribution on an interval has no atoms."""
        return True

    @property
    def mean(self) -> float:
        """Exact mean ``(low + high) / 2``."""
        return 0.5 * (self.low + self.high)

    @property
    def var(self) -> float:
        """Exact variance ``(high - low)^2 / 12``."""
        return (self.high - self.low) ** 2 / 12.0

    def moment(self, k: int) -> float:
        r"""Exact raw moment :math:`E X^k = (h^{k+1} - l^{k+1}) / ((k+1)(h - l))`."""
        return (self.high ** (k + 1) - self.low ** (k + 1)) / ((k + 1) * (self.high - self.low))

    def from_unit(self, u: FloatArray) -> np.ndarray:
        """Quantile transform ``low + u (high - low)``."""
        return self.low + u * (self.high - self.low)

    def out_of_support(self, values: pd.DataFrame) -> np.ndarray:
        """Rows outside ``[low, high]``."""
        x = pd.to_numeric(values.iloc[:, 0], errors="coerce").to_numpy(dtype=float)
        return ~((x >= self.low) & (x <= self.high))

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible description."""
        return {"kind": "uniform", "low": self.low, "high": self.high}

    def __repr__(self) -> str:
        return f"Uniform({self.low:g}, {self.high:g})"


def _normalise_probs(p: FloatArray) -> FloatArray:
    r"""Rescale ``p`` to sum to one unless it already does up to rounding.

    The tolerance :math:`4 k \epsilon_{\text{mach}}` bounds the rounding error of a sum of
    :math:`k` probabilities, so the map is idempotent: its output is returned unchanged
    when passed in again, which keeps serialisation round trips exact.
    """
    if abs(p.sum() - 1.0) <= 4 * p.size * np.finfo(float).eps:
        return p
    return p / p.sum()


def check_private_columns(private: Sequence[str], columns: Any, owner: str) -> None:
    """Raise :class:`MechanismMismatchError` if a private column is not in ``columns``.

    A data column named by a number (``0``) is not the mechanism's column ``"0"``; the
    message then says so.
    """
    missing = [c for c in private if c not in columns]
    if not missing:
        return
    numbered = {str(c) for c in columns if not isinstance(c, str)}
    hint = (
        " The data's column names include non-strings that read like the missing ones: "
        "rename them, e.g. data.rename(columns=str)."
        if numbered & {str(c) for c in missing}
        else ""
    )
    raise MechanismMismatchError(
        f"{owner}: private column(s) {missing!r} of the mechanism are missing from the "
        f"data (columns present: {list(columns)!r}).{hint}"
    )


def description_hash(description: Any) -> int:
    """A hash of a ``to_dict`` description that agrees with its ``==``.

    Descriptions compare with Python's ``==``, under which ``1 == 1.0 == True``; hashing
    their ``repr`` (``'1'`` against ``'1.0'``) gave equal objects different hashes. Dicts
    become frozensets of items and lists tuples, whose hashes follow ``==``.

    Examples
    --------
    >>> description_hash({"levels": [1, 2]}) == description_hash({"levels": [1.0, 2.0]})
    True
    """
    return hash(_frozen(description))


def _frozen(value: Any) -> Any:
    """Dicts and lists of a description as frozensets and tuples (hashable, same ``==``)."""
    if isinstance(value, Mapping):
        return frozenset((k, _frozen(v)) for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return tuple(_frozen(v) for v in value)
    return value


def _plain(value: Any) -> Any:
    """``value`` as a plain Python scalar (``np.int64(1)`` -> ``1``) for messages."""
    return value.item() if isinstance(value, np.generic) else value


#: Entries a repr or message lists in full; a longer list shows its ends and a count.
_LIST_IN_FULL = 10


def _preview(texts: Sequence[str], noun: str, brackets: str = "[]") -> str:
    """Join ``texts`` in ``brackets``; past :data:`_LIST_IN_FULL`, the ends and a count.

    A reference with thousands of levels or columns would otherwise put all of them in
    its repr and in every message that quotes it.

    Examples
    --------
    >>> _preview(["1", "2"], "levels")
    '[1, 2]'
    >>> _preview([str(i) for i in range(100)], "levels")
    '[0, 1, 2, 3, 4, ..., 98, 99] (100 levels)'
    """
    if len(texts) <= _LIST_IN_FULL:
        return f"{brackets[0]}{', '.join(texts)}{brackets[1]}"
    shown = [*texts[:5], "...", *texts[-2:]]
    return f"{brackets[0]}{', '.join(shown)}{brackets[1]} ({len(texts)} {noun})"


def levels_text(levels: Sequence[Any]) -> str:
    """The levels as a (possibly shortened) list, numpy scalars shown plainly."""
    return _preview([repr(_plain(lv)) for lv in levels], "levels")


def _check_json_scalars(values: Any, what: str) -> None:
    """Raise :class:`PrivateDtypeError` unless every value is a string, number or bool.

    A reference travels with its release as JSON (:meth:`ProductReference.to_dict`); a
    date, a ``Decimal`` or a tuple would come back as a string or a list, so the release
    could not be read back against its own reference.
    """
    kind = pd.api.types.infer_dtype(values, skipna=False)
    if kind in {"string", "integer", "floating", "mixed-integer-float", "boolean"}:
        return  # the common cases, without a Python loop over a large sample
    bad = sorted(
        {type(v).__name__ for v in map(_plain, values) if not isinstance(v, (str, int, float))}
    )
    if bad:
        raise PrivateDtypeError(
            f"{what} of type {bad!r}. A reference travels with its release as JSON, which "
            "keeps strings, numbers and booleans only: convert them first (a date to a "
            "number of days, or to an ISO string)."
        )


class Categorical(Component):
    r"""Categorical distribution over public levels.

    Parameters
    ----------
    levels : sequence
        The public levels (the support). Their order fixes the dummy coding.
    probs : sequence of float, optional
        Probabilities of the levels; uniform when omitted.

    Notes
    -----
    Probabilities :math:`p` whose sum is one up to floating-point rounding,
    :math:`|\sum_j p_j - 1| \le 4 k \epsilon_{\text{mach}}` for :math:`k` levels, are
    stored exactly as given; only larger deviations (at most ``1e-9``) are rescaled to
    :math:`p / \sum_j p_j`. Rescaling a vector that already sums to one up to rounding
    would move its entries by an ulp, so ``Categorical(levels)`` (probabilities
    :math:`1/k`) and ``Categorical(levels, [1/k] * k)`` would differ, and a reference
    would not equal its own round trip through :meth:`to_dict` (the release metadata).

    Examples
    --------
    >>> Categorical(["a", "b"], probs=[0.25, 0.75]).probs.tolist()
    [0.25, 0.75]
    """

    def __init__(self, levels: Sequence[Any], probs: Sequence[float] | None = None) -> None:
        levels = list(levels)
        # pd.isna: None, NaN of any float type, pd.NA and NaT (a string column's unique())
        missing = [lv for lv in levels if pd.api.types.is_scalar(lv) and pd.isna(lv)]
        if missing:
            raise ValueError(
                f"Categorical levels must not be missing (None, NaN, NA or NaT); got {levels!r}."
            )
        _check_json_scalars(levels, "Categorical: levels")
        infinite = [lv for lv in levels if isinstance(lv, (float, np.floating)) and np.isinf(lv)]
        if infinite:
            # a replacement drawn at an infinite level is a release no analysis accepts
            raise ValueError(f"Categorical levels must be finite; got {levels!r}.")
        if len(levels) < 1 or len(set(levels)) != len(levels):
            raise ValueError(
                f"Categorical needs at least one level and distinct levels; got {levels!r}."
            )
        if probs is None:
            p = np.full(len(levels), 1.0 / len(levels))
        else:
            p = np.asarray(probs, dtype=float)
            if p.shape != (len(levels),) or np.any(~np.isfinite(p)) or np.any(p < 0):
                raise ValueError(
                    f"Categorical probs must be {len(levels)} non-negative numbers; got {probs!r}."
                )
            if abs(p.sum() - 1.0) > 1e-9:
                raise ValueError(f"Categorical probs must sum to 1; they sum to {p.sum()!r}.")
            p = _normalise_probs(p)
        self.levels = levels
        self.probs = p

    @property
    def is_discrete(self) -> bool:
        """Finite support."""
        return True

    def n_support(self) -> float:
        """Number of levels."""
        return float(len(self.levels))

    def numeric_column(self, j: int) -> bool:
        """Levels may be of any type; membership is checked instead."""
        return False

    def from_unit(self, u: FloatArray) -> np.ndarray:
        """Inverse-CDF coding of uniforms into levels."""
        idx = np.searchsorted(np.cumsum(self.probs)[:-1], u, side="right")
        return np.asarray(self.levels, dtype=object)[idx]

    def out_of_support(self, values: pd.DataFrame) -> np.ndarray:
        """Rows whose value is not one of the levels."""
        col = values.iloc[:, 0]
        return ~col.isin(self.levels).to_numpy()

    def support_points(self) -> tuple[np.ndarray, FloatArray]:
        """The levels and their probabilities."""
        return np.asarray(self.levels, dtype=object), self.probs.copy()

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible description (levels converted to Python scalars)."""
        levels = [_plain(lv) for lv in self.levels]
        return {"kind": "categorical", "levels": levels, "probs": self.probs.tolist()}

    def __repr__(self) -> str:
        return f"Categorical({levels_text(self.levels)})"


class Frozen(Component):
    """Any frozen ``scipy.stats`` distribution, e.g. ``Frozen(stats.norm(0, 1))``.

    Parameters
    ----------
    dist : scipy.stats frozen distribution
        Its ``ppf`` is used for quasi-Monte Carlo sampling and its ``support()`` for
        support checks. Discrete scipy distributions are treated as discrete.

    Examples
    --------
    >>> from scipy import stats
    >>> Frozen(stats.norm(1, 2)).mean
    1.0
    """

    def __init__(self, dist: Any) -> None:
        if not hasattr(dist, "ppf") or not hasattr(dist, "dist"):
            raise TypeError(
                f"Frozen expects a frozen scipy.stats distribution; got {type(dist).__name__}."
            )
        self.dist = dist
        self._check_parameters()

    def _check_parameters(self) -> None:
        """Refuse parameters for which scipy has no distribution, or draws are infinite.

        scipy accepts invalid parameters (``norm(0, -1)``, ``binom(3, 1.5)``) and returns
        NaN for every quantile; the draws ``from_unit`` takes lie between the quantiles
        at machine epsilon and one minus it, so those must be finite numbers.
        """
        with np.errstate(all="ignore"):
            support = np.asarray(self.dist.support(), dtype=float)
        if support.shape != (2,):
            raise ValueError(
                f"Frozen needs one univariate distribution with scalar parameters; got "
                f"{self!r}."
            )
        tiny = np.finfo(float).eps
        with np.errstate(all="ignore"):
            quantiles = np.asarray(self.dist.ppf([tiny, 0.5, 1 - tiny]), dtype=float)
        if np.any(np.isnan(support)) or not np.all(np.isfinite(quantiles)):
            raise ValueError(
                f"Frozen: {self!r} has invalid parameters or draws infinite values (scipy "
                f"gives the support {tuple(support.tolist())} and the quantiles "
                f"{quantiles.tolist()} at eps, 1/2, 1 - eps); a reference must draw finite "
                "numbers."
            )

    @property
    def is_discrete(self) -> bool:
        """Whether the scipy distribution is discrete."""
        return isinstance(self.dist.dist, stats.rv_discrete)

    @property
    def is_atomless(self) -> bool:
        """Continuous scipy distributions have no atoms; discrete ones are all atoms."""
        return not self.is_discrete

    @property
    def mean(self) -> float:
        """Exact mean from scipy."""
        return float(self.dist.mean())

    def moment(self, k: int) -> float:
        """Exact raw moment from scipy."""
        return float(self.dist.moment(k))

    def n_support(self) -> float:
        """Support size for discrete distributions with finite support, else ``inf``."""
        if not self.is_discrete:
            return math.inf
        lo, hi = self.dist.support()
        return float(hi - lo + 1) if np.isfinite(lo) and np.isfinite(hi) else math.inf

    def support_points(self) -> tuple[np.ndarray, FloatArray]:
        """Integer support points and their pmf (finite discrete supports only)."""
        if not np.isfinite(self.n_support()):
            raise DataMismatchError("This Frozen distribution has no finite support.")
        lo, hi = self.dist.support()
        pts = np.arange(lo, hi + 1)
        pmf = self.dist.pmf(pts)
        return pts.astype(float), pmf / pmf.sum()

    def from_unit(self, u: FloatArray) -> np.ndarray:
        """Quantile transform ``dist.ppf(u)`` (``u`` kept inside (0, 1))."""
        tiny = np.finfo(float).eps
        return np.asarray(self.dist.ppf(np.clip(u, tiny, 1 - tiny)), dtype=float)

    def out_of_support(self, values: pd.DataFrame) -> np.ndarray:
        """Rows outside ``dist.support()`` (and non-integers for discrete laws)."""
        x = pd.to_numeric(values.iloc[:, 0], errors="coerce").to_numpy(dtype=float)
        lo, hi = self.dist.support()
        bad = ~((x >= lo) & (x <= hi))
        if self.is_discrete:
            bad |= x != np.round(x)
        return bad

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible description: scipy name, positional and keyword arguments."""
        return {
            "kind": "frozen",
            "name": self.dist.dist.name,
            "args": [float(a) for a in self.dist.args],
            "kwds": {k: float(v) for k, v in self.dist.kwds.items()},
        }

    def __repr__(self) -> str:
        args = [repr(_plain(a)) for a in self.dist.args]
        args += [f"{k}={_plain(v)!r}" for k, v in self.dist.kwds.items()]
        return f"Frozen({self.dist.dist.name}({', '.join(args)}))"


class Empirical(Component):
    r"""The empirical distribution of a public sample (one or several columns jointly).

    Parameters
    ----------
    public_sample : Series, DataFrame or 1-D array
        A public sample (e.g. an earlier public-use file), without missing or infinite
        values. A DataFrame makes a joint reference over its columns.

    Notes
    -----
    The support of an empirical reference is its set of sample points (rows, for a
    sample over several columns). Every private value must be one of them *exactly*,
    jointly over the columns: a value inside the sample's range but not a sample point,
    or a combination never seen jointly, is an :class:`OutOfSupportError`. Kept rows are
    released as the matching sample point (its type and representation), so a kept row
    cannot be told apart from a replacement by its form. This is what makes the pure
    :math:`\varepsilon` of :meth:`AlphaIdentity.guarantees` hold.

    Examples
    --------
    >>> import pandas as pd
    >>> Empirical(pd.Series([1.0, 2.0, 2.0], name="x")).n_support()
    3.0
    >>> Empirical(pd.Series([1.0, 2.0], name="x")).out_of_support(
    ...     pd.DataFrame({"x": [1.0, 1.5]})).tolist()
    [False, True]
    """

    def __init__(self, public_sample: Any) -> None:
        if isinstance(public_sample, pd.Series):
            frame = public_sample.to_frame()
        elif isinstance(public_sample, pd.DataFrame):
            frame = public_sample
        else:
            frame = pd.DataFrame({"value": np.asarray(public_sample)})
        if len(frame) == 0 or frame.isna().any().any():
            raise ValueError("Empirical needs a non-empty public sample without missing values.")
        for col in frame.columns:
            if pd.api.types.is_complex_dtype(frame[col]):
                raise PrivateDtypeError(
                    f"Empirical: sample column {col!r} is complex; a reference sample needs "
                    "real numbers or labels."
                )
            if _is_real_numeric(frame[col]):
                if not pd.api.types.is_bool_dtype(frame[col]):
                    # replacements drawn at +-inf would make a release no analysis accepts
                    check_no_nan(frame[col].to_numpy(dtype=float), col, "Empirical")
                continue
            labels = frame[col]
            if isinstance(labels.dtype, pd.CategoricalDtype):
                labels = labels.cat.categories
            _check_json_scalars(labels, f"Empirical: sample column {col!r} holds values")
        self.sample_frame = frame.reset_index(drop=True).copy()
        self.n_columns = frame.shape[1]

    @property
    def is_discrete(self) -> bool:
        """An empirical distribution has finite support."""
        return True

    def numeric_column(self, j: int) -> bool:
        """Whether sample column ``j`` is real numeric (bool columns are labels)."""
        col = self.sample_frame.iloc[:, j]
        return bool(
            pd.api.types.is_numeric_dtype(col) and not pd.api.types.is_bool_dtype(col)
        )

    def n_support(self) -> float:
        """Number of sample points (with multiplicity)."""
        return float(len(self.sample_frame))

    def support_points(self) -> tuple[pd.DataFrame, FloatArray]:
        """The sample rows, each with probability ``1 / n``."""
        n = len(self.sample_frame)
        return self.sample_frame, np.full(n, 1.0 / n)

    def from_unit(self, u: FloatArray) -> pd.DataFrame:
        """Row ``floor(u n)`` of the public sample."""
        n = len(self.sample_frame)
        idx = np.minimum((u * n).astype(np.int64), n - 1)
        return self.sample_frame.iloc[idx].reset_index(drop=True)

    def support_index(self, values: pd.DataFrame) -> np.ndarray:
        """Row of the public sample equal to each row of ``values`` (``-1``: none).

        Equality is exact and joint over the columns (Python equality: ``1 == 1.0``).

        Examples
        --------
        >>> ref = Empirical(pd.DataFrame({"a": [1, 2], "b": ["p", "q"]}))
        >>> ref.support_index(pd.DataFrame({"a": [2, 1], "b": ["q", "q"]})).tolist()
        [1, -1]
        """
        unique = self.sample_frame.drop_duplicates()
        probe = {
            j: (values.iloc[:, j].astype(object)
                if isinstance(values.iloc[:, j].dtype, pd.CategoricalDtype)
                else values.iloc[:, j])
            for j in range(self.n_columns)
        }
        if self.n_columns == 1:
            lookup: pd.Index = pd.Index(unique.iloc[:, 0].to_numpy())
            target: pd.Index = pd.Index(probe[0].to_numpy())
        else:
            lookup = pd.MultiIndex.from_arrays([unique.iloc[:, j].to_numpy()
                                                for j in range(self.n_columns)])
            target = pd.MultiIndex.from_arrays([probe[j].to_numpy()
                                                for j in range(self.n_columns)])
        pos = lookup.get_indexer(target)
        return np.where(pos >= 0, unique.index.to_numpy()[np.maximum(pos, 0)], -1)

    def out_of_support(self, values: pd.DataFrame) -> np.ndarray:
        """Rows that are not exactly a sample point (jointly over the columns)."""
        return self.support_index(values) < 0

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible description (the whole public sample, column-wise)."""
        data = {
            str(c): [v.item() if isinstance(v, np.generic) else v for v in self.sample_frame[c]]
            for c in self.sample_frame.columns
        }
        return {"kind": "empirical", "data": data}

    def __repr__(self) -> str:
        columns = _preview([repr(_plain(c)) for c in self.sample_frame.columns], "columns")
        return f"Empirical(n={len(self.sample_frame)}, columns={columns})"


def component_from_dict(d: Mapping[str, Any]) -> Component:
    """Rebuild a component from :meth:`Component.to_dict` output."""
    kind = d.get("kind")
    if kind == "uniform":
        return Uniform(d["low"], d["high"])
    if kind == "categorical":
        return Categorical(d["levels"], d["probs"])
    if kind == "frozen":
        dist = getattr(stats, d["name"])(*d["args"], **d["kwds"])
        return Frozen(dist)
    if kind == "empirical":
        return Empirical(pd.DataFrame(d["data"]))
    raise ValueError(f"Unknown reference component kind {kind!r}.")


class ReferenceDraw:
    """A sample of the reference with weights and replicate labels.

    Attributes
    ----------
    frame : DataFrame of shape (M, n_private)
        The points, in the private columns' dtypes (categoricals carry public levels).
    weights : ndarray of shape (M,)
        Probability weights summing to 1 (``1/M`` for QMC, the pmf when exact).
    replicate : ndarray of shape (M,) or None
        Replicate label of each point (independent Sobol scrambles); ``None`` when the
        sample is an exact enumeration of a finite support.

    Examples
    --------
    A finite reference is enumerated exactly, with its pmf as weights:

    >>> ref = ProductReference({"g": Categorical(["a", "b"], probs=[0.25, 0.75])})
    >>> draw = ref.enumerate()
    >>> draw.exact, draw.n_replicates, draw.weights.tolist()
    (True, 1, [0.25, 0.75])

    A continuous one is integrated by scrambled Sobol replicates of equal weight:

    >>> draw = ProductReference({"x": Uniform(0, 1)}).qmc_sample(64, n_replicates=4,
    ...                                                          random_state=0)
    >>> draw.exact, draw.n_replicates, draw.frame.shape, float(draw.weights.sum())
    (False, 4, (64, 1), 1.0)
    """

    def __init__(
        self, frame: pd.DataFrame, weights: FloatArray, replicate: np.ndarray | None
    ) -> None:
        self.frame = frame
        self.weights = weights
        self.replicate = replicate

    @property
    def exact(self) -> bool:
        """Whether the draw is an exact enumeration (no numerical error)."""
        return self.replicate is None

    @property
    def n_replicates(self) -> int:
        """Number of independent scrambles (1 for exact enumeration)."""
        return 1 if self.replicate is None else int(self.replicate.max()) + 1


class ProductReference:
    r"""Product of independent reference components over named private columns.

    Parameters
    ----------
    components : mapping
        ``{"age": Uniform(18, 90), "educ": Categorical([...])}``. A key may be a tuple
        of column names for an :class:`Empirical` component over several columns.
        A frozen scipy distribution may be given directly; it is wrapped in
        :class:`Frozen`.

    Examples
    --------
    >>> ref = ProductReference({"x": Uniform(0, 1), "g": Categorical(["a", "b"])})
    >>> ref.columns
    ('x', 'g')
    >>> ref.sample(3, random_state=0).shape
    (3, 2)
    """

    def __init__(self, components: Mapping[Any, Any]) -> None:
        if not isinstance(components, Mapping) or len(components) == 0:
            raise MechanismMismatchError(
                "A reference distribution needs a non-empty mapping from private column "
                "names to reference components, e.g. {'age': pi.reference.Uniform(18, 90)}."
            )
        parts: list[tuple[tuple[str, ...], Component]] = []
        for key, comp in components.items():
            cols = tuple(str(k) for k in key) if isinstance(key, tuple) else (str(key),)
            if not isinstance(comp, Component):
                if hasattr(comp, "ppf") and hasattr(comp, "dist"):
                    comp = Frozen(comp)
                else:
                    raise TypeError(
                        f"Reference for {cols!r} must be a Uniform, Categorical, Frozen, "
                        f"Empirical or frozen scipy distribution; got {type(comp).__name__}."
                    )
            if comp.n_columns != len(cols):
                raise MechanismMismatchError(
                    f"Reference component {comp!r} covers {comp.n_columns} column(s) but is "
                    f"keyed by {cols!r}."
                )
            parts.append((cols, comp))
        names = [c for cols, _ in parts for c in cols]
        if len(set(names)) != len(names):
            raise MechanismMismatchError(f"Private columns are declared twice: {names!r}.")
        self.parts = parts

    # -- description -------------------------------------------------------------------
    @property
    def columns(self) -> tuple[str, ...]:
        """Names of the private columns, in declaration order."""
        return tuple(c for cols, _ in self.parts for c in cols)

    @property
    def is_discrete(self) -> bool:
        """Whether every component has finite support (the product is then finite)."""
        return all(comp.is_discrete and np.isfinite(comp.n_support()) for _, comp in self.parts)

    @property
    def is_atomless(self) -> bool:
        """Whether the product has no atoms (at least one atomless component)."""
        return any(comp.is_atomless for _, comp in self.parts)

    @property
    def n_support(self) -> float:
        """Size of the product support (``inf`` if any component is continuous)."""
        return float(np.prod([comp.n_support() for _, comp in self.parts]))

    def component(self, column: str) -> Component:
        """The component covering ``column``."""
        for cols, comp in self.parts:
            if column in cols:
                return comp
        raise MechanismMismatchError(f"No reference component covers column {column!r}.")

    def categorical_levels(self) -> dict[str, list[Any]]:
        """Public levels of every categorical private column."""
        return {
            cols[0]: list(comp.levels) for cols, comp in self.parts if isinstance(comp, Categorical)
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-compatible description: a list of ``{"columns": [...], ...}`` entries."""
        return {
            "components": [{"columns": list(cols), **comp.to_dict()} for cols, comp in self.parts]
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> ProductReference:
        """Inverse of :meth:`to_dict`."""
        comps: dict[Any, Component] = {}
        for entry in d["components"]:
            cols = entry["columns"]
            key = cols[0] if len(cols) == 1 else tuple(cols)
            body = {k: v for k, v in entry.items() if k != "columns"}
            comps[key] = component_from_dict(body)
        return cls(comps)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ProductReference) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return description_hash(self.to_dict())

    def __repr__(self) -> str:
        items = [f"{c[0] if len(c) == 1 else c!r}: {comp!r}" for c, comp in self.parts]
        return f"ProductReference({_preview(items, 'components', '{}')})"

    # -- sampling ----------------------------------------------------------------------
    def _assemble(self, pieces: list[tuple[tuple[str, ...], Any]], n: int) -> pd.DataFrame:
        out: dict[str, Any] = {}
        for cols, values in pieces:
            if isinstance(values, pd.DataFrame):
                for j, c in enumerate(cols):
                    out[c] = values.iloc[:, j].to_numpy()
            else:
                out[cols[0]] = values
        frame = pd.DataFrame(out, index=pd.RangeIndex(n))
        for col, levels in self.categorical_levels().items():
            frame[col] = pd.Categorical(frame[col], categories=levels)
        return frame

    def _from_units(self, u: FloatArray) -> pd.DataFrame:
        pieces = [(cols, comp.from_unit(u[:, j])) for j, (cols, comp) in enumerate(self.parts)]
        return self._assemble(pieces, u.shape[0])

    def from_unit_draws(self, u: FloatArray) -> pd.DataFrame:
        """Points from uniforms ``u`` of shape (n, n_components) (e.g. a secure source).

        Examples
        --------
        >>> ref = ProductReference({"x": Uniform(0, 2)})
        >>> ref.from_unit_draws(np.array([[0.25]]))["x"].tolist()
        [0.5]
        """
        u = np.asarray(u, dtype=float)
        if u.ndim != 2 or u.shape[1] != len(self.parts):
            raise DataMismatchError(
                f"from_unit_draws needs an array of shape (n, {len(self.parts)}); got {u.shape}."
            )
        return self._from_units(u)

    def sample(self, n: int, random_state: RandomStateLike = None) -> pd.DataFrame:
        """Draw ``n`` i.i.d. points (``random_state=None``: fresh OS entropy)."""
        n = check_int(n, "n", "ProductReference.sample", 0)
        rng = check_random_state(random_state)
        return self._from_units(rng.random((n, len(self.parts))))

    def qmc_sample(
        self, m: int = 8192, *, n_replicates: int = 8, random_state: RandomStateLike = None
    ) -> ReferenceDraw:
        """Scrambled Sobol sample of about ``m`` points in ``n_replicates`` replicates.

        Each replicate is an independently scrambled Sobol sequence of
        ``2**ceil(log2(m / n_replicates))`` points, so the replicate means are i.i.d.
        unbiased estimates of any reference expectation; their spread is the numerical
        error reported by the inversion engine.
        """
        check_int(m, "m", "ProductReference.qmc_sample", 2)
        n_replicates = check_int(n_replicates, "n_replicates", "ProductReference.qmc_sample", 2)
        per = 1 << max(1, math.ceil(math.log2(max(m / n_replicates, 2))))
        dim = len(self.parts)
        units = [
            qmc.Sobol(d=dim, scramble=True, seed=g).random(per)
            for g in spawn_generators(random_state, n_replicates)
        ]
        u = np.vstack(units)
        frame = self._from_units(u)
        weights = np.full(u.shape[0], 1.0 / u.shape[0])
        replicate = np.repeat(np.arange(n_replicates), per)
        return ReferenceDraw(frame, weights, replicate)

    def enumerate(self) -> ReferenceDraw:
        """Exact enumeration of a finite product support with its probabilities."""
        if not self.is_discrete or self.n_support > MAX_ENUMERATION:
            raise DataMismatchError(
                f"Exact enumeration needs a finite reference support of at most "
                f"{MAX_ENUMERATION} points; this one has {self.n_support:g}."
            )
        supports = [comp.support_points() for _, comp in self.parts]
        sizes = [len(p) for _, p in supports]
        grids = np.meshgrid(*[np.arange(s) for s in sizes], indexing="ij")
        idx = [g.ravel() for g in grids]
        weights = np.ones(idx[0].size)
        pieces = []
        for (cols, _), (pts, probs), ii in zip(self.parts, supports, idx, strict=True):
            weights = weights * probs[ii]
            if isinstance(pts, pd.DataFrame):
                pieces.append((cols, pts.iloc[ii].reset_index(drop=True)))
            else:
                pieces.append((cols, np.asarray(pts, dtype=object)[ii]))
        frame = self._assemble(pieces, idx[0].size)
        for cols, comp in self.parts:
            if not isinstance(comp, Categorical) and not isinstance(comp, Empirical):
                for c in cols:
                    frame[c] = frame[c].astype(float)
        return ReferenceDraw(frame, weights / weights.sum(), None)

    def draw_for_moments(
        self, m: int = 8192, *, n_replicates: int = 8, random_state: RandomStateLike = None
    ) -> ReferenceDraw:
        """Exact enumeration when the support is finite and small, else a QMC sample."""
        if self.is_discrete and self.n_support <= MAX_ENUMERATION:
            return self.enumerate()
        return self.qmc_sample(m, n_replicates=n_replicates, random_state=random_state)

    # -- checks ------------------------------------------------------------------------
    def check_dtypes(self, frame: pd.DataFrame, owner: str) -> None:
        """Raise if a numeric private column has no real numeric dtype.

        Object, string, complex and mixed columns are refused: a kept value would keep its
        type (a string ``"1"``, a complex number) while replacements are real numbers,
        so every row would show whether it was kept.

        Raises
        ------
        PrivateDtypeError
            A column covered by a numeric component (uniform, scipy, numeric empirical)
            has another dtype.

        Examples
        --------
        >>> ref = ProductReference({"x": Uniform(0, 1)})
        >>> ref.check_dtypes(pd.DataFrame({"x": [0.5, 1]}), "demo")
        >>> try:
        ...     ref.check_dtypes(pd.DataFrame({"x": ["0.5", 1]}), "demo")
        ... except PrivateDtypeError as err:
        ...     print(type(err).__name__)
        PrivateDtypeError
        """
        for cols, comp in self.parts:
            for j, col in enumerate(cols):
                if not comp.numeric_column(j) or _is_real_numeric(frame[col]):
                    continue
                kinds = sorted({type(v).__name__ for v in frame[col].head(1000)})
                raise PrivateDtypeError(
                    f"{owner}: private column {col!r} has dtype {frame[col].dtype} (values of "
                    f"type {kinds!r}) but its reference {comp!r} is numeric. A numeric private "
                    "column needs a real numeric dtype (int, unsigned, float or bool): an "
                    "object, string, complex or mixed column would show in every row whether "
                    "the value was kept. Convert it first, e.g. with pd.to_numeric."
                )

    def check_values(self, frame: pd.DataFrame, owner: str) -> None:
        """Raise if a private value lies outside the reference support.

        Raises
        ------
        MechanismMismatchError
            A private column is missing from ``frame``.
        PrivateDtypeError
            A numeric private column has no real numeric dtype.
        UnknownCategoryError
            A categorical value is not among the declared levels.
        OutOfSupportError
            A value lies outside the support (for an :class:`Empirical` component: is
            not exactly one of its sample points).
        """
        check_private_columns(self.columns, frame.columns, owner)
        self.check_dtypes(frame, owner)
        for cols, comp in self.parts:
            bad = comp.out_of_support(frame[list(cols)])
            if np.any(bad):
                rows = np.flatnonzero(bad)
                sample = frame[list(cols)].iloc[rows[:5]].to_dict("list")
                if isinstance(comp, Categorical):
                    values = sorted({_plain(v) for v in sample[cols[0]]}, key=repr)
                    raise UnknownCategoryError(
                        f"{owner}: column {cols[0]!r} has values {values!r} "
                        f"({rows.size} row(s)) outside the public levels "
                        f"{levels_text(comp.levels)} declared "
                        "by the mechanism's reference distribution (levels match by value "
                        "and kind: the number 1 is not the string '1')."
                    )
                raise OutOfSupportError(
                    f"{owner}: {rows.size} row(s) of {list(cols)!r} lie outside the support of the "
                    f"reference {comp!r}, e.g. {sample!r}. Values outside the reference support "
                    "are never released silently: clip or recode them first."
                )


def _is_real_numeric(series: pd.Series) -> bool:
    """A real numeric or bool dtype (numpy or pandas nullable); not object, str, complex."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        return False
    if pd.api.types.is_bool_dtype(series):
        return True
    return bool(
        pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_complex_dtype(series)
    )


def as_reference(reference: Any) -> ProductReference:
    """Coerce a mapping, a :class:`ProductReference` or a multi-column Empirical.

    Parameters
    ----------
    reference : mapping, ProductReference or Empirical
        ``{column: component}``, an existing product (returned as is), or an
        :class:`Empirical` public sample (a joint reference over its columns).

    Returns
    -------
    ProductReference

    Raises
    ------
    MechanismMismatchError
        Anything else.

    Examples
    --------
    >>> as_reference({"x": Uniform(0, 1)})
    ProductReference({'x': Uniform(0, 1)})
    >>> as_reference(Empirical(pd.DataFrame({"a": [1, 2], "b": [3, 4]}))).columns
    ('a', 'b')
    >>> ref = ProductReference({"x": Uniform(0, 1)})
    >>> as_reference(ref) is ref
    True
    """
    if isinstance(reference, ProductReference):
        return reference
    if isinstance(reference, Empirical):
        cols = tuple(str(c) for c in reference.sample_frame.columns)
        return ProductReference({cols if len(cols) > 1 else cols[0]: reference})
    if isinstance(reference, Mapping):
        return ProductReference(reference)
    raise MechanismMismatchError(
        "reference must be a mapping {column: component}, a ProductReference or an Empirical "
        f"public sample; got {type(reference).__name__}."
    )
