r"""Atoms of private data that a continuous reference lacks: kept rows become visible.

The alpha-identity replaces a value by a draw from the reference :math:`Q`. When
:math:`Q` is atomless (``Uniform``, a continuous ``Frozen`` law) its draws almost surely
carry every digit and never repeat, while real data have atoms: values recorded on a grid
(whole years of age, whole dollars, one decimal), stored in single precision (32-bit
floats, as in many statistical file formats), or one value shared by many rows (zero
earnings). A released value on such an atom is then, almost surely, a kept true value,
and one off it a replacement. The total-variation guarantee (:math:`\alpha`) still holds
(it allows a kept value to show), but those rows cannot deny that the released value is
their own, which is the deniability the mechanism is used for.

:func:`atom_stats` summarises what the check needs of a column: on which decimal grids
:math:`10^{-k}` (:math:`k = 0, \dots,` :data:`MAX_DECIMALS`) all its values lie, whether
all are 32-bit floats, and how many rows share their value with another row;
:func:`warn_atom_leaks` names the columns with a grid, single precision or a tied share
of at least :data:`MIN_TIED_SHARE` before a release (:func:`grid_step` and
:func:`tied_share` read one column's summary). A reference with the same atoms
(``Categorical`` levels, a discrete ``Frozen`` law such as ``scipy.stats.randint``, an
``Empirical`` sample) avoids it.

One decision for both backends: :func:`atom_stats` summarises a column (pandas) or one
partition of it (Dask, in the eager validation pass), :func:`merge_stats` combines the
partitions' summaries, :func:`describe_atoms` decides on a column and
:func:`warn_found` issues the one warning. The grid and single-precision tests combine
exactly (every partition's values on the grid, all of them single precision). The tied
share of a Dask frame counts the rows whose value repeats *within their partition*:
exact counts across partitions would gather every distinct value (every row of a
continuous column) in one place. A value that repeats across partitions but at most
once in each is missed, so the share can fall short by at most one row per partition
and such value (a spike of at least two rows in every partition is counted exactly).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from privinfer._validation import user_stacklevel
from privinfer.exceptions import AtomLeakWarning

__all__ = [
    "MAX_DECIMALS", "MIN_TIED_SHARE", "AtomStats", "atom_columns", "atom_stats",
    "describe_all", "describe_atoms", "frame_stats", "grid_step", "merge_stats", "tied_share",
    "warn_atom_leaks", "warn_found",
]

#: Finest decimal grid looked for (values with more decimals count as continuous).
MAX_DECIMALS = 6
#: Share of rows on repeated values from which a column is named.
MIN_TIED_SHARE = 0.01
#: Most frequent repeated values a summary keeps (to name one in the warning).
TOP_VALUES = 5


def _finite(values: np.ndarray) -> np.ndarray:
    x = np.asarray(values, dtype=float)
    return x[np.isfinite(x)]


def _on_grids(x: np.ndarray) -> tuple[bool, ...]:
    """For k = 0, ..., MAX_DECIMALS: whether every value of ``x`` lies on the grid 10^-k."""
    on = []
    for k in range(MAX_DECIMALS + 1):
        s = x * 10.0**k
        on.append(bool(np.all(np.abs(s - np.round(s)) <= 1e-9 * np.maximum(1.0, np.abs(s)))))
    return tuple(on)


def _step(grids: Sequence[bool]) -> float | None:
    return next((10.0**-k for k, on in enumerate(grids) if on), None)


def grid_step(values: np.ndarray) -> float | None:
    r"""The coarsest step :math:`10^{-k}`, :math:`k \le` :data:`MAX_DECIMALS`, on which every
    finite value lies (up to floating-point rounding), or ``None``.

    Examples
    --------
    >>> import numpy as np
    >>> grid_step(np.array([18.0, 25.0, 40.0])), grid_step(np.array([1.5, 2.25]))
    (1.0, 0.01)
    >>> grid_step(np.random.default_rng(0).uniform(0, 1, 50)) is None
    True
    """
    x = _finite(values)
    return _step(_on_grids(x)) if x.size >= 2 else None


def _all_single(x: np.ndarray) -> bool:
    """Whether every value is a single-precision (float32) number stored as a double.

    Data read from files that store 32-bit floats (Stata's ``float``, many CSV exports of
    them) are; double-precision draws of a continuous reference almost never are, so a
    released value that survives a round trip through float32 is a kept one. (A column of
    dtype ``float32`` is released as one, its draws rounded alike: no leak.)
    """
    return bool(np.all(x.astype(np.float32).astype(float) == x))


def tied_share(values: np.ndarray) -> tuple[float, float]:
    """Share of the finite values that another value equals, and the most frequent
    repeated value (NaN if none): read off :func:`atom_stats`.

    Examples
    --------
    >>> import numpy as np
    >>> tied_share(np.array([0.0, 0.0, 0.0, 1.25, 2.5]))
    (0.6, 0.0)
    """
    stats = atom_stats(values)
    share = stats.tied / stats.n if stats.n else 0.0
    return share, stats.top[0][0] if stats.top else float("nan")


@dataclass(frozen=True)
class AtomStats:
    r"""What the atom check needs of the finite values of a column, or of one partition of
    it (partitions combine with :func:`merge_stats`).

    Attributes
    ----------
    n : int
        Number of finite values.
    grids : tuple of bool
        ``grids[k]``: every value lies on the grid :math:`10^{-k}`,
        :math:`k = 0, \dots,` :data:`MAX_DECIMALS` (true of no values).
    single : bool
        Every value is a single-precision float (true of no values).
    tied : int
        Rows whose value another row of the same part shares.
    top : tuple of (float, int)
        The (at most :data:`TOP_VALUES`) most frequent repeated values and their counts,
        most frequent first.
    """

    n: int
    grids: tuple[bool, ...]
    single: bool
    tied: int
    top: tuple[tuple[float, int], ...]


def atom_stats(values: np.ndarray) -> AtomStats:
    """The :class:`AtomStats` of the finite ``values``.

    Examples
    --------
    >>> import numpy as np
    >>> s = atom_stats(np.array([0.0, 0.0, 0.0, 1.25, 2.5]))
    >>> s.n, s.grids[:3], s.tied, s.top
    (5, (False, False, True), 3, ((0.0, 3),))
    """
    x = _finite(values)
    counts = pd.Series(x).value_counts()
    repeated = counts[counts > 1]
    top = tuple((float(v), int(c)) for v, c in repeated.head(TOP_VALUES).items())
    return AtomStats(x.size, _on_grids(x), _all_single(x), int(repeated.sum()), top)


def merge_stats(parts: Iterable[AtomStats]) -> AtomStats:
    """The :class:`AtomStats` of the union of parts (partitions of one column).

    The grids and single precision combine exactly; ``tied`` adds the parts' tied rows
    (a value repeated across parts but at most once in each is not counted) and ``top``
    the parts' counts of their most frequent repeated values.

    Examples
    --------
    >>> import numpy as np
    >>> a, b = atom_stats(np.array([0.0, 0.0, 1.5])), atom_stats(np.array([0.0, 0.0, 2.25]))
    >>> m = merge_stats([a, b])
    >>> m.n, m.grids[:3], m.tied, m.top
    (6, (False, False, True), 4, ((0.0, 4),))
    """
    parts = list(parts)
    counts: dict[float, int] = {}
    for p in parts:
        for value, count in p.top:
            counts[value] = counts.get(value, 0) + count
    top = sorted(counts.items(), key=lambda vc: -vc[1])[:TOP_VALUES]
    return AtomStats(
        n=sum(p.n for p in parts),
        grids=tuple(all(g) for g in zip(*(p.grids for p in parts), strict=True))
        if parts
        else (True,) * (MAX_DECIMALS + 1),
        single=all(p.single for p in parts),
        tied=sum(p.tied for p in parts),
        top=tuple(top),
    )


def atom_columns(parts: Any, dtypes: Mapping[str, Any]) -> list[str]:
    """The private columns of atomless reference components whose dtype is numeric (not
    bool): those the atom check looks at. ``dtypes``: the data's (``data.dtypes``).
    """
    return [
        col
        for cols, comp in parts
        if comp.is_atomless
        for col in cols
        if pd.api.types.is_numeric_dtype(dtypes[col])
        and not pd.api.types.is_bool_dtype(dtypes[col])
    ]


def frame_stats(data: pd.DataFrame, columns: Sequence[str]) -> dict[str, AtomStats]:
    """The :class:`AtomStats` of the given columns of a pandas frame (or partition)."""
    return {col: atom_stats(data[col].to_numpy(dtype=float)) for col in columns}


def describe_atoms(col: str, stats: AtomStats, dtype: Any) -> str | None:
    """How column ``col`` (of dtype ``dtype``) shows its kept rows, or ``None``.

    A decimal grid first, then single precision (not for a float32 column, whose draws
    are rounded alike), then a tied share of at least :data:`MIN_TIED_SHARE`.

    Examples
    --------
    >>> import numpy as np
    >>> describe_atoms("age", atom_stats(np.array([18.0, 25.0, 40.0])), np.float64)
    "'age' (multiples of 1)"
    >>> describe_atoms("u", atom_stats(np.random.default_rng(0).uniform(size=9)), float) is None
    True
    """
    step = _step(stats.grids) if stats.n >= 2 else None
    if step is not None:
        return f"{col!r} (multiples of {step:g})"
    if stats.n >= 2 and stats.single and getattr(dtype, "numpy_dtype", dtype) != np.float32:
        return f"{col!r} (single-precision floats)"
    share = stats.tied / stats.n if stats.n else 0.0
    if share >= MIN_TIED_SHARE:
        return f"{col!r} ({share:.0%} of rows on repeated values such as {stats.top[0][0]:g})"
    return None


def describe_all(stats: Mapping[str, AtomStats], dtypes: Mapping[str, Any]) -> list[str]:
    """:func:`describe_atoms` of every column of ``stats`` that shows its kept rows."""
    found = (describe_atoms(col, s, dtypes[col]) for col, s in stats.items())
    return [d for d in found if d is not None]


def warn_found(found: Sequence[str], owner: str) -> list[str]:
    """Issue the :class:`~privinfer.exceptions.AtomLeakWarning` naming ``found`` (the
    descriptions of :func:`describe_atoms`), pointed at the first caller outside
    privinfer; nothing when ``found`` is empty. Returns ``found``.
    """
    if found:
        warnings.warn(
            f"{owner}: private column(s) {', '.join(found)} have atoms that their continuous "
            "reference never draws: a released value on such an atom is, almost surely, a "
            "kept true value, so those rows' keep/replace status is visible (the "
            "total-variation guarantee alpha still holds, but they cannot deny that the "
            "value is their own). Use a reference with the same atoms (Categorical levels, "
            "a discrete Frozen law such as scipy.stats.randint, an Empirical sample); "
            "single-precision values: pass the column as dtype float32, which rounds the "
            "draws alike.",
            AtomLeakWarning,
            stacklevel=user_stacklevel(),
        )
    return list(found)


def warn_atom_leaks(parts: Any, data: pd.DataFrame, owner: str) -> list[str]:
    """Warn (:class:`~privinfer.exceptions.AtomLeakWarning`) about the private columns of
    atomless reference components whose values lie on a decimal grid or are shared by at
    least :data:`MIN_TIED_SHARE` of the rows, or are all single-precision floats; returns
    their descriptions. (The Dask path combines the partitions' :func:`atom_stats`.)
    """
    stats = frame_stats(data, atom_columns(parts, data.dtypes))
    return warn_found(describe_all(stats, data.dtypes), owner)
