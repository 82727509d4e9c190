r"""Descriptive private estimators: means of functions and histograms of private columns.

Both average :math:`Q_X^{-1}h = (h(Z) - (1-\alpha)\bar Q h)/\alpha` over released rows,
which is unbiased for the true-data mean :math:`E h(X)` (Kormos and van der Vaart, 2026,
sec. 4.1); the reference term :math:`\bar Q h` comes from the mechanism's reference sample
(:func:`privinfer.inversion.reference_design`). They are estimators, not plots:
:func:`privinfer.plotting.overlap_plot` draws :func:`private_histogram`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from privinfer._typing import FloatArray, RandomStateLike
from privinfer._validation import check_int
from privinfer.exceptions import DataMismatchError, MissingValueError
from privinfer.inversion import _array, invert, reference_design
from privinfer.mechanisms import AlphaIdentity
from privinfer.mechanisms.reference import Categorical

__all__ = ["private_expectation", "private_histogram"]


def private_expectation(
    func: Callable[[pd.DataFrame], FloatArray],
    data: pd.DataFrame,
    mechanism: object,
    *,
    m: int = 16384,
    random_state: RandomStateLike = 0,
) -> tuple[float, float]:
    r"""Unbiased estimate of :math:`E h(X)` for a function of the private columns only.

    Parameters
    ----------
    func : callable
        Vectorised ``func(frame) -> ndarray of shape (len(frame),)`` of the private
        columns.
    data : DataFrame
        Released data.
    mechanism : AlphaIdentity
        The mechanism that released ``data``.
    m : int, default=16384
        Reference sample size (exact enumeration for finite references).
    random_state : int, Generator or None, default=0
        Seeds the Sobol scrambles (numerical integration, not privacy noise).

    Returns
    -------
    estimate : float
        :math:`\frac1n\sum_i (Q_X^{-1}h)(Z_i)`.
    reference_error : float
        Quasi-Monte Carlo standard error of the reference term (0 when exact).

    Examples
    --------
    >>> import privinfer as pi, pandas as pd, numpy as np
    >>> mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
    >>> raw = pd.DataFrame({"x": np.full(2000, 0.9)})
    >>> released = mech.privatize(raw, random_state=1)
    >>> est, err = private_expectation(lambda f: f["x"].to_numpy(), released, mech)
    >>> abs(est - 0.9) < 0.05
    True
    """
    owner = "private_expectation"
    if not isinstance(mechanism, AlphaIdentity):
        raise TypeError(
            f"{owner}: 'mechanism' must be an AlphaIdentity; got {type(mechanism).__name__}."
        )
    if not callable(func):
        raise TypeError(f"{owner}: 'func' must be callable; got {type(func).__name__}.")
    m = check_int(m, "m", owner, 2)
    mechanism.check_data(data, owner)
    if len(data) == 0:
        raise DataMismatchError(f"{owner}: the data have no rows.")
    cols = list(mechanism.private_columns)
    draw = reference_design(mechanism, None, m, random_state)
    h_ref = _array(func(draw.frame), "func(reference)", owner, 1)
    h_z = _array(func(data[cols]), "func(data)", owner, 1)
    if h_ref.shape[0] != len(draw.frame) or h_z.shape[0] != len(data):
        raise DataMismatchError(f"{owner}: 'func' must return one value per row of its frame.")
    alpha = mechanism.alpha  # type: ignore[attr-defined]
    ref = draw.moments(h_ref[:, None])
    est = float(invert(h_z.mean(), ref.mean[0], alpha))
    err = (1.0 - alpha) / alpha * ref.error(lambda mean, outer: float(mean[0]))
    return est, err


def private_histogram(
    released: pd.DataFrame,
    column: str,
    *,
    mechanism: AlphaIdentity | None = None,
    by: str | None = None,
    bins: int | Sequence[float] = 20,
    reference_size: int = 8192,
    random_state: RandomStateLike = None,
) -> pd.DataFrame:
    r"""Unbiased histogram of a private covariate's *true* distribution, from released data.

    The mass of a bin :math:`B` is :math:`E[1\{X \in B\}]`; averaging
    :math:`Q_X^{-1}1_B = (1\{Z\in B\} - (1-\alpha)\bar Q(B))/\alpha` over the released
    rows (of one arm of a public column ``by``) estimates it without bias. The estimates
    can be negative in sparsely populated bins: that is sampling noise, not an error.
    O(n + M) for M reference points.

    Parameters
    ----------
    released : DataFrame
        Released data (the output of ``mechanism.privatize``).
    column : str
        A private column of the mechanism.
    mechanism : AlphaIdentity, optional
        Defaults to the description carried by ``released.attrs``.
    by : str, optional
        A public column (e.g. the treatment) to condition on.
    bins : int or sequence of float, default=20
        Number of equal bins over the reference support, or bin edges (continuous
        columns); ignored for categorical columns, which use the public levels.
    reference_size : int, default=8192
        Reference points for :math:`\bar Q(B)` when it is not known exactly.
    random_state : int, SeedSequence, Generator or None, default=None
        Seeds the reference sample (numerical integration, not privacy noise).

    Returns
    -------
    DataFrame
        Columns ``group``, ``bin`` (level or left edge), ``right`` (right edge, NaN for
        levels), ``mass`` (the private estimate) and ``released`` (raw released share).

    Raises
    ------
    DataMismatchError
        ``column`` is not private, ``by`` is private or missing, or no rows; ``by`` mixes
        value types that cannot be ordered (ints and strings); ``bins`` are not increasing
        numeric edges (NaN included; infinite outer edges are allowed).
    MechanismMismatchError
        ``released`` was released by another mechanism than ``mechanism``.
    MissingValueError
        ``by`` holds missing values (their rows would fall in no group).
    MissingValueError, OutOfSupportError
        A released private value is missing, infinite or outside the reference support.

    Warns
    -----
    UnverifiedReleaseWarning
        ``released`` carries no release metadata (raw data, a CSV file).

    Examples
    --------
    >>> import numpy as np, pandas as pd, privinfer as pi
    >>> raw = pd.DataFrame({"x": np.random.default_rng(0).beta(2, 5, 4000)})
    >>> mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
    >>> h = private_histogram(mech.privatize(raw, random_state=1), "x", mechanism=mech,
    ...                       bins=4, random_state=0)
    >>> round(float(h["mass"].sum()), 6)
    1.0
    """
    owner = "private_histogram"
    if not isinstance(released, pd.DataFrame):
        raise DataMismatchError(
            f"{owner} expects a pandas DataFrame; got {type(released).__name__}."
        )
    if mechanism is None:
        mechanism = AlphaIdentity.from_released(released)
    if not isinstance(mechanism, AlphaIdentity):
        raise TypeError(
            f"{owner}: 'mechanism' must be an AlphaIdentity; got {type(mechanism).__name__}."
        )
    if column not in mechanism.private_columns:
        raise DataMismatchError(
            f"{owner}: {column!r} is not a private column of the mechanism (private: "
            f"{list(mechanism.private_columns)!r}); plot public columns directly."
        )
    if column not in released.columns:
        raise DataMismatchError(f"{owner}: column {column!r} is not in the released data.")
    if by is not None and (by in mechanism.private_columns or by not in released.columns):
        raise DataMismatchError(
            f"{owner}: by={by!r} must be a public column of the released data."
        )
    reference_size = check_int(reference_size, "reference_size", owner, 64)
    # released by this mechanism, no missing or out-of-support private values
    mechanism.check_data(released, owner)
    if len(released) == 0:
        raise DataMismatchError(f"{owner}: the released data have no rows.")
    comp = next(c for cols, c in mechanism.reference.parts if column in cols)
    draw = reference_design(mechanism, None, reference_size, random_state)
    ref_vals = draw.frame[column]
    z = released[column]
    if isinstance(comp, Categorical):
        levels = list(comp.levels)
        ref_mass = np.array([draw.weights[(ref_vals == lv).to_numpy()].sum() for lv in levels])

        def indicator(vals: pd.Series) -> np.ndarray:
            return np.column_stack([(vals == lv).to_numpy(dtype=float) for lv in levels])

        left: list[Any] = levels
        right = np.full(len(levels), np.nan)
    else:
        rv = ref_vals.to_numpy(dtype=float)
        if np.ndim(bins) == 0:
            k = check_int(bins, "bins", owner, 1)
            zv = z.to_numpy(dtype=float)
            lo = float(min(rv.min(), zv.min()))
            hi = float(max(rv.max(), zv.max()))
            edges = np.linspace(lo, hi, k + 1)
        else:
            edges = _bin_edges(bins, owner)

        def indicator(vals: pd.Series) -> np.ndarray:
            v = vals.to_numpy(dtype=float)
            idx = np.clip(np.searchsorted(edges, v, side="right") - 1, 0, edges.size - 2)
            inside = (v >= edges[0]) & (v <= edges[-1])
            out = np.zeros((v.size, edges.size - 1))
            out[np.flatnonzero(inside), idx[inside]] = 1.0
            return out

        ref_mass = draw.weights @ indicator(ref_vals)
        left = list(edges[:-1])
        right = edges[1:]
    groups = [(None, np.ones(len(released), dtype=bool))]
    if by is not None:
        groups = _groups(released[by], by, owner)
    frames = []
    for g, sel in groups:
        ind = indicator(z[sel])
        share = ind.mean(axis=0)
        frames.append(
            pd.DataFrame(
                {
                    "group": g if g is not None else "all",
                    "bin": left,
                    "right": right,
                    "mass": invert(share, ref_mass, mechanism.alpha),
                    "released": share,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def _bin_edges(bins: Sequence[float], owner: str) -> FloatArray:
    """``bins`` as strictly increasing float edges (at least two, no NaN; outer edges may be
    infinite), or a :class:`DataMismatchError` saying what is wrong.

    Examples
    --------
    >>> _bin_edges([0, 0.5, np.inf], "f")
    array([0. , 0.5, inf])
    """
    try:
        edges = np.asarray(bins, dtype=float)
    except (TypeError, ValueError):
        raise DataMismatchError(
            f"{owner}: bins must be an int or a sequence of numeric bin edges; got {bins!r}."
        ) from None
    if edges.ndim == 1 and np.isnan(edges).any():
        raise DataMismatchError(
            f"{owner}: bins holds NaN edge(s) at position(s) "
            f"{np.flatnonzero(np.isnan(edges)).tolist()}; got {bins!r}. Pass increasing "
            "numeric edges (use -inf/inf for open outer bins)."
        )
    if edges.ndim != 1 or edges.size < 2 or np.any(np.diff(edges) <= 0):
        raise DataMismatchError(f"{owner}: bins must be increasing edges; got {bins!r}.")
    return edges


def _groups(values: pd.Series, by: str, owner: str) -> list[tuple[Any, np.ndarray]]:
    """``(level, row mask)`` of each level of the public column ``by``, levels sorted.

    Every row is in exactly one group: missing values (which equal no level) and levels
    that cannot be sorted together (ints and strings) are refused, not dropped.

    Examples
    --------
    >>> [(g, m.tolist()) for g, m in _groups(pd.Series(["b", "a", "b"]), "t", "f")]
    [('a', [False, True, False]), ('b', [True, False, True])]
    """
    n_missing = int(values.isna().sum())
    if n_missing:
        raise MissingValueError(
            f"{owner}: the 'by' column {by!r} holds {n_missing} missing value(s) (NaN or "
            f"None), whose rows would fall in no group. Give them a level of their own "
            f"(e.g. released[{by!r}].fillna('missing')) or drop those rows first; privinfer "
            "never drops rows silently."
        )
    levels = list(pd.unique(values))
    try:
        levels = sorted(levels)
    except TypeError:
        kinds = sorted({type(v).__name__ for v in levels})
        raise DataMismatchError(
            f"{owner}: the 'by' column {by!r} mixes value types {kinds!r} that cannot be "
            f"ordered into groups. Convert it to one type first, e.g. "
            f"released[{by!r}].astype(str)."
        ) from None
    groups = [(g, (values == g).to_numpy(dtype=bool)) for g in levels]
    covered = int(sum(mask.sum() for _, mask in groups))
    if covered != len(values):
        raise DataMismatchError(
            f"{owner}: the levels of the 'by' column {by!r} cover {covered} of its "
            f"{len(values)} rows (a value equal to none of the levels, such as a NaN-like "
            "object); convert the column to plain levels first."
        )
    return groups
