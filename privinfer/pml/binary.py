r"""The optimal binary PML mechanism :math:`K^*` and the private simple-vs-simple test.

Grosse, Saeidian, Oechtering and Skoglund (2026).

:func:`optimal_binary_mechanism` builds the kernel of Grosse et al. (2026) Theorem 3, which attains
the Dobrushin bound :func:`~privinfer.pml.eta_tv`; :class:`PMLTest` uses it to test
:math:`H_0: X\sim P` against :math:`H_1: X\sim Q` from one privatised bit per person
(Grosse et al., 2026, §VI-A, Proposition 1).
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from numbers import Integral
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.iolib.summary import Summary
from statsmodels.iolib.table import SimpleTable

from privinfer._hypotheses import PostEstimationMixin
from privinfer._tables import ModelLabel
from privinfer._typing import ArrayLike, FloatArray, IntArray, RandomStateLike
from privinfer._validation import (
    check_int,
    check_level,
    check_no_nan,
    check_random_state,
)
from privinfer.exceptions import (
    DataMismatchError,
    MassConditionError,
    NotInInteriorError,
    OutOfSupportError,
    OutsideBoundsWarning,
)
from privinfer.pml._release import as_released, check_row_order, release_bits
from privinfer.pml.contraction import _check_c, _check_eps, eps_star, eta_tv
from privinfer.pml.guarantee import PMLGuarantee

__all__ = ["BinaryMechanism", "BitTestPlan", "PMLTest", "PMLTestResult", "optimal_binary_mechanism"]

_MASS_TOL = 1e-12
_PMF_TOL = 1e-9


def _parse_space(space: object, owner: str) -> tuple[str, int, FloatArray | None, float]:
    """Return (kind, n_atoms or dim, bounds of shape (d, 2) or None, measure)."""
    if isinstance(space, Integral) and not isinstance(space, bool):
        n = check_int(space, "space", owner, 1)
        return "discrete", n, None, float(n)
    arr = np.asarray(space, dtype=float)
    if arr.shape == (2,):
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != 2 or not np.all(np.isfinite(arr)) or np.any(
        arr[:, 1] <= arr[:, 0]
    ):
        raise ValueError(
            f"The 'space' parameter of {owner} must be an int N (finite space, counting "
            "measure), an interval (lo, hi) or a box [(lo_1, hi_1), ..., (lo_d, hi_d)] with "
            f"lo < hi (Lebesgue measure). Got {space!r} instead."
        )
    return "lebesgue", arr.shape[0], arr, float(np.prod(arr[:, 1] - arr[:, 0]))


def _ro(a: np.ndarray) -> np.ndarray:
    a = np.array(a, dtype=float)
    a.setflags(write=False)
    return a


@dataclass(frozen=True)
class BinaryMechanism:
    r"""The optimal binary eps-PML mechanism :math:`K^*` for a (soft) set A.

    Built by :func:`optimal_binary_mechanism`; it releases one bit ``y`` per record with
    :math:`K^*(0|x) = \beta + \eta_{TV}(\varepsilon)\,a(x)`, where :math:`a = 1_A` (or a
    soft set with values in [0, 1]) and :math:`\beta = (1 - e^\varepsilon c\,\mu(A))/
    (1 + e^\varepsilon d_c)`. ``y = 0`` is the label favoured by x in A (the labelling of
    Grosse et al., 2026).

    Attributes
    ----------
    eps : float
        PML level the kernel is built for (:math:`\bar\varepsilon`, possibly reduced).
    eps_requested : float
        The level the caller asked for.
    c : float
        Density floor of the c-interior.
    measure : float
        :math:`\mu(\mathcal X)`.
    mass : float
        :math:`\mu(A) = \int a\,d\mu`.
    eta : float
        :math:`\eta_{TV}(\varepsilon)`, the gap :math:`K^*(0|x\in A) - K^*(0|x\notin A)`.
    base : float
        :math:`K^*(0|x)` for x outside A.
    kind : str
        ``"discrete"`` (counting measure) or ``"lebesgue"`` (interval or box).
    weights : ndarray or None
        :math:`a(x)` on the atoms ``0..N-1`` (discrete spaces).
    boxes : ndarray or None
        Disjoint sub-boxes of shape (k, d, 2) whose union is A (Lebesgue spaces).
    bounds : ndarray or None
        The space's box, shape (d, 2) (Lebesgue spaces).

    Examples
    --------
    On ten atoms with A the first five, records in A report ``0`` more often by exactly
    :math:`\eta_{TV}(\varepsilon)`:

    >>> mech = optimal_binary_mechanism(1.0, 0.05, [0, 1, 2, 3, 4], 10)
    >>> mech.kind, mech.mass, round(mech.eta, 4)
    ('discrete', 5.0, 0.7284)
    >>> mech.indicator([0, 7]).tolist(), mech.prob_zero([0, 7]).round(4).tolist()
    ([1.0, 0.0], [0.8642, 0.1358])
    >>> mech.kernel.shape, mech.push_forward(np.full(10, 0.1)).round(4).tolist()
    ((10, 2), [0.5, 0.5])
    >>> bits = mech.privatize(np.zeros(5000, dtype=int), random_state=0)
    >>> bool(abs((bits == 0).mean() - 0.8642) < 0.02)
    True

    On an interval, A is a union of sub-intervals:

    >>> mech = optimal_binary_mechanism(1.0, 0.2, [(0.0, 0.5)], (0.0, 2.0))
    >>> mech.kind, mech.mass, mech.prob_zero([0.25, 1.5]).round(4).tolist()
    ('lebesgue', 0.5, [0.9299, 0.2768])
    """

    eps: float
    eps_requested: float
    c: float
    measure: float
    mass: float
    eta: float
    base: float
    kind: str
    weights: FloatArray | None = field(default=None, repr=False)
    boxes: FloatArray | None = field(default=None, repr=False)
    bounds: FloatArray | None = field(default=None, repr=False)

    # ----------------------------------------------------------------- evaluation
    def indicator(self, x: ArrayLike) -> FloatArray:
        """:math:`a(x)`: membership of each record in A (a weight in [0, 1] for soft sets)."""
        return self._indicator(x, "BinaryMechanism")

    def _indicator(self, x: ArrayLike, owner: str) -> FloatArray:
        if self.kind == "discrete":
            assert self.weights is not None
            idx = self._check_atoms(x, owner)
            return self.weights[idx]
        assert self.boxes is not None and self.bounds is not None
        pts = self._check_points(x, owner)
        inside = (pts[:, None, :] >= self.boxes[None, :, :, 0]) & (
            pts[:, None, :] <= self.boxes[None, :, :, 1]
        )
        return inside.all(axis=2).any(axis=1).astype(float)

    def prob_zero(self, x: ArrayLike) -> FloatArray:
        r""":math:`K^*(0|x)` for each record."""
        return self._prob_zero(x, "BinaryMechanism")

    def _prob_zero(self, x: ArrayLike, owner: str) -> FloatArray:
        return np.clip(self.base + self.eta * self._indicator(x, owner), 0.0, 1.0)

    @property
    def kernel(self) -> FloatArray:
        """The stochastic matrix (N, 2) with columns ``K(0|x)``, ``K(1|x)`` (discrete only)."""
        if self.kind != "discrete":
            raise DataMismatchError(
                "BinaryMechanism.kernel: a kernel matrix exists only on a discrete space; "
                "use prob_zero(x) on an interval or box."
            )
        assert self.weights is not None
        k0 = np.clip(self.base + self.eta * self.weights, 0.0, 1.0)
        return np.column_stack([k0, 1.0 - k0])

    def push_forward(self, pmf: ArrayLike) -> FloatArray:
        r"""Output pmf :math:`(PK^*(0), PK^*(1))` of an input pmf (discrete only)."""
        p = np.asarray(pmf, dtype=float)
        return p @ self.kernel

    def privatize(self, x: ArrayLike, random_state: RandomStateLike = None) -> IntArray | pd.Series:
        """Release one bit per record (data-holder side), in the order of ``x``.

        The bits keep the positions of ``x`` (to be paired with public columns by
        position); the guarantee covers each bit, not the order. Input whose order
        visibly reveals the values (sorted or grouped by them, or nearly sorted) and a
        Series or DataFrame with an index other than the default ``RangeIndex`` are
        therefore refused; :meth:`release` publishes bits next to public columns in a
        fresh random order.

        Parameters
        ----------
        x : array-like or pandas.Series
            Atoms ``0..N-1`` (discrete) or points in the space (n,) / (n, d), in an
            order unrelated to them.
        random_state : None, int, SeedSequence or Generator, default=None
            ``None`` draws fresh OS entropy (use it for real releases).

        Returns
        -------
        ndarray of int or pandas.Series
            Bits ``y`` in {0, 1} in the order of ``x``; a Series keeps the input's name
            and gets a fresh ``RangeIndex``.

        Raises
        ------
        OutOfSupportError, DataMismatchError
            Values outside the space, or of the wrong shape or type.
        RowOrderError
            The order of ``x`` reveals its values, or ``x`` has an index other than the
            default ``RangeIndex``.

        Examples
        --------
        >>> mech = optimal_binary_mechanism(1.0, 0.05, [0, 1, 2, 3, 4], 10)
        >>> x = np.random.default_rng(0).integers(0, 10, 300)
        >>> mech.privatize(x, random_state=1).shape
        (300,)
        >>> from privinfer.exceptions import RowOrderError
        >>> try:  # a file sorted by the atom would show the ranks
        ...     mech.privatize(np.sort(x), random_state=1)
        ... except RowOrderError as err:
        ...     message = str(err)
        >>> "sorted by the value" in message
        True
        """
        return self._privatize(x, random_state, "BinaryMechanism.privatize")

    def _privatize(
        self, x: ArrayLike, random_state: RandomStateLike, owner: str
    ) -> IntArray | pd.Series:
        """:meth:`privatize`, with messages naming ``owner`` (the method the user called)."""
        rng = check_random_state(random_state)
        p0 = self._prob_zero(np.asarray(x), owner)
        check_row_order(
            x, owner,
            "To publish bits next to public columns use release(data, private, "
            "public=[...]), which shuffles the rows jointly; to test or estimate only, "
            "shuffle the values first (x[rng.permutation(len(x))]) and pass an array.",
        )
        return as_released(x, (rng.random(p0.shape[0]) >= p0).astype(np.int64))

    def _draw(self, values: np.ndarray, rng: np.random.Generator, owner: str) -> IntArray:
        """Bits of the records ``values`` (no order checks; :meth:`release` shuffles)."""
        p0 = self._prob_zero(values, owner)
        return (rng.random(p0.shape[0]) >= p0).astype(np.int64)

    def release(
        self,
        data: Any,
        private: str | Sequence[str],
        *,
        public: Sequence[str] | None = None,
        name: str | None = None,
        shuffle: bool = True,
        random_state: RandomStateLike = None,
    ) -> pd.DataFrame:
        r"""Publish one bit per record of ``data`` with the declared public columns.

        The frame to hand to an analyst: the private column(s) are replaced by one bit
        column, the columns named in ``public`` go out unchanged, every other column is
        dropped, and the rows go out jointly in a fresh random order with a fresh
        ``RangeIndex``, so neither the raw order nor the raw index says anything about
        the private values. O(n) plus the leak checks.

        Parameters
        ----------
        data : DataFrame
            Raw records (pandas, or another DataFrame library); not modified.
        private : str or list of str
            The column of atoms or points; on a box, the ``d`` coordinate columns in the
            order of the space's bounds.
        public : list of str, optional
            Columns published unchanged next to the bits.
        name : str, optional
            Name of the bit column; defaults to the private column's name (required for
            several private columns).
        shuffle : bool, default=True
            Release the rows in a fresh random order. ``False`` keeps the raw order
            (which can reveal whatever the file was sorted by) and is written into the
            release's description.
        random_state : None, int, SeedSequence or Generator, default=None
            ``None`` draws fresh OS entropy (use it for real releases); an int issues
            :class:`~privinfer.exceptions.SeedReleaseWarning`.

        Returns
        -------
        DataFrame
            The bit column (at the place of the first private column) and the public
            columns in their raw order and dtypes, a fresh ``RangeIndex``;
            ``attrs["privinfer_bits_release"]`` describes the release. Nothing else of
            the raw frame (``attrs``, ``flags``, ``columns.name``) is copied, and a
            categorical public column keeps only the categories some row takes (one
            without rows would tell of rows removed before the release).

        Raises
        ------
        DataMismatchError
            A named column is missing, declared both private and public, or duplicated.
        DerivedColumnError
            A public column (or a few together) reveals a private column.
        OutOfSupportError
            Private values outside the space.

        Warns
        -----
        UndeclaredColumnWarning
            Columns neither private nor declared public were dropped.

        Examples
        --------
        >>> import pandas as pd
        >>> mech = optimal_binary_mechanism(1.0, 0.05, [0, 1, 2, 3, 4], 10)
        >>> rng = np.random.default_rng(0)
        >>> raw = pd.DataFrame({"grade": np.sort(rng.integers(0, 10, 400)),  # sorted file
        ...                     "wave": rng.integers(1, 3, 400)})
        >>> released = mech.release(raw, "grade", public=["wave"], random_state=1)
        >>> released.columns.tolist(), released.index.equals(pd.RangeIndex(400))
        (['grade', 'wave'], True)
        """
        return self._release(data, private, public=public, name=name, shuffle=shuffle,
                             random_state=random_state, owner="BinaryMechanism.release")

    def _release(
        self,
        data: Any,
        private: str | Sequence[str],
        *,
        public: Sequence[str] | None,
        name: str | None,
        shuffle: bool,
        random_state: RandomStateLike,
        owner: str,
    ) -> pd.DataFrame:
        """:meth:`release`, with messages naming ``owner`` (the method the user called)."""
        return release_bits(
            functools.partial(self._draw, owner=owner), data, private, public=public,
            name=name, shuffle=shuffle, random_state=random_state, owner=owner,
            mechanism=f"BinaryMechanism(kind={self.kind!r}, eps={self.eps:g}, c={self.c:g})",
        )

    def guarantee(self) -> PMLGuarantee:
        """The :class:`PMLGuarantee` of this kernel."""
        return PMLGuarantee(eps=self.eps, c=self.c, measure=self.measure,
                            mechanism="optimal binary K*")

    # ----------------------------------------------------------------- validation
    def _check_atoms(self, x: ArrayLike, owner: str) -> IntArray:
        arr = np.asarray(x)
        assert self.weights is not None
        n = self.weights.shape[0]
        check_no_nan(arr, "x", owner)
        if arr.ndim != 1 or not (
            np.issubdtype(arr.dtype, np.integer)
            or (np.issubdtype(arr.dtype, np.floating) and np.all(arr == np.round(arr)))
        ):
            raise DataMismatchError(
                f"{owner}: x must be a 1-D array of atoms 0..{n - 1}; got dtype "
                f"{arr.dtype}, shape {arr.shape}."
            )
        idx = arr.astype(np.int64)
        bad = np.flatnonzero((idx < 0) | (idx >= n))
        if bad.size:
            raise OutOfSupportError(
                f"{owner}: x holds atoms outside 0..{n - 1} at rows "
                f"{bad[:5].tolist()} (values {idx[bad[:5]].tolist()})."
            )
        return idx

    def _check_points(self, x: ArrayLike, owner: str) -> FloatArray:
        assert self.bounds is not None
        d = self.bounds.shape[0]
        pts = np.asarray(x, dtype=float)
        check_no_nan(pts, "x", owner)
        if pts.ndim == 1 and d == 1:
            pts = pts[:, None]
        if pts.ndim != 2 or pts.shape[1] != d:
            raise DataMismatchError(
                f"{owner}: x must have shape (n,) or (n, {d}); got {pts.shape}."
            )
        out = np.any((pts < self.bounds[:, 0]) | (pts > self.bounds[:, 1]), axis=1)
        if np.any(out):
            bad = np.flatnonzero(out)
            raise OutOfSupportError(
                f"{owner}: rows {bad[:5].tolist()} lie outside the space "
                f"{self.bounds.tolist()}."
            )
        return pts


def _discrete_weights(A: ArrayLike, n: int, owner: str) -> FloatArray:
    arr = np.asarray(A)
    if arr.dtype == bool:
        if arr.shape != (n,):
            raise ValueError(
                f"{owner}: a boolean mask A must have length N = {n}; got {arr.shape}."
            )
        return arr.astype(float)
    if np.issubdtype(arr.dtype, np.integer):
        idx = arr.ravel()
        if np.any((idx < 0) | (idx >= n)) or np.unique(idx).size != idx.size:
            raise ValueError(
                f"{owner}: index set A must hold distinct atoms in 0..{n - 1}; "
                f"got {idx.tolist()[:10]}."
            )
        w = np.zeros(n)
        w[idx] = 1.0
        return w
    w = np.asarray(arr, dtype=float)
    if w.shape != (n,) or not np.all(np.isfinite(w)) or np.any((w < 0) | (w > 1)):
        raise ValueError(
            f"{owner}: A must be a boolean mask, an index set, or soft weights in [0, 1] of "
            f"length N = {n}; got shape {w.shape}."
        )
    return w


def _lebesgue_boxes(A: ArrayLike, bounds: FloatArray, owner: str) -> FloatArray:
    d = bounds.shape[0]
    arr = np.asarray(A, dtype=float)
    if d == 1 and arr.ndim in (1, 2) and arr.shape[-1] == 2:
        arr = arr.reshape(-1, 1, 2)
    elif arr.ndim == 2 and arr.shape == (d, 2):
        arr = arr[None]
    if arr.ndim != 3 or arr.shape[1:] != (d, 2) or not np.all(np.isfinite(arr)):
        raise ValueError(
            f"{owner}: on a Lebesgue space A must be a union of disjoint sub-boxes of shape "
            f"(k, {d}, 2) (for an interval: (lo, hi) or a list of intervals); got {arr.shape}."
        )
    if np.any(arr[..., 1] < arr[..., 0]) or np.any(arr[..., 0] < bounds[:, 0]) or np.any(
        arr[..., 1] > bounds[:, 1]
    ):
        raise ValueError(
            f"{owner}: every box of A must satisfy lo <= hi and lie in {bounds.tolist()}."
        )
    lo = np.maximum(arr[:, None, :, 0], arr[None, :, :, 0])
    hi = np.minimum(arr[:, None, :, 1], arr[None, :, :, 1])
    overlap = np.prod(np.clip(hi - lo, 0.0, None), axis=2)
    np.fill_diagonal(overlap, 0.0)
    if np.any(overlap > 0):
        raise ValueError(f"{owner}: the boxes of A must be disjoint (they overlap).")
    return arr


def optimal_binary_mechanism(
    eps: float,
    c: float,
    A: ArrayLike,
    space: int | ArrayLike,
    *,
    reduce_eps: bool = False,
) -> BinaryMechanism:
    r"""The binary kernel :math:`K^*` that attains the eps-PML Dobrushin bound.

    For a set A meeting the mass conditions, :math:`K^*` is eps-PML on the c-interior
    and :math:`\mathrm{TV}(PK^*\|QK^*) = \eta_{TV}(\varepsilon)|P(A) - Q(A)|` for all
    P, Q: it is the best one-bit release for separating P and Q through A. O(N) or O(k).

    Parameters
    ----------
    eps : float
        PML level, ``>= 0``. The kernel uses :math:`\bar\varepsilon = \min(\varepsilon,
        \varepsilon^*)`, since above :math:`\varepsilon^*` nothing is gained.
    c : float
        Density floor in ``[0, 1/mu(X)]``; ``c = 0`` gives binary randomised response.
    A : array-like
        Discrete space: a boolean mask of length N, an index set, or soft weights
        :math:`a(x)\in[0,1]` (then :math:`\mu(A) = \sum a`). Interval or box: a union of
        disjoint sub-boxes, shape ``(k, d, 2)`` (an interval accepts ``(lo, hi)`` or a list
        of intervals).
    space : int or array-like
        ``N`` (atoms ``0..N-1``, counting measure), ``(lo, hi)`` or a box
        ``[(lo_1, hi_1), ..., (lo_d, hi_d)]`` (Lebesgue measure).
    reduce_eps : bool, default=False
        If the mass conditions fail at :math:`\bar\varepsilon`, build the kernel at the
        largest admissible level :math:`-\log(c\max\{\mu(A), \mu(A^c)\})` instead of
        raising.

    Returns
    -------
    BinaryMechanism
        The kernel, with ``eps`` the level actually used.

    Raises
    ------
    ValueError
        If ``eps < 0``, ``c`` is outside ``[0, 1/mu(X)]`` or A is malformed.
    MassConditionError
        If :math:`\max\{\mu(A), \mu(A^c)\} > 1/(e^{\bar\varepsilon}c)` and not
        ``reduce_eps``.

    See Also
    --------
    PMLTest : Uses this kernel for a private simple-vs-simple test.
    privinfer.pml.eta_tv : The contraction it attains.

    Notes
    -----
    Grosse et al. (2026), proof of Theorem 3, with :math:`d_c = 1 - c\mu(\mathcal X)`:

    .. math:: K^*(0|x) = \frac{1}{1 + e^\varepsilon d_c}\begin{cases}
              e^\varepsilon(1 - c\,\mu(A)) & x\in A\\ 1 - e^\varepsilon c\,\mu(A) &
              x\in A^c\end{cases},\qquad \mu(A), \mu(A^c)\le\frac{1}{e^\varepsilon c}.

    The mass conditions are exactly :math:`0\le K^*\le 1`. The output-0 leakage is
    :math:`\log\max_x K^*(0|x) / (c\int K^*(0|x)d\mu + d_c\min_x K^*(0|x)) = \varepsilon`
    (the denominator simplifies to :math:`(1 - c\mu(A))/(1 + e^\varepsilon d_c)`), and
    output 1 is the same with A and :math:`A^c` swapped; so the PML is exactly eps when a
    takes both values 0 and 1 (at most eps otherwise). A soft set a gives the same
    algebra with :math:`\mu(A) = \int a\,d\mu` (used for odd N at
    :math:`\varepsilon\ge\varepsilon^*`, where no hard set has :math:`\mu(A) = N/2`).

    Examples
    --------
    >>> from privinfer.pml import pml_epsilon
    >>> mech = optimal_binary_mechanism(1.0, 0.05, [0, 1, 2, 3, 4], 10)
    >>> round(pml_epsilon(mech.kernel, 0.05), 10)
    1.0
    >>> round(mech.eta, 6) == round(eta_tv(1.0, 0.05, 10), 6)
    True
    """
    owner = "optimal_binary_mechanism"
    kind, dim, bounds, measure = _parse_space(space, owner)
    c = _check_c(c, measure, owner)
    eps = _check_eps(eps, owner)
    if kind == "discrete":
        weights = _discrete_weights(A, dim, owner)
        boxes = None
        mass = float(weights.sum())
    else:
        assert bounds is not None
        weights = None
        boxes = _lebesgue_boxes(A, bounds, owner)
        mass = float(np.prod(boxes[..., 1] - boxes[..., 0], axis=1).sum())
    eps_bar = min(eps, eps_star(c, measure))
    if c > 0.0:
        t = max(mass, measure - mass)
        if np.exp(eps_bar) * c * t > 1.0 + _MASS_TOL:
            eps_max = float(-np.log(c * t))
            if not reduce_eps:
                raise MassConditionError(
                    f"{owner}: the mass conditions mu(A), mu(A^c) <= 1/(e^eps c) fail: mu(A) = "
                    f"{mass:.6g}, mu(A^c) = {measure - mass:.6g}, 1/(e^eps c) = "
                    f"{1.0 / (np.exp(eps_bar) * c):.6g} at eps_bar = min(eps, eps*) = "
                    f"{eps_bar:.6g}. This A admits eps <= {eps_max:.6g}; choose A with "
                    "mu(A) closer to mu(X)/2 or pass reduce_eps=True."
                )
            eps_bar = eps_max
    dc = 1.0 - c * measure
    em = float(np.exp(-eps_bar))
    eta = float(min(1.0, -np.expm1(-eps_bar) / (em + dc))) if eps_bar > 0 else 0.0
    base = float(max(0.0, (em - c * mass) / (em + dc)))
    return BinaryMechanism(
        eps=float(eps_bar),
        eps_requested=float(eps),
        c=c,
        measure=measure,
        mass=mass,
        eta=eta,
        base=base,
        kind=kind,
        weights=None if weights is None else _ro(weights),
        boxes=None if boxes is None else _ro(boxes),
        bounds=None if bounds is None else _ro(bounds),
    )


# =============================================================================== PMLTest


def _check_sample_sizes(n: ArrayLike, owner: str) -> IntArray:
    """Validate sample sizes: whole numbers >= 1 (a scalar or an array of them)."""
    raw = np.asarray(n)
    arr = raw.astype(float) if raw.dtype.kind in "iuf" else np.array(np.nan)
    if arr.size == 0 or not np.all(np.isfinite(arr) & (arr >= 1) & (arr == np.round(arr))):
        raise ValueError(
            f"The 'n' parameter of {owner} must be a number of observations: a whole number "
            f">= 1, or an array of them. Got {n!r} instead."
        )
    return arr.astype(np.int64)


@dataclass(frozen=True)
class BitTestPlan:
    r"""An exact one-sided binomial test on privatised bits: size, power and sample size.

    Under :math:`H_0` the counted label has probability ``null_prob``, under
    :math:`H_1` ``alt_prob > null_prob``; :math:`|{\rm alt} - {\rm null}| =
    \mathrm{TV}(PK\|QK)`.

    Attributes
    ----------
    label : str
        ``"PML (c-interior)"``, ``"LDP (c = 0)"`` or ``"non-private"``.
    eps : float
        PML level used (``inf`` for non-private).
    c : float
        Density floor.
    eta_tv : float
        Contraction of the bit release.
    set_gap : float
        :math:`|P(A) - Q(A)|` of the chosen (soft) set.
    tv_pq : float
        :math:`\mathrm{TV}(P\|Q)` of the inputs.
    null_prob, alt_prob : float
        Probability of the counted label under P and under Q.

    Examples
    --------
    A :class:`PMLTest` plans its PML test and, for comparison, the LDP and non-private
    ones:

    >>> t = PMLTest([0.3, 0.3, 0.2, 0.2], [0.2, 0.2, 0.3, 0.3], eps=1.0, c=0.15)
    >>> [plan.label for plan in t.plans]
    ['PML (c-interior)', 'LDP (c = 0)', 'non-private']
    >>> plan = t.plans[0]
    >>> round(plan.tv_bits, 4), round(plan.eta_tv * plan.set_gap, 4)  # TV(PK, QK)
    (0.1646, 0.1646)
    >>> bool(plan.size(1000) <= 0.05), plan.power([100, 1000]).round(3).tolist()
    (True, [0.941, 1.0])
    >>> plan.n_exact(), [p.n_exact() for p in t.plans[1:]]  # LDP needs more people
    (56.0, [191.0, 42.0])
    """

    label: str
    eps: float
    c: float
    eta_tv: float
    set_gap: float
    tv_pq: float
    null_prob: float
    alt_prob: float

    @property
    def tv_bits(self) -> float:
        r""":math:`\mathrm{TV}(PK\|QK) = \eta_{TV}|P(A) - Q(A)|`."""
        return abs(self.alt_prob - self.null_prob)

    def critical_value(self, n: ArrayLike, alpha: float) -> IntArray:
        """Reject when the count exceeds this value (exact level-``alpha`` test)."""
        return np.asarray(stats.binom.isf(alpha, np.asarray(n), self.null_prob)).astype(np.int64)

    def power(self, n: ArrayLike, alpha: float = 0.05) -> FloatArray:
        """Exact power against Q of the level-``alpha`` test with ``n`` bits (vectorised)."""
        n_arr = _check_sample_sizes(n, "BitTestPlan.power")
        return np.asarray(stats.binom.sf(self.critical_value(n_arr, alpha), n_arr, self.alt_prob))

    def size(self, n: ArrayLike, alpha: float = 0.05) -> FloatArray:
        """Exact size (never above ``alpha``)."""
        n_arr = _check_sample_sizes(n, "BitTestPlan.size")
        return np.asarray(stats.binom.sf(self.critical_value(n_arr, alpha), n_arr, self.null_prob))

    def n_bound(self, zeta: float = 0.05) -> float:
        r"""Sample size :math:`8\log(1/\zeta)/(\eta_{TV}^2\mathrm{TV}^2)`.

        Grosse et al. (2026), Proposition 1.
        """
        denom = (self.eta_tv * self.tv_pq) ** 2
        if denom == 0:
            return float("inf")
        with np.errstate(over="ignore"):  # a denormal denominator: the bound is +inf
            return float(8.0 * np.log(1.0 / zeta) / denom)

    def n_exact(self, alpha: float = 0.05, power: float = 0.8, n_max: int = 2**24) -> float:
        """Smallest n (searched) at which the exact level-``alpha`` test reaches ``power``."""
        if self.tv_bits <= 0:
            return float("inf")
        hi = 8
        while hi <= n_max and float(self.power(hi, alpha)) < power:
            hi *= 2
        if hi > n_max:
            return float("inf")
        lo = max(1, hi // 2)
        if hi - lo <= 2**20:
            grid = np.arange(lo, hi + 1)
            ok = np.flatnonzero(self.power(grid, alpha) >= power)
            return float(grid[ok[0]])
        while hi - lo > 1:  # power is not monotone in n (lattice effects): bisection
            mid = (lo + hi) // 2
            if float(self.power(mid, alpha)) >= power:
                hi = mid
            else:
                lo = mid
        return float(hi)


@dataclass(frozen=True)
class PMLTestResult(PostEstimationMixin):
    r"""Outcome of :meth:`PMLTest.test` on released bits.

    Holds no raw data: only the count of the label favoured by Q among the released bits.
    Besides the test it estimates the one parameter the bits identify, the mass
    :math:`m = E\,a(X)` that the data distribution puts on the test set A (``mass_A``;
    :math:`P(A)` under :math:`H_0`, :math:`Q(A)` under :math:`H_1`), following the
    conventions of :class:`~privinfer.PrivateResults`: ``params``, ``bse``, ``cov``,
    ``conf_int``, ``summary()`` (a statsmodels Summary), ``t_test``, ``save`` / ``load``.

    Attributes
    ----------
    statistic : int
        Count of released bits equal to ``counted_label``.
    n_obs : int
        Number of released bits.
    counted_label : int
        The bit value more likely under Q.
    p_value : float
        Exact one-sided binomial p-value (``scipy.stats.binomtest``).
    alpha : float
        Significance level.
    reject : bool
        ``p_value <= alpha``: reject :math:`H_0: X\sim P`.
    power : float
        Exact power against Q at ``n_obs`` and ``alpha``.
    plans : tuple of BitTestPlan
        PML, LDP (c = 0) and non-private plans, first one the test that was run.
    zeta : float
        Error probability of the sample-size bound.
    target_power : float
        Power targeted by the exact sample size.
    null_mass, alt_mass : float
        :math:`P(A)` and :math:`Q(A)` of the (soft) test set.

    Notes
    -----
    The counted label has probability :math:`\pi = \pi_0 + (\pi_1 - \pi_0)
    (m - P(A))/(Q(A) - P(A))`, linear in :math:`m` with slope :math:`\pm\eta_{TV}`, so
    :math:`\hat m = P(A) + (\hat\pi - \pi_0)(Q(A) - P(A))/(\pi_1 - \pi_0)` is unbiased
    with standard error :math:`\sqrt{\max\{\hat\pi(1 - \hat\pi), v\}/n}/\eta_{TV}`. The
    floor :math:`v` (:meth:`min_bit_variance`) is the smallest :math:`\pi(1-\pi)` over
    :math:`m \in [0, 1]`: the true variance cannot be smaller, and the floor keeps the SE
    positive when all bits are equal (then :math:`\hat m` leaves [0, 1], which
    :meth:`PMLTest.test` reports with an :class:`~privinfer.exceptions.OutsideBoundsWarning`;
    the estimate is not clipped, as clipping would bias it). ``tvalues``
    is the z statistic :math:`(\hat m - P(A))/\mathrm{se}` and ``pvalues`` the exact
    one-sided binomial p-value of the test.

    Examples
    --------
    >>> t = PMLTest([0.3, 0.3, 0.2, 0.2], [0.2, 0.2, 0.3, 0.3], eps=1.0, c=0.15)
    >>> x = np.random.default_rng(0).choice(4, size=2000, p=[0.2, 0.2, 0.3, 0.3])  # from Q
    >>> res = t.test(t.privatize(x, random_state=1))
    >>> res.n_obs, res.counted_label, res.reject, bool(res.p_value < 1e-10)
    (2000, 1, True, True)
    >>> res.comparison_frame().index.tolist()
    ['PML (c-interior)', 'LDP (c = 0)', 'non-private']
    >>> "reject H0" in str(res.summary())
    True
    >>> m = float(res.params["mass_A"])  # the data come from Q: m is near Q(A), not P(A)
    >>> abs(m - res.alt_mass) < 2 * float(res.bse["mass_A"]) < abs(m - res.null_mass)
    True
    """

    statistic: int
    n_obs: int
    counted_label: int
    p_value: float
    alpha: float
    reject: bool
    power: float
    plans: tuple[BitTestPlan, ...]
    zeta: float = 0.05
    target_power: float = 0.8
    null_mass: float = float("nan")
    alt_mass: float = float("nan")

    def comparison_frame(self) -> pd.DataFrame:
        """Side-by-side power and sample sizes for PML, LDP and non-private tests."""
        return _plans_frame(self.plans, self.n_obs, self.alpha, self.zeta, self.target_power)

    # -- PrivateResults conventions ----------------------------------------------------
    @property
    def model(self) -> str:
        """``"PMLTest"`` (a ``str`` carrying statsmodels' ``endog_names``)."""
        return ModelLabel("PMLTest", "bit", ["mass_A"])

    @property
    def nobs(self) -> int:
        """Number of released bits (statsmodels' name for :attr:`n_obs`)."""
        return self.n_obs

    @property
    def _df_resid(self) -> float:
        return float(self.n_obs - 1)

    def _slope(self) -> float:
        """Slope dm/dpi = (Q(A) - P(A)) / (pi_1 - pi_0), i.e. +-1/eta_TV."""
        plan = self.plans[0]
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(np.float64(self.alt_mass - self.null_mass)
                         / np.float64(plan.alt_prob - plan.null_prob))

    @property
    def params(self) -> pd.Series:
        """Unbiased estimate of the mass of the test set A under the data distribution."""
        pi_hat = self.statistic / self.n_obs
        m = self.null_mass + (pi_hat - self.plans[0].null_prob) * self._slope()
        return pd.Series({"mass_A": m})

    def min_bit_variance(self) -> float:
        r"""Smallest variance :math:`\pi(1-\pi)` of the counted bit over :math:`m \in [0, 1]`.

        :math:`\pi` is linear in :math:`m` and :math:`\pi(1-\pi)` is concave, so the
        minimum is at :math:`m = 0` or :math:`m = 1`, i.e. at the mechanism's extreme
        bit probabilities :math:`\beta` and :math:`\beta + \eta_{TV}` (or one minus
        them); it is positive unless the kernel is deterministic somewhere.
        """
        pi0 = self.plans[0].null_prob
        ends = np.array([pi0 + (m - self.null_mass) / self._slope() for m in (0.0, 1.0)])
        ends = np.clip(ends, 0.0, 1.0)
        return float(np.min(ends * (1.0 - ends)))

    @property
    def bse(self) -> pd.Series:
        """Standard error of ``mass_A`` (bit variance floored at :meth:`min_bit_variance`)."""
        pi_hat = self.statistic / self.n_obs
        var = max(pi_hat * (1 - pi_hat), self.min_bit_variance())
        return pd.Series({"mass_A": np.sqrt(var / self.n_obs) * abs(self._slope())})

    @property
    def std_errors(self) -> pd.Series:
        """Alias of :attr:`bse` (linearmodels' name)."""
        return self.bse

    @property
    def cov(self) -> pd.DataFrame:
        """1 x 1 covariance of ``mass_A``."""
        return pd.DataFrame([[float(self.bse.iloc[0]) ** 2]], index=["mass_A"],
                            columns=["mass_A"])

    @property
    def tvalues(self) -> pd.Series:
        """Z statistic of ``mass_A`` against its null value :math:`P(A)`."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return (self.params - self.null_mass) / self.bse

    @property
    def pvalues(self) -> pd.Series:
        """The exact one-sided binomial p-value of the test."""
        return pd.Series({"mass_A": self.p_value})

    def conf_int(self, alpha: float = 0.05, method: Literal["normal", "exact"] = "normal"
                 ) -> pd.DataFrame:
        r"""Confidence interval for ``mass_A``; ``alpha`` is the significance level.

        Parameters
        ----------
        alpha : float, default=0.05
            Significance level.
        method : {"normal", "exact"}, default="normal"
            Estimate :math:`\pm z_{1-\alpha/2}` SE, or the Clopper-Pearson interval of
            the counted label's probability mapped through the linear map to ``mass_A``.

        Returns
        -------
        pandas.DataFrame
            Columns ``lower`` and ``upper``.
        """
        alpha = check_level(alpha, "PMLTestResult.conf_int")
        est = float(self.params.iloc[0])
        if method == "normal":
            half = float(stats.norm.ppf(1 - alpha / 2)) * float(self.bse.iloc[0])
            lo, hi = est - half, est + half
        elif method == "exact":
            k, n = self.statistic, self.n_obs
            p_lo = float(stats.beta.ppf(alpha / 2, k, n - k + 1)) if k > 0 else 0.0
            p_hi = float(stats.beta.ppf(1 - alpha / 2, k + 1, n - k)) if k < n else 1.0
            ends = [self.null_mass + (p - self.plans[0].null_prob) * self._slope()
                    for p in (p_lo, p_hi)]
            lo, hi = min(ends), max(ends)
        else:
            raise ValueError(
                "The 'method' parameter of PMLTestResult.conf_int must be 'normal' or "
                f"'exact'. Got {method!r} instead."
            )
        return pd.DataFrame({"lower": [lo], "upper": [hi]}, index=["mass_A"])

    def summary(self, alpha: float | None = None) -> Summary:
        """A statsmodels :class:`~statsmodels.iolib.summary.Summary` (text, LaTeX, HTML).

        Test facts left, privacy facts right; the estimated mass of the test set; the
        PML, LDP and non-private plans side by side. It returns and never prints.

        Parameters
        ----------
        alpha : float, optional
            Significance level of the interval (default: the level of the test).
        """
        level = self.alpha if alpha is None else check_level(alpha, "PMLTestResult.summary")
        plan = self.plans[0]
        left = [
            ("Test:", "H0: X ~ P vs H1: X ~ Q"),
            ("No. Observations:", str(self.n_obs)),
            ("Counted label:", str(self.counted_label)),
            ("Statistic (count):", str(self.statistic)),
            ("P-value (exact):", f"{self.p_value:.4g}"),
            ("Level (alpha):", f"{self.alpha:.4g}"),
            ("Decision:", "reject H0" if self.reject else "keep H0"),
        ]
        right = [
            ("PML eps (used):", f"{plan.eps:.4g}"),
            ("Density floor c:", f"{plan.c:.4g}"),
            ("eta_TV:", f"{plan.eta_tv:.4f}"),
            ("TV(P, Q):", f"{plan.tv_pq:.4f}"),
            ("|P(A) - Q(A)|:", f"{plan.set_gap:.4f}"),
            ("TV(PK*, QK*):", f"{plan.tv_bits:.4f}"),
            ("Power vs Q:", f"{self.power:.4f}"),
        ]
        top = SimpleTable([list(r) for r in left], title="PMLTest Results",
                          txt_fmt={"colwidths": 16})
        top.extend_right(SimpleTable([list(r) for r in right]))
        smry = Summary()
        smry.tables.append(top)
        ci = self.conf_int(level)
        row = [float(self.params.iloc[0]), float(self.bse.iloc[0]), float(self.tvalues.iloc[0]),
               self.p_value, float(ci["lower"].iloc[0]), float(ci["upper"].iloc[0]),
               self.null_mass, self.alt_mass]
        smry.tables.append(SimpleTable(
            [[f"{v:.4f}" for v in row]],
            headers=["coef", "std err", "z vs P(A)", "P-value", f"[{level / 2:g}",
                     f"{1 - level / 2:g}]", "P(A)", "Q(A)"],
            stubs=["mass_A"]))
        frame = self.comparison_frame()
        smry.tables.append(SimpleTable(
            [[f"{v:.4g}" for v in r] for r in frame.to_numpy()],
            headers=list(frame.columns), stubs=list(frame.index), title="Plans"))
        smry.add_extra_txt([
            "Exact one-sided binomial test on one bit per person released through the "
            "optimal binary eps-PML mechanism K* (Grosse, Saeidian, Oechtering and Skoglund "
            "2026, Theorem 3).",
            f"n_bound = 8 log(1/zeta) / (eta_TV^2 TV^2) with zeta = {self.zeta}; n_exact = "
            f"smallest n with power >= {self.target_power}.",
        ])
        return smry

    def __str__(self) -> str:
        return str(self.summary())

    def __repr__(self) -> str:
        """One line, as :class:`~privinfer.PrivateResults`: the estimate and the test's verdict.

        Examples
        --------
        >>> t = PMLTest([0.3, 0.3, 0.2, 0.2], [0.2, 0.2, 0.3, 0.3], eps=1.0, c=0.15)
        >>> x = np.random.default_rng(0).choice(4, size=2000, p=[0.2, 0.2, 0.3, 0.3])
        >>> repr(t.test(t.privatize(x, random_state=1))).startswith("<PMLTest results: mass_A=")
        True
        """
        verdict = "reject H0" if self.reject else "keep H0"
        return (
            f"<PMLTest results: mass_A={float(self.params.iloc[0]):.4g}, "
            f"p_value={self.p_value:.3g}, {verdict}>"
        )

    def _repr_html_(self) -> str:
        return self.summary().as_html()


def _plans_frame(
    plans: tuple[BitTestPlan, ...], n: int, alpha: float, zeta: float, power: float
) -> pd.DataFrame:
    rows: dict[str, dict[str, Any]] = {}
    for plan in plans:
        rows[plan.label] = {
            "eps": plan.eps,
            "eta_TV": plan.eta_tv,
            "TV(bits)": plan.tv_bits,
            f"power(n={n})": float(plan.power(n, alpha)),
            "n_bound": plan.n_bound(zeta),
            "n_exact": plan.n_exact(alpha, power),
        }
    return pd.DataFrame.from_dict(rows, orient="index")


def _warn_outside_unit(res: PMLTestResult) -> None:
    """Warn when the estimate of ``mass_A`` leaves [0, 1] or its SE is zero."""
    m, se = float(res.params.iloc[0]), float(res.bse.iloc[0])
    if 0.0 <= m <= 1.0 and se > 0:
        return
    what = (
        "lies outside [0, 1]: the share of the counted label is outside the range the "
        "mechanism can produce. It is left unclipped (clipping biases it) and its standard "
        "error uses the mechanism's smallest bit variance"
        if not 0.0 <= m <= 1.0
        else "has a zero standard error: all released bits are equal and the mechanism's "
        "bit variance has no positive floor"
    )
    warnings.warn(
        f"PMLTest.test: the estimate of mass_A ({m:.4f} from {res.n_obs} released bits, "
        f"{res.statistic} counted) {what}. The exact test itself stays valid; for the mass read "
        "conf_int(method='exact') (Clopper-Pearson) or release more bits.",
        OutsideBoundsWarning,
        stacklevel=3,
    )


def _is_scipy_continuous(obj: object) -> bool:
    return hasattr(obj, "pdf") and hasattr(obj, "cdf")


class PMLTest:
    r"""Private simple-vs-simple test of P against Q under eps-PML on the c-interior.

    Each data holder releases one bit through :math:`K^*` (:func:`optimal_binary_mechanism`)
    for a set A chosen to maximise :math:`\eta_{TV}(\varepsilon_A)|P(A) - Q(A)|`; the
    analyst runs an exact binomial test. Use it when P and Q have pmfs/densities bounded
    below by c: above :math:`\varepsilon^*` the test is as powerful as the non-private
    set test ("privacy for free"). Construction O(N log N) (or O(G log G) on a grid).

    Parameters
    ----------
    p, q : array-like or scipy frozen continuous distribution
        Pmfs on atoms ``0..N-1`` (counting measure), or densities on a bounded interval.
    eps : float
        PML level, ``>= 0``.
    c : float
        Density floor; P and Q must be in the c-interior (``p, q >= c``).
    bounds : (float, float), optional
        The interval for densities (default: the distributions' common finite support).
    alpha : float, default=0.05
        Significance level of the test.
    grid_size : int, default=4096
        Cells of the grid on which the level set of p - q is found (densities only).

    Raises
    ------
    TypeError
        ``p`` or ``q`` is neither an array of numbers nor a frozen continuous scipy
        distribution (e.g. a frozen discrete one such as ``stats.poisson(3)``).
    ValueError
        Bad ``eps``, ``c``, pmfs or bounds; P equal to Q.
    NotInInteriorError
        P or Q below the floor c (the message names the violating points).

    See Also
    --------
    optimal_binary_mechanism : The release kernel.
    privinfer.pml.eta_tv : The contraction that sets the power.

    Notes
    -----
    Grosse et al. (2026), §VI-A: with :math:`\bar\varepsilon = \min(\varepsilon, \varepsilon^*)` and
    A feasible, :math:`\mathrm{TV}(PK^*\|QK^*) = \eta_{TV}(\bar\varepsilon)|P(A) - Q(A)|`,
    and :math:`n \ge 8\log(1/\zeta)/(\eta_{TV}^2\mathrm{TV}^2(P\|Q))` samples suffice
    (Proposition 1). **Choice of A.** Candidates are the top-k sets of p - q (on a grid
    of ``grid_size`` equal cells for densities: a level set of the cell-averaged p - q),
    plus, for odd N, the soft set with weight 1/2 on the median atom (mass N/2). Each
    candidate uses the largest admissible level :math:`\varepsilon_A = \min\{\varepsilon,
    \varepsilon^*, -\log(c\max\{\mu(A),\mu(A^c)\})\}`; we keep the one maximising
    :math:`\eta_{TV}(\varepsilon_A)|P(A) - Q(A)|`. This contains the seed's rule (best
    top-k over the k feasible at :math:`\bar\varepsilon`) and is never worse. For
    densities :math:`P(A), Q(A)` are exact (CDF differences on the chosen cells);
    :math:`\mathrm{TV}(P\|Q)` and the floor check use the grid.

    Examples
    --------
    >>> import numpy as np
    >>> t = PMLTest([0.3, 0.3, 0.2, 0.2], [0.2, 0.2, 0.3, 0.3], eps=1.0, c=0.15)
    >>> rng = np.random.default_rng(0)
    >>> x = rng.choice(4, size=2000, p=[0.2, 0.2, 0.3, 0.3])   # data from Q
    >>> res = t.test(t.privatize(x, random_state=1))            # analyst side
    >>> bool(res.reject)
    True
    """

    def __init__(
        self,
        p: ArrayLike | Any,
        q: ArrayLike | Any,
        *,
        eps: float,
        c: float,
        bounds: tuple[float, float] | None = None,
        alpha: float = 0.05,
        grid_size: int = 4096,
    ) -> None:
        owner = "PMLTest"
        self.eps = _check_eps(eps, owner)
        self.alpha = check_level(alpha, owner)
        continuous = _is_scipy_continuous(p) or _is_scipy_continuous(q)
        if continuous:
            diff, w, masses_p, masses_q, space = self._grid(p, q, c, bounds, grid_size)
        else:
            pa, qa = self._pmfs(p, q)
            space = pa.size
            diff, w, masses_p, masses_q = pa - qa, np.ones(pa.size), pa, qa
        self.c = _check_c(c, float(np.sum(w)), owner)
        self._check_interior(masses_p, masses_q, w, continuous)
        self.space = space
        self.tv_pq = float(0.5 * np.abs(diff).sum())
        if self.tv_pq <= 1e-12:
            raise ValueError(f"{owner}: P and Q coincide (TV = 0); there is nothing to test.")
        self._masses = (masses_p, masses_q)
        self.mechanism, self._set_weights = self._choose(diff, w, self.eps, self.c, space)
        ldp, ldp_weights = self._choose(diff, w, self.eps, 0.0, space)
        scheffe = diff > 0
        sp, sq = float(masses_p[scheffe].sum()), float(masses_q[scheffe].sum())
        # the non-private test counts raw records outside the Scheffe set {p > q}
        self.plans = (
            self._plan("PML (c-interior)", self.mechanism, self._set_weights),
            self._plan("LDP (c = 0)", ldp, ldp_weights),
            BitTestPlan("non-private", float("inf"), self.c, 1.0, sp - sq, self.tv_pq,
                        1.0 - sp, 1.0 - sq),
        )

    # ------------------------------------------------------------- construction helpers
    @staticmethod
    def _as_pmf(v: Any, name: str) -> FloatArray:
        """``v`` as a float array, or a TypeError saying what PMLTest accepts."""
        hint = (
            f" {name} is a frozen discrete scipy distribution ({v.dist.name}): pass its pmf on "
            f"a finite set of atoms instead, e.g. {name}.pmf(np.arange(N)) renormalised to "
            "sum to 1 (the c-interior needs a finite space)."
            if hasattr(v, "pmf") and hasattr(v, "dist")
            else ""
        )
        try:
            arr = np.asarray(v, dtype=float)
        except (TypeError, ValueError) as err:
            raise TypeError(
                f"PMLTest: {name} must be a pmf on atoms 0..N-1 (a 1-D array of numbers) or a "
                f"frozen continuous scipy distribution on a bounded interval; got "
                f"{type(v).__name__}.{hint}"
            ) from err
        return arr

    @staticmethod
    def _pmfs(p: ArrayLike, q: ArrayLike) -> tuple[FloatArray, FloatArray]:
        pa = PMLTest._as_pmf(p, "p")
        qa = PMLTest._as_pmf(q, "q")
        for name, v in (("p", pa), ("q", qa)):
            if v.ndim != 1 or v.size < 2 or not np.all(np.isfinite(v)) or np.any(v < 0) or (
                abs(v.sum() - 1.0) > _PMF_TOL
            ):
                raise ValueError(
                    f"PMLTest: {name} must be a pmf (1-D, at least 2 atoms, non-negative, "
                    f"summing to 1); got {v!r}."
                )
        if pa.shape != qa.shape:
            raise ValueError(f"PMLTest: p and q must have equal length; got {pa.size}, {qa.size}.")
        return pa, qa

    @staticmethod
    def _grid(
        p: Any, q: Any, c: float, bounds: tuple[float, float] | None, grid_size: int
    ) -> tuple[FloatArray, FloatArray, FloatArray, FloatArray, tuple[float, float]]:
        owner = "PMLTest"
        for name, d in (("p", p), ("q", q)):
            if not _is_scipy_continuous(d):
                raise ValueError(
                    f"PMLTest: {name} must be a frozen scipy distribution like the other."
                )
        g = check_int(grid_size, "grid_size", owner, 16)
        g += g % 2  # even: the half-mass set is a union of cells
        if bounds is None:
            sup = np.array([p.support(), q.support()], dtype=float)
            lo, hi = float(sup[:, 0].max()), float(sup[:, 1].min())
        else:
            lo, hi = (float(v) for v in bounds)
        if not (np.isfinite(lo) and np.isfinite(hi) and lo < hi):
            raise ValueError(
                f"PMLTest: densities need a bounded interval; got bounds ({lo}, {hi}). Pass "
                "bounds=(lo, hi)."
            )
        for name, d in (("p", p), ("q", q)):
            inside = float(d.cdf(hi) - d.cdf(lo))
            if abs(inside - 1.0) > 1e-6:
                raise ValueError(
                    f"PMLTest: {name} puts mass {1 - inside:.3g} outside [{lo}, {hi}]; a density "
                    "on the c-interior must live on the bounded interval."
                )
        edges = np.linspace(lo, hi, g + 1)
        mp = np.diff(p.cdf(edges))
        mq = np.diff(q.cdf(edges))
        mp, mq = mp / mp.sum(), mq / mq.sum()
        w = np.diff(edges)
        # density floor check on edges and midpoints
        pts = np.concatenate([edges, 0.5 * (edges[1:] + edges[:-1])])
        PMLTest._check_density_floor(p, q, pts, c, lo, hi)
        return mp - mq, w, mp, mq, (lo, hi)

    @staticmethod
    def _check_density_floor(p: Any, q: Any, pts: FloatArray, c: object, lo: float,
                             hi: float) -> None:
        cc = _check_c(c, hi - lo, "PMLTest")
        for name, d in (("P", p), ("Q", q)):
            dens = np.asarray(d.pdf(pts), dtype=float)
            bad = np.flatnonzero(dens < cc * (1 - 1e-12))
            if bad.size:
                order = bad[np.argsort(pts[bad])][:5]
                raise NotInInteriorError(
                    f"PMLTest: {name} is not in the c-interior: its density is below c = {cc:.6g} "
                    f"at x = {np.round(pts[order], 6).tolist()} (density "
                    f"{np.round(dens[order], 6).tolist()}; {bad.size} grid points in all)."
                )

    def _check_interior(self, mp: FloatArray, mq: FloatArray, w: FloatArray,
                        continuous: bool) -> None:
        if continuous:
            return
        for name, v in (("P", mp), ("Q", mq)):
            bad = np.flatnonzero(v < self.c * w - _PMF_TOL)
            if bad.size:
                raise NotInInteriorError(
                    f"PMLTest: {name} is not in the c-interior: {name}(x) < c = {self.c:.6g} at "
                    f"atoms x = {bad[:10].tolist()} (values {np.round(v[bad[:10]], 6).tolist()})."
                )

    @staticmethod
    def _choose(
        diff: FloatArray, w: FloatArray, eps: float, c: float, space: Any
    ) -> tuple[BinaryMechanism, FloatArray]:
        n_cells = diff.size
        order = np.argsort(-diff, kind="stable")
        gains = np.concatenate([[0.0], np.cumsum(diff[order])])
        masses = np.concatenate([[0.0], np.cumsum(w[order])])
        total = masses[-1]
        cand_gain = np.abs(gains)
        cand_mass = masses.copy()
        soft = None
        if isinstance(space, Integral) and n_cells % 2 == 1:
            k = n_cells // 2
            soft = float(abs(gains[k] + 0.5 * diff[order[k]]))
            cand_gain = np.append(cand_gain, soft)
            cand_mass = np.append(cand_mass, total / 2.0)
        e_star = eps_star(c, total)
        eps_c = np.full(cand_mass.shape, min(eps, e_star))
        if c > 0:
            t = np.maximum(cand_mass, total - cand_mass)
            with np.errstate(divide="ignore"):  # t may be 0: no constraint (log -> -inf)
                eps_c = np.minimum(eps_c, -np.log(c) - np.log(t))
        eta = np.array([eta_tv(max(e, 0.0), c, total) for e in eps_c])
        best = int(np.argmax(eta * cand_gain))
        a = np.zeros(n_cells)
        if best == n_cells + 1:  # the soft candidate
            a[order[: n_cells // 2]] = 1.0
            a[order[n_cells // 2]] = 0.5
        else:
            a[order[:best]] = 1.0
        if isinstance(space, Integral):
            return optimal_binary_mechanism(eps, c, a, int(space), reduce_eps=True), a
        lo, hi = space
        edges = np.linspace(lo, hi, n_cells + 1)
        sel = a > 0
        # merge runs of selected cells into intervals
        padded = np.concatenate([[False], sel, [False]]).astype(np.int8)
        starts = np.flatnonzero(np.diff(padded) == 1)
        ends = np.flatnonzero(np.diff(padded) == -1)
        boxes = np.column_stack([edges[starts], edges[ends]]).reshape(-1, 1, 2)
        if boxes.shape[0] == 0:
            boxes = np.array([[[lo, lo]]])
        return optimal_binary_mechanism(eps, c, boxes, (lo, hi), reduce_eps=True), a

    def _plan(self, label: str, mech: BinaryMechanism, a: FloatArray) -> BitTestPlan:
        mp, mq = self._masses
        pa, qa = float(mp @ a), float(mq @ a)
        pi0 = mech.base + mech.eta * pa
        pi1 = mech.base + mech.eta * qa
        if pi1 < pi0:  # count the bit "1" instead, whose probability is larger under Q
            pi0, pi1 = 1.0 - pi0, 1.0 - pi1
        return BitTestPlan(label, mech.eps, mech.c, mech.eta, abs(pa - qa), self.tv_pq,
                           float(pi0), float(pi1))

    # ------------------------------------------------------------------ public API
    @property
    def counted_label(self) -> int:
        """The bit value that the statistic counts (the one more likely under Q)."""
        mp, mq = self._masses
        a = self._set_weights
        return 0 if float(mq @ a) >= float(mp @ a) else 1

    def privatize(self, x: ArrayLike, random_state: RandomStateLike = None) -> IntArray | pd.Series:
        """Data-holder side: release one bit per record through :math:`K^*`, in order.

        Delegates to :meth:`BinaryMechanism.privatize` of :attr:`mechanism`, which keeps
        the positions of ``x`` and so refuses an order or an index that would reveal the
        values; :meth:`release` publishes bits next to public columns, shuffled.

        Parameters
        ----------
        x : array-like or pandas.Series
            Atoms ``0..N-1`` or points of the interval, in an order unrelated to them.
        random_state : None, int, SeedSequence or Generator, default=None
            ``None`` draws fresh OS entropy.

        Returns
        -------
        ndarray of int or pandas.Series
            The released bits (a Series keeps the name, with a fresh ``RangeIndex``).

        Raises
        ------
        RowOrderError
            The order of ``x`` reveals its values (e.g. sorted), or ``x`` has an index
            other than the default ``RangeIndex``.
        """
        return self.mechanism._privatize(x, random_state, "PMLTest.privatize")

    def release(
        self,
        data: Any,
        private: str,
        *,
        public: Sequence[str] | None = None,
        shuffle: bool = True,
        random_state: RandomStateLike = None,
    ) -> pd.DataFrame:
        """Data-holder side: a shuffled frame of bits and declared public columns.

        Releases the column ``private`` of ``data`` through :math:`K^*` with
        :meth:`BinaryMechanism.release` of :attr:`mechanism` (same parameters and
        rules): the bit column keeps the private column's name, undeclared columns are
        dropped with a warning, and the rows go out in a fresh random order with a fresh
        ``RangeIndex``. :meth:`test` takes the bit column.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> t = PMLTest([0.4, 0.3, 0.2, 0.1], [0.1, 0.2, 0.3, 0.4], eps=1.0, c=0.05)
        >>> raw = pd.DataFrame({"grade": np.sort(np.random.default_rng(0).choice(
        ...     4, 500, p=[0.1, 0.2, 0.3, 0.4]))})
        >>> released = t.release(raw, "grade", random_state=1)
        >>> bool(t.test(released["grade"]).reject)
        True
        """
        return self.mechanism._release(
            data, private, public=public, name=None, shuffle=shuffle,
            random_state=random_state, owner="PMLTest.release",
        )

    def test(self, released: ArrayLike, *, alpha: float | None = None, zeta: float = 0.05,
             power: float = 0.8) -> PMLTestResult:
        """Analyst side: exact binomial test on released bits.

        Parameters
        ----------
        released : array-like or pandas.Series of {0, 1}
            Bits released by :meth:`privatize` (e.g. a DataFrame column).
        alpha : float, optional
            Level; defaults to the one given at construction.
        zeta : float, default=0.05
            Error probability in the sample-size bound.
        power : float, default=0.8
            Target power for the exact sample size.

        Returns
        -------
        PMLTestResult
        """
        alpha = self.alpha if alpha is None else check_level(alpha, "PMLTest.test")
        bits = np.asarray(released)
        check_no_nan(bits, "released", "PMLTest.test")
        if bits.ndim != 1 or bits.size == 0 or not np.all(np.isin(bits, (0, 1))):
            raise DataMismatchError(
                "PMLTest.test: released must be a non-empty 1-D array of bits in {0, 1}."
            )
        label = self.counted_label
        n = int(bits.size)
        stat = int(np.sum(bits == label))
        plan = self.plans[0]
        pval = float(stats.binomtest(stat, n, plan.null_prob, alternative="greater").pvalue)
        mp, mq = self._masses
        res = PMLTestResult(
            statistic=stat, n_obs=n, counted_label=label, p_value=pval, alpha=alpha,
            reject=bool(pval <= alpha), power=float(plan.power(n, alpha)), plans=self.plans,
            zeta=zeta, target_power=power, null_mass=float(mp @ self._set_weights),
            alt_mass=float(mq @ self._set_weights),
        )
        _warn_outside_unit(res)
        return res

    def compare(self, n: int, *, alpha: float | None = None, zeta: float = 0.05,
                power: float = 0.8) -> pd.DataFrame:
        """Planning table: power at ``n`` and sample sizes for PML, LDP and non-private tests."""
        n = check_int(n, "n", "PMLTest.compare", 1)
        alpha = self.alpha if alpha is None else check_level(alpha, "PMLTest.compare")
        return _plans_frame(self.plans, n, alpha, zeta, power)

    def power(self, n: ArrayLike, *, alpha: float | None = None) -> FloatArray:
        """Exact power against Q of the private test with ``n`` observations (vectorised).

        Parameters
        ----------
        n : int or array-like of int
            Numbers of released bits, whole numbers ``>= 1``.
        alpha : float, optional
            Level; defaults to the one given at construction.

        Raises
        ------
        ValueError
            ``n`` is not a whole number ``>= 1`` (e.g. ``100.5``), or ``alpha`` is not in
            (0, 1).
        """
        n_arr = _check_sample_sizes(n, "PMLTest.power")
        alpha = self.alpha if alpha is None else check_level(alpha, "PMLTest.power")
        return self.plans[0].power(n_arr, alpha)

    def sample_size(self, zeta: float = 0.05) -> float:
        r"""Sample size :math:`8\log(1/\zeta)/(\eta_{TV}^2\mathrm{TV}^2(P\|Q))`.

        Grosse et al. (2026), Proposition 1.
        """
        return self.plans[0].n_bound(zeta)

    def guarantee(self) -> PMLGuarantee:
        """The :class:`PMLGuarantee` of the release kernel."""
        return self.mechanism.guarantee()
