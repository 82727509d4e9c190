r"""Holder-side leak checks: published columns that reveal private ones.

The alpha-identity mechanism protects the private columns only. A column published next
to them that is a function of a private column (``agesq`` next to a private ``age``) or
nearly one (``exper = age - educ - 6`` with ``age`` and ``educ`` public) reveals the
private value in *every* row, kept or replaced, and voids the guarantee. Before anything
is released, :func:`find_leaks` looks for three kinds of relation between the published
public columns and each private column ``x``:

* **functional dependence**: grouping the rows by one public column, or by a pair, ``x``
  is constant within a group far more often than chance allows. A constant group of
  ``m`` rows has probability :math:`\sum_v p_v^m` under independence (``p_v`` the share
  of value ``v`` in ``x``); a group with :math:`-\log \sum_v p_v^m \ge 20` (odds below
  about :math:`2 \times 10^{-9}`) is flagged. This finds exact functions (every group
  constant) and partial ones (``unem74 == 1`` forces ``re74 == 0``);
* **monotone transforms**: :math:`|\rho_S| \ge 0.99` (Spearman) between one public
  column and ``x`` (``lre74 = log(re74)``, ``sqrt(agesq)``), and public columns that are
  step functions of ``x`` (each public value on one interval of ``x``, such as
  ``nodegree = educ < 12``) where chance alone would make that order unlikely;
* **polynomial reconstruction**: an adjusted :math:`R^2 \ge 0.99` when ``x`` is regressed
  on a cubic in one public column, a quadratic in a pair, or a linear function of all
  numeric public columns (the smallest such set is named, by forward selection);
* **joint functions of several private columns**: a numeric public column that is (up to
  adjusted :math:`R^2 \ge 0.99`) a linear or quadratic function of two or more private
  columns together (``total = wage + benefits``, ``bmi = weight / height**2`` near the
  data), which no single private column reveals; the smallest set of private columns is
  named, by forward selection.

Categorical private columns enter the groupings as they are and the regressions through
their level indicators. Published columns enter the rank and regression checks in every
form that can carry a number (text, Python objects, numeric categories, dates and
durations, complex numbers), each on its rows with a finite value, so a copy of a private
column cannot pass as a string or hide behind one missing value. On more than
:data:`MAX_ROWS` rows the regressions and rank correlations use that many evenly spaced
rows (exact relations show on any subsample); the groupings use every row. Below
:data:`MIN_ROWS` rows only the groupings run.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd
from scipy.special import gammaln

__all__ = ["Leak", "find_leaks", "format_leaks", "order_leak"]

#: Threshold on R^2 (adjusted) and on |Spearman rho|.
R2_THRESHOLD = 0.99
#: A constant group is flagged when its chance probability is below exp(-SURPRISE_NATS).
SURPRISE_NATS = 20.0
#: Rows used by the regression and rank checks (a fixed subsample beyond it).
MAX_ROWS = 50_000
#: Pairs of public columns are searched only among this many columns.
MAX_PAIR_COLUMNS = 40
#: Rank and regression checks need this many rows (below it, chance alone can give
#: rho or R^2 near one; the grouping checks carry their own chance bound).
MIN_ROWS = 30


@dataclass(frozen=True)
class Leak:
    """One relation found between published public columns and a private column.

    Attributes
    ----------
    public : tuple of str
        The public column(s) involved.
    private : str
        The private column they reveal.
    relation : str
        What was found, in words (no data values).
    """

    public: tuple[str, ...]
    private: str
    relation: str


def find_leaks(
    data: pd.DataFrame,
    private: Sequence[str],
    public: Sequence[str],
    *,
    threshold: float = R2_THRESHOLD,
) -> list[Leak]:
    """Relations by which the ``public`` columns of ``data`` reveal a ``private`` column.

    Parameters
    ----------
    data : DataFrame
        The raw records (nothing is modified).
    private, public : sequence of str
        Private columns and the public columns to be published next to them.
    threshold : float, default=0.99
        Threshold on adjusted R² and on the absolute Spearman correlation.

    Returns
    -------
    list of Leak
        At most one entry per (public columns, private column) pair, strongest first
        within each private column.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> rng = np.random.default_rng(0)
    >>> age = rng.integers(18, 60, 500)
    >>> raw = pd.DataFrame({"age": age, "agesq": age**2, "y": rng.normal(size=500)})
    >>> [(leak.public, leak.private) for leak in find_leaks(raw, ["age"], ["agesq", "y"])]
    [(('agesq',), 'age')]
    """
    public = [c for c in public if c in data.columns]
    if not public or len(data) < 3:
        return []
    n = len(data)
    sub = _subsample(n)
    pub_codes = {c: _codes(data[c]) for c in public}
    views = {c: _public_numeric(data[c]) for c in public}
    views = {c: v for c, v in views.items() if v}
    numeric = {c: v[0] for c, v in views.items()}
    leaks: list[Leak] = []
    for col in private:
        found: dict[tuple[str, ...], str] = {}
        x = data[col]
        xcode = _codes(x)
        if xcode[1] < 2:
            continue  # a constant private column: nothing to reveal
        # -- functional dependence on one public column, then on pairs
        singles = [c for c in public if pub_codes[c][1] < n]
        order = _private_order(x)
        for c in public:
            rel = _functional(pub_codes[c], xcode)
            if rel is None and order is not None:
                rel = _step_function(pub_codes[c], order, numeric.get(c))
            if rel:
                found[(c,)] = rel
        informative = [c for c in singles if (c,) not in found][:MAX_PAIR_COLUMNS]
        for a, b in combinations(informative, 2):
            ca, _ = pub_codes[a]
            cb, nb = pub_codes[b]
            key = _codes_from_ints(ca.astype(np.int64) * nb + cb)
            if key[1] >= n:
                continue
            rel = _functional(key, xcode, parents=(pub_codes[a], pub_codes[b]))
            if rel:
                found[(a, b)] = rel
        # -- monotone and polynomial relations on numeric columns
        targets = _targets(x, sub) if n >= MIN_ROWS else []
        if targets and numeric:
            feats = {c: v[sub] for c, v in numeric.items()}
            for c, column_views in views.items():
                for v in column_views:
                    if (c,) in found:
                        break
                    ok = _finite_rows(v[sub])
                    t_ok = [] if ok is None else _restrict(targets, ok)
                    if not t_ok:
                        continue
                    v_ok = v[sub][ok]
                    rel = _monotone(v_ok, t_ok, threshold) or _poly_single(v_ok, t_ok, threshold)
                    if rel:
                        found[(c,)] = rel
            pair_names = [c for c in feats if (c,) not in found][:MAX_PAIR_COLUMNS]
            for a, b in combinations(pair_names, 2):
                ok = np.isfinite(feats[a]) & np.isfinite(feats[b])
                t_ok = _restrict(targets, ok)
                if not t_ok:
                    continue
                r2 = _r2_quadratic_pair(feats[a][ok], feats[b][ok], t_ok)
                if r2 >= threshold:
                    found[(a, b)] = f"quadratic reconstruction (adjusted R^2 = {r2:.4f})"
            rest = [c for c in feats if not any(c in k for k in found)]
            ok = np.all([np.isfinite(feats[c]) for c in rest], axis=0) if rest else None
            if ok is not None and ok.sum() < max(MIN_ROWS, len(rest) + 3):
                # too few rows finite in every column: use the fully finite columns
                rest = [c for c in rest if np.all(np.isfinite(feats[c]))]
                ok = np.ones(sub.size, dtype=bool)
            t_ok = _restrict(targets, ok) if ok is not None else []
            if len(rest) >= 3 and t_ok:
                subset, r2 = _forward_linear(rest, {c: feats[c][ok] for c in rest}, t_ok,
                                             threshold)  # fmt: skip
                if subset:
                    found[tuple(subset)] = f"linear reconstruction (adjusted R^2 = {r2:.4f})"
        leaks.extend(Leak(k, str(col), rel) for k, rel in found.items())
    if len(private) >= 2 and n >= MIN_ROWS and numeric:
        taken = {c for lk in leaks for c in lk.public}
        leaks.extend(_joint_leaks(data, private, numeric, sub, taken, threshold))
    return leaks


#: Private columns whose squares and pairwise products enter the joint check.
MAX_JOINT_QUADRATIC = 12


def _joint_leaks(
    data: pd.DataFrame,
    private: Sequence[str],
    numeric: dict[str, np.ndarray],
    sub: np.ndarray,
    taken: set[str],
    threshold: float,
) -> list[Leak]:
    """Public columns that are linear or quadratic functions of several private columns."""
    feats = {str(c): _targets(data[c], sub) for c in private}
    feats = {c: f for c, f in feats.items() if f}
    if len(feats) < 2:
        return []
    out = []
    for name, v in numeric.items():
        if name in taken:
            continue
        ok = _finite_rows(v[sub])
        if ok is None:
            continue
        target = [_standardise(v[sub][ok])]
        feats_ok = {c: _restrict(f, ok) for c, f in feats.items()}
        feats_ok = {c: f for c, f in feats_ok.items() if f}
        if len(feats_ok) < 2:
            continue
        for kind in ("linear", "quadratic"):
            chosen, r2 = _forward_private(feats_ok, target, threshold, kind)
            if len(chosen) >= 2:
                out.append(Leak((name,), ", ".join(chosen),
                                f"{kind} function of the private columns {chosen!r} "
                                f"jointly (adjusted R^2 = {r2:.4f})"))  # fmt: skip
                break
    return out


def _joint_design(feats: dict[str, list[np.ndarray]], names: list[str], kind: str) -> np.ndarray:
    """Features of the private columns ``names``: linear, or with squares and products."""
    cols = [f for c in names for f in feats[c]]
    if kind == "quadratic":
        single = [feats[c][0] for c in names if len(feats[c]) == 1][:MAX_JOINT_QUADRATIC]
        cols += [a * b for i, a in enumerate(single) for b in single[i:]]
    return np.column_stack(cols)


def _forward_private(
    feats: dict[str, list[np.ndarray]], target: list[np.ndarray], threshold: float, kind: str
) -> tuple[list[str], float]:
    """Smallest set of private columns (forward selection) whose fit reaches the threshold."""
    return _forward_select(
        list(feats), lambda names: _joint_design(feats, names, kind), target, threshold
    )


def format_leaks(leaks: Sequence[Leak]) -> str:
    """One line per leak: ``public -> private: relation``."""
    return "\n".join(
        f"  {', '.join(repr(c) for c in leak.public)} -> {leak.private!r}: {leak.relation}"
        for leak in leaks
    )


def order_leak(x: pd.Series, *, threshold: float = R2_THRESHOLD) -> str | None:
    r"""How the row order of a private column reveals its values, if it visibly does.

    A release that keeps the rows in their raw order publishes the position of every
    record; in a file sorted or grouped by the private value the position alone tells the
    value's rank or which records share a value, whatever the mechanism does to the
    value itself. Three orders are flagged:

    * **sorted**: the values never decrease (or never increase) down the rows. Under a
      random order this has probability :math:`2\prod_v n_v!/n!` (``n_v`` the count of
      value ``v``); it is flagged when that is below :math:`e^{-20}`;
    * **grouped**: the rows sharing a value are contiguous, in any order of the values,
      probability :math:`K!\prod_v n_v!/n!` for ``K`` distinct values, same rule;
    * **nearly sorted**: :math:`|\rho_S| \ge` ``threshold`` between the row position
      and the value (numeric columns of at least :data:`MIN_ROWS` rows).

    Orders related to the value in other ways (a file sorted by the value within each of
    many blocks) are not seen; releasing the rows in a fresh random order is the only
    complete remedy.

    Parameters
    ----------
    x : Series
        The private column in the order in which it would be released.
    threshold : float, default=0.99
        Threshold on the absolute Spearman correlation.

    Returns
    -------
    str or None
        The relation in words (no data values), or ``None``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> x = np.random.default_rng(0).uniform(size=200)
    >>> order_leak(pd.Series(x)) is None, order_leak(pd.Series(np.sort(x)))
    (True, 'the rows are sorted by the value (chance odds below e^-20 in a random order)')
    """
    n = len(x)
    codes, n_values = _codes(x)
    if n_values < 2:
        return None
    values = _numeric(x) if not isinstance(x.dtype, pd.CategoricalDtype) else None
    if values is not None and not np.all(np.isfinite(values)):
        values = None
    changes = np.count_nonzero(codes[1:] != codes[:-1])
    if changes == n_values - 1:  # every value on one run of rows
        counts = np.bincount(codes, minlength=n_values).astype(float)
        log_orders = float(gammaln(n + 1.0) - gammaln(counts + 1.0).sum())
        if values is not None:
            steps = np.diff(values[np.r_[True, codes[1:] != codes[:-1]]])
            if (np.all(steps > 0) or np.all(steps < 0)) and log_orders - math.log(2.0) >= (
                SURPRISE_NATS
            ):
                return (
                    "the rows are sorted by the value (chance odds below "
                    f"e^-{SURPRISE_NATS:g} in a random order)"
                )
        if log_orders - float(gammaln(n_values + 1.0)) >= SURPRISE_NATS:
            return (
                f"the rows sharing a value are contiguous ({n_values} runs; chance odds "
                f"below e^-{SURPRISE_NATS:g} in a random order)"
            )
    if values is not None and n >= MIN_ROWS:
        sub = _subsample(n)
        ranks = pd.Series(values[sub]).rank().to_numpy()
        rho = float(np.corrcoef(sub.astype(float), ranks)[0, 1])
        if abs(rho) >= threshold:
            return (
                "the rows are nearly sorted by the value (Spearman rho between row position "
                f"and value = {rho:+.4f})"
            )
    return None


# ------------------------------------------------------------------------------ helpers
def _subsample(n: int) -> np.ndarray:
    """Rows used by the regressions: all, or evenly spaced ones (no randomness needed)."""
    if n <= MAX_ROWS:
        return np.arange(n)
    return np.unique(np.linspace(0, n - 1, MAX_ROWS).astype(np.int64))


def _codes(series: pd.Series) -> tuple[np.ndarray, int]:
    """Integer codes of a column (missing values form their own group) and their count."""
    codes, uniques = pd.factorize(series, use_na_sentinel=False)
    return codes.astype(np.int64), len(uniques)


def _codes_from_ints(values: np.ndarray) -> tuple[np.ndarray, int]:
    codes, uniques = pd.factorize(values)
    return codes.astype(np.int64), len(uniques)


def _numeric(series: pd.Series) -> np.ndarray | None:
    """Float values of a real numeric (or bool) column, else None."""
    if pd.api.types.is_bool_dtype(series) or (
        pd.api.types.is_numeric_dtype(series) and not pd.api.types.is_complex_dtype(series)
    ):
        values = series.to_numpy(dtype=float, na_value=np.nan)
        return values if np.unique(values[np.isfinite(values)]).size >= 2 else None
    return None


def _public_numeric(series: pd.Series) -> list[np.ndarray]:
    """Numeric views of a published column, with NaN where a value is missing or not a number.

    A published column can carry a private value in many forms besides a float column:
    as text (``"34.25"``), as Python objects (``Decimal``), as the levels of a
    categorical, as a date (a birth date next to a private age) or a duration, as a
    complex number, with some values missing. Each is turned into floats here (dates
    and durations as nanoseconds, text through :func:`pandas.to_numeric`, complex
    numbers into their real and imaginary parts) so that the rank and regression checks
    see it. An empty list means no view with two or more distinct finite values.
    """
    dtype = series.dtype
    views: list[np.ndarray] = []
    if isinstance(dtype, pd.CategoricalDtype):
        cats = _public_numeric(pd.Series(np.asarray(dtype.categories, dtype=object)))
        codes = series.cat.codes.to_numpy()
        for cat_values in cats:
            values = np.append(cat_values, np.nan)[codes]  # code -1 (missing) -> NaN
            views.append(values)
    elif pd.api.types.is_complex_dtype(dtype):
        z = series.to_numpy(dtype=complex)
        views = [z.real.copy(), z.imag.copy()]
    elif pd.api.types.is_bool_dtype(dtype) or pd.api.types.is_numeric_dtype(dtype):
        values = _numeric(series)
        views = [] if values is None else [values]
    elif isinstance(dtype, pd.DatetimeTZDtype | pd.PeriodDtype) or (
        pd.api.types.is_datetime64_dtype(dtype) or pd.api.types.is_timedelta64_dtype(dtype)
    ):
        if isinstance(dtype, pd.PeriodDtype):
            series = series.dt.to_timestamp()
        elif isinstance(dtype, pd.DatetimeTZDtype):
            series = series.dt.tz_convert("UTC").dt.tz_localize(None)
        raw = series.to_numpy()
        values = raw.view(np.int64).astype(float)
        values[pd.isna(raw)] = np.nan
        views = [values]
    else:
        # parse each distinct value once (labels repeat), then spread to the rows
        codes, uniques = pd.factorize(series)
        distinct = pd.Series(np.asarray(uniques, dtype=object))
        try:
            if pd.to_numeric(distinct[:1000], errors="coerce").notna().sum() == 0:
                return []  # labels or identifiers, not numbers
            parsed = pd.to_numeric(distinct, errors="coerce")
        except (TypeError, ValueError):
            return []
        cats = _public_numeric(parsed) if pd.api.types.is_numeric_dtype(parsed.dtype) else []
        views = [np.append(c, np.nan)[codes] for c in cats]  # code -1 (missing) -> NaN
    out = []
    for view in views:
        v = np.array(view, dtype=float)  # a writable copy
        v[~np.isfinite(v)] = np.nan
        if np.unique(v[np.isfinite(v)]).size >= 2:
            out.append(v)
    return out


def _restrict(targets: list[np.ndarray], ok: np.ndarray) -> list[np.ndarray]:
    """Targets on the rows ``ok``, re-standardised; those constant there are dropped."""
    out = []
    for t in targets:
        t = t[ok]
        if t.size and np.ptp(t) > 0:
            out.append(_standardise(t))
    return out


def _finite_rows(v: np.ndarray) -> np.ndarray | None:
    """Rows where ``v`` is finite.

    ``None`` when fewer than :data:`MIN_ROWS` are or ``v`` is constant on them (nothing
    to check).
    """
    ok = np.isfinite(v)
    if ok.sum() < MIN_ROWS or np.ptp(v[ok]) == 0:
        return None
    return ok


def _functional(
    key: tuple[np.ndarray, int],
    xcode: tuple[np.ndarray, int],
    parents: tuple[tuple[np.ndarray, int], ...] = (),
) -> str | None:
    """Describe a (partial) functional dependence of x on the key, if one is flagged.

    For a pair key, the chance that a group is constant is judged against the private
    column's distribution within each single-column parent group (the pair must add to
    what one column shows), through the bound ``p_max^(m - 1)``.
    """
    g, n_groups = key
    xc, n_x = xcode
    n = g.size
    if n_groups == n or n_x == n:
        return None  # no group of 2+ rows, or no private value shared by two rows
    sizes = np.bincount(g, minlength=n_groups)
    pairs = _sorted_unique(g * n_x + xc)
    distinct = np.bincount(pairs // n_x, minlength=n_groups)
    constant = (distinct == 1) & (sizes >= 2)
    if not constant.any():
        return None
    p = np.bincount(xc, minlength=n_x) / n
    surprise = _constant_surprise(p, sizes[constant])
    for parent, n_parent in parents:
        # the parent group of each constant group, and the largest private-value share in it
        first = np.zeros(n_groups, dtype=np.int64)
        first[g] = parent
        pmax = _max_share(parent, n_parent, xc, n_x)[first[constant]]
        with np.errstate(divide="ignore"):
            bound = -(sizes[constant] - 1.0) * np.log(pmax)
        surprise = np.minimum(surprise, bound)
    if surprise.max() < SURPRISE_NATS:
        return None
    multi = sizes >= 2
    share = sizes[constant].sum() / max(sizes[multi].sum(), 1)
    if np.all(constant[multi]):
        return (
            "exact functional dependence (the private value is the same in every group of "
            f"rows sharing the public value; {int(multi.sum())} groups of 2+ rows)"
        )
    flagged = int((surprise >= SURPRISE_NATS).sum())
    return (
        f"partial functional dependence ({flagged} group(s) of rows sharing a public value "
        f"have a single private value, {share:.0%} of the rows in groups of 2+; chance odds "
        f"below e^-{SURPRISE_NATS:g})"
    )


def _sorted_unique(values: np.ndarray) -> np.ndarray:
    """Distinct values by sorting (faster than hashing for large integer arrays)."""
    v = np.sort(values)
    return v[np.r_[True, v[1:] != v[:-1]]]


def _max_share(g: np.ndarray, n_groups: int, xc: np.ndarray, n_x: int) -> np.ndarray:
    """Largest share of one private value within each group."""
    comb = np.sort(g * n_x + xc)
    starts = np.flatnonzero(np.r_[True, comb[1:] != comb[:-1]])
    cells, counts = comb[starts], np.diff(np.r_[starts, comb.size])
    top = np.zeros(n_groups)
    np.maximum.at(top, cells // n_x, counts)
    return top / np.maximum(np.bincount(g, minlength=n_groups), 1)


def _private_order(x: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """Row order by a numeric private column, and where its tied runs start."""
    values = _numeric(x) if not isinstance(x.dtype, pd.CategoricalDtype) else None
    if values is None or not np.all(np.isfinite(values)):
        return None
    order = np.argsort(values, kind="stable")
    sorted_x = values[order]
    starts = np.flatnonzero(np.r_[True, sorted_x[1:] != sorted_x[:-1]])
    return order, starts


def _step_function(
    key: tuple[np.ndarray, int],
    private: tuple[np.ndarray, np.ndarray],
    values: np.ndarray | None,
) -> str | None:
    r"""A public column that is a monotone (step) function of the private one.

    Along the rows sorted by the private value, the public column must be constant
    within ties of the private value and take each of its ``K`` values on one interval,
    in increasing or decreasing order when it is numeric. Under independence such an
    order has probability :math:`2 \prod_k n_k! / n!` (numeric) or
    :math:`K! \prod_k n_k! / n!` (labels); the column is flagged when that is below
    :math:`e^{-20}`. A column with all-distinct values is never flagged here (its only
    possible relation is a monotone transform, which the rank check sees).
    """
    g, n_groups = key
    order, starts = private
    if n_groups < 2 or n_groups == g.size:
        return None
    seq = g[order]
    run_id = np.repeat(np.arange(starts.size), np.diff(np.r_[starts, seq.size]))
    if np.any(seq != seq[starts][run_id]):
        return None  # not a function of the private value
    if np.count_nonzero(seq[1:] != seq[:-1]) != n_groups - 1:
        return None  # some public value on two or more intervals
    counts = np.bincount(g, minlength=n_groups).astype(float)
    log_orders = float(gammaln(counts.sum() + 1) - gammaln(counts + 1).sum())
    if values is not None and np.all(np.isfinite(values)):
        along = values[order][starts]
        steps = np.diff(along)
        if not (np.all(steps >= 0) or np.all(steps <= 0)):
            return None
        log_chance = log_orders - math.log(2.0)
    else:
        log_chance = log_orders - float(gammaln(n_groups + 1))
    if log_chance < SURPRISE_NATS:
        return None
    return (
        f"step function of the private value ({n_groups} public values, each on one "
        "interval of the private value: it shows which interval a record is in)"
    )


def _constant_surprise(p: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    r"""``-log sum_v p_v^m`` for each group size ``m`` (chance that a group is constant)."""
    p = p[p > 0]
    uniq, inv = np.unique(sizes, return_inverse=True)
    if p.size <= 2000 and uniq.size <= 200:
        logp = np.log(p)
        mat = logp[None, :] * uniq[:, None].astype(float)
        top = mat.max(axis=1)
        lse = top + np.log(np.exp(mat - top[:, None]).sum(axis=1))
        return -lse[inv]
    # bound: sum_v p_v^m <= p_max^(m - 1)
    return -(sizes - 1.0) * math.log(float(p.max()))


def _targets(x: pd.Series, sub: np.ndarray) -> list[np.ndarray]:
    """Standardised numeric targets: the column itself, or its level indicators."""
    values = _numeric(x) if not isinstance(x.dtype, pd.CategoricalDtype) else None
    if values is not None:
        v = values[sub]
        return [_standardise(v)] if np.all(np.isfinite(v)) and np.ptp(v) > 0 else []
    codes, n_levels = _codes(x)
    codes = codes[sub]
    out = []
    for k in range(n_levels if n_levels > 2 else min(n_levels, 1)):
        ind = (codes == k).astype(float)
        if 0 < ind.sum() < ind.size:
            out.append(_standardise(ind))
    return out


def _standardise(v: np.ndarray) -> np.ndarray:
    sd = v.std()
    return (v - v.mean()) / sd if sd > 0 else v - v.mean()


def _monotone(v: np.ndarray, targets: list[np.ndarray], threshold: float) -> str | None:
    """Spearman |rho| >= threshold between a public column and a target."""
    rv = pd.Series(v).rank().to_numpy()
    for t in targets:
        rt = pd.Series(t).rank().to_numpy()
        if np.ptp(rv) == 0 or np.ptp(rt) == 0:
            continue
        rho = float(np.corrcoef(rv, rt)[0, 1])
        if abs(rho) >= threshold:
            return f"monotone transform (Spearman rho = {rho:+.4f})"
    return None


def _adjusted_r2(design: np.ndarray, targets: list[np.ndarray]) -> float:
    """Largest adjusted R^2 of the (standardised) targets on ``[1, design]``.

    Solved through the (p + 1) x (p + 1) normal equations; the targets and the columns
    are standardised, so the precision needed near R^2 = 0.99 is ample.
    """
    n, p = design.shape
    if n <= p + 2:
        return -math.inf
    X = np.column_stack([np.ones(n), design])
    Y = np.column_stack(targets)
    G = X.T @ X
    b = X.T @ Y
    coef = np.linalg.pinv(G, hermitian=True) @ b
    Yc = Y - Y.mean(axis=0)
    tss = np.sum(Yc**2, axis=0)
    rss = np.maximum(np.sum(Y**2, axis=0) - np.sum(coef * b, axis=0), 0.0)
    r2 = 1.0 - rss / np.where(tss > 0, tss, np.inf)
    adj = 1.0 - (1.0 - r2) * (n - 1) / (n - p - 1)
    return float(np.max(adj))


def _poly_single(v: np.ndarray, targets: list[np.ndarray], threshold: float) -> str | None:
    """Lowest-degree polynomial (1 to 3) in one column with adjusted R^2 >= threshold."""
    z = _standardise(v)
    for degree, name in ((1, "linear"), (2, "quadratic"), (3, "cubic")):
        if np.unique(z).size <= degree:
            break
        r2 = _adjusted_r2(np.column_stack([z**k for k in range(1, degree + 1)]), targets)
        if r2 >= threshold:
            return f"{name} reconstruction (adjusted R^2 = {r2:.4f})"
    return None


def _r2_quadratic_pair(a: np.ndarray, b: np.ndarray, targets: list[np.ndarray]) -> float:
    za, zb = _standardise(a), _standardise(b)
    return _adjusted_r2(np.column_stack([za, zb, za**2, zb**2, za * zb]), targets)


def _forward_linear(
    names: list[str], feats: dict[str, np.ndarray], targets: list[np.ndarray], threshold: float
) -> tuple[list[str], float]:
    """Smallest set (by forward selection) whose linear fit reaches the threshold."""
    Z = {c: _standardise(feats[c]) for c in names}
    return _forward_select(
        names, lambda cols: np.column_stack([Z[c] for c in cols]), targets, threshold
    )


def _forward_select(
    names: list[str],
    design: Callable[[list[str]], np.ndarray],
    targets: list[np.ndarray],
    threshold: float,
) -> tuple[list[str], float]:
    """Forward selection of ``names`` until the adjusted R^2 of ``design`` reaches threshold.

    Returns ``([], R^2 of all)`` when even all of them fall short.
    """
    full = _adjusted_r2(design(names), targets)
    if full < threshold:
        return [], full
    chosen: list[str] = []
    r2 = -math.inf
    while len(chosen) < len(names):
        scores = {
            c: _adjusted_r2(design([*chosen, c]), targets) for c in names if c not in chosen
        }
        best = max(scores, key=lambda c: scores[c])
        chosen.append(str(best))
        r2 = scores[best]
        if r2 >= threshold:
            break
    return chosen, r2
