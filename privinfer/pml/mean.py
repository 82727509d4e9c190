r"""Mean estimation under eps-PML on the c-interior with one released bit per person.

The linear-kernel mechanism attains the minimax risk
:math:`b^2/(n\eta_{TV}^2)` of Grosse et al. (2026) Theorem 8. :class:`PrivateMean` (an interval) and
:class:`PrivateVectorMean` (a box, one random coordinate per person) keep the data holder's
:meth:`privatize` and the analyst's :meth:`estimate` apart; results hold only counts.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

import numpy as np
import pandas as pd
from formulaic import Formula, model_matrix
from scipy import stats
from statsmodels.iolib.summary import Summary
from statsmodels.iolib.table import SimpleTable

from privinfer._frames import as_pandas
from privinfer._hypotheses import PostEstimationMixin
from privinfer._tables import ModelLabel
from privinfer._typing import ArrayLike, FloatArray, IntArray, RandomStateLike
from privinfer._validation import (
    check_in_interval,
    check_int,
    check_level,
    check_no_nan,
    check_random_state,
    plain_text,
)
from privinfer.exceptions import (
    DataMismatchError,
    MissingValueError,
    OutOfSupportError,
    OutsideBoundsWarning,
)
from privinfer.pml._release import as_released, check_row_order, release_bits
from privinfer.pml.contraction import _check_c, eps_star, eta_tv
from privinfer.pml.guarantee import PMLGuarantee

__all__ = ["PrivateMean", "PrivateMeanResult", "PrivateVectorMean"]

CIMethod: TypeAlias = Literal["normal", "exact", "hoeffding"]

#: What ``privatize`` suggests when it refuses an order or an index.
_REMEDY = (
    "To publish bits next to public columns use {cls}.release(data, private, "
    "public=[...]), which shuffles the rows jointly; to estimate only, shuffle the "
    "values first (x[rng.permutation(len(x))]) and pass an array."
)


def _check_bounds(bounds: object, owner: str) -> FloatArray:
    arr = np.asarray(bounds, dtype=float)
    if arr.shape == (2,):
        arr = arr[None, :]
    if arr.ndim != 2 or arr.shape[1] != 2 or not np.all(np.isfinite(arr)) or np.any(
        arr[:, 1] <= arr[:, 0]
    ):
        raise ValueError(
            f"The 'bounds' parameter of {owner} must be (lo, hi) with lo < hi finite "
            f"(or a list of such pairs for a box). Got {bounds!r} instead."
        )
    return arr


def _check_eta(eta: float, eps: float, measure: float, owner: str) -> None:
    """The estimator's per-record spread ``measure / (2 eta)`` must square to a finite float."""
    if not eta > 0 or not 0.5 * measure / eta < 1e150:
        raise ValueError(
            f"The 'eps' parameter of {owner} is too small for these bounds: eps = {eps!r} gives "
            f"eta_TV = {eta!r}, and the unbiased per-record estimate (half width / eta) and its "
            "variance overflow double precision. Use a larger eps (or narrower bounds)."
        )


def _check_bits(bits: ArrayLike, owner: str) -> IntArray:
    arr = np.asarray(bits)
    check_no_nan(arr, "released", owner)
    if arr.ndim != 1 or arr.size < 2 or not np.all(np.isin(arr, (0, 1))):
        raise DataMismatchError(
            f"{owner}: released must be a 1-D array of at least 2 bits in {{0, 1}}."
        )
    return arr.astype(np.int64)


def _as_float(values: ArrayLike, name: str, owner: str) -> FloatArray:
    """``values`` as floats, or a :class:`DataMismatchError` that says they are not numbers."""
    try:
        return np.asarray(values, dtype=float)
    except (TypeError, ValueError) as err:
        raise DataMismatchError(
            f"{owner}: {name} must hold numbers within the public bounds; it holds values "
            f"that do not convert to float ({err})."
        ) from err


@dataclass(frozen=True)
class PrivateMeanResult(PostEstimationMixin):
    r"""Private mean estimates with standard errors and confidence intervals.

    Holds only per-parameter counts (``nobs``, ``n_ones``) and the mechanism's
    parameters, never released or raw records. It follows the conventions of
    :class:`~privinfer.PrivateResults`: ``params``, ``bse``, ``cov``, ``conf_int``,
    ``summary()`` (a statsmodels Summary), ``t_test`` / ``wald_test`` / ``f_test``,
    ``save`` / ``load``.

    Attributes
    ----------
    params : pandas.Series
        Unbiased estimates (one per group or coordinate).
    std_errors : pandas.Series
        Standard errors, sd of the per-person unbiased terms over :math:`\sqrt n`
        (for :class:`PrivateMean` the sd is floored at the mechanism's smallest,
        :math:`b\sqrt{1-\eta^2}/\eta`; see :meth:`PrivateMean.estimate`).
    nobs : pandas.Series
        Released bits used for each parameter.
    n_ones : pandas.Series
        Released ones for each parameter (scaled counts for vector means).
    eps, c, eta : float
        PML level, density floor and :math:`\eta_{TV}` of the release.
    half_width : pandas.Series
        :math:`b/\eta` times the dimension factor: the range of one unbiased term is
        ``center +- half_width``.
    center : pandas.Series
        Midpoint of the bounds of each parameter.
    exact_ok : bool
        Whether the Clopper-Pearson interval applies (1-D releases).
    covariance : pandas.DataFrame or None
        Covariance of the estimates (``None``: independent, ``diag(std_errors**2)``;
        the coordinates of a vector mean are correlated).
    dep_variable : str
        Name of the released column (``"x"`` when not known).
    model_name : str
        The estimator that produced the result.

    Examples
    --------
    >>> pm = PrivateMean(bounds=(0.0, 10.0), eps=1.0, c=0.05)
    >>> x = np.random.default_rng(0).uniform(2, 8, 4000)  # true mean 5
    >>> res = pm.estimate(pm.privatize(x, random_state=1))
    >>> int(res.nobs["mean"]), float(res.center["mean"]), round(res.eta, 4)
    (4000, 5.0, 0.7284)
    >>> bool(abs(res.params["mean"] - 5.0) < 3 * res.std_errors["mean"])
    True
    >>> for method in ("normal", "exact", "hoeffding"):  # Hoeffding is conservative
    ...     ci = res.conf_int(method=method)
    ...     print(method, round(float(ci["upper"].iloc[0] - ci["lower"].iloc[0]), 2))
    normal 0.43
    exact 0.43
    hoeffding 0.59
    >>> list(res.summary_frame().columns)
    ['mean', 'std err', 'nobs', '[0.025', '0.975]']
    """

    params: pd.Series
    std_errors: pd.Series
    nobs: pd.Series
    n_ones: pd.Series
    eps: float
    c: float
    eta: float
    half_width: pd.Series
    center: pd.Series
    exact_ok: bool = True
    covariance: pd.DataFrame | None = None
    dep_variable: str = "x"
    model_name: str = "PrivateMean"

    # -- PrivateResults conventions ----------------------------------------------------
    @property
    def model(self) -> str:
        """Name of the estimator (a ``str`` carrying statsmodels' ``endog_names``)."""
        return ModelLabel(self.model_name, self.dep_variable, list(self.params.index))

    @property
    def bse(self) -> pd.Series:
        """Standard errors (statsmodels' name for :attr:`std_errors`)."""
        return self.std_errors

    @property
    def cov(self) -> pd.DataFrame:
        """Covariance of the estimates, labelled by parameter."""
        if self.covariance is not None:
            return self.covariance.copy()
        idx = self.params.index
        return pd.DataFrame(np.diag(self.std_errors.to_numpy() ** 2), index=idx, columns=idx)

    @property
    def tvalues(self) -> pd.Series:
        """Z statistics for the null of a zero mean."""
        return self.params / self.std_errors

    @property
    def pvalues(self) -> pd.Series:
        """Two-sided normal p-values for the null of a zero mean."""
        return pd.Series(2 * stats.norm.sf(np.abs(self.tvalues)), index=self.params.index)

    @property
    def n_rows(self) -> int:
        """Released rows behind the estimates (groups are disjoint; vector means share rows)."""
        return int(self.nobs.sum()) if self.exact_ok else int(self.nobs.max())

    @property
    def _df_resid(self) -> float:
        return float(self.n_rows - len(self.params))

    def conf_int(self, alpha: float = 0.05, method: CIMethod = "normal") -> pd.DataFrame:
        r"""Confidence intervals; ``alpha`` here is the significance level (not a keep probability).

        Parameters
        ----------
        alpha : float, default=0.05
            Significance level.
        method : {"normal", "exact", "hoeffding"}, default="normal"
            ``normal``: estimate :math:`\pm z_{1-\alpha/2}` SE. ``exact``: Clopper-Pearson
            on the mean bit mapped through :math:`\theta = m + b(2\pi - 1)/\eta` and clipped
            to the bounds (1-D releases only). ``hoeffding``: estimate :math:`\pm
            h\sqrt{2\log(2/\alpha)/n}` with h the half range of one term.

        Returns
        -------
        pandas.DataFrame
            Columns ``lower`` and ``upper``.
        """
        alpha = check_level(alpha, "PrivateMeanResult.conf_int")
        n = self.nobs.to_numpy(dtype=float)
        est = self.params.to_numpy()
        if method == "normal":
            z = stats.norm.ppf(1.0 - alpha / 2.0)
            half = z * self.std_errors.to_numpy()
            lo, hi = est - half, est + half
        elif method == "hoeffding":
            half = self.half_width.to_numpy() * np.sqrt(2.0 * np.log(2.0 / alpha) / n)
            lo, hi = est - half, est + half
        elif method == "exact":
            if not self.exact_ok:
                raise ValueError(
                    "PrivateMeanResult.conf_int: method='exact' applies to 1-D releases only; "
                    "use 'normal' or 'hoeffding' for vector means."
                )
            k = self.n_ones.to_numpy().astype(np.int64)
            p_lo = np.where(k > 0, stats.beta.ppf(alpha / 2, k, n - k + 1), 0.0)
            p_hi = np.where(k < n, stats.beta.ppf(1 - alpha / 2, k + 1, n - k), 1.0)
            h, m = self.half_width.to_numpy() * self.eta, self.center.to_numpy()
            lo = np.clip(m + h * (2 * p_lo - 1) / self.eta, m - h, m + h)
            hi = np.clip(m + h * (2 * p_hi - 1) / self.eta, m - h, m + h)
        else:
            raise ValueError(
                "The 'method' parameter of PrivateMeanResult.conf_int must be 'normal', "
                f"'exact' or 'hoeffding'. Got {method!r} instead."
            )
        return pd.DataFrame({"lower": lo, "upper": hi}, index=self.params.index)

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """Estimates, SEs, counts and normal CIs in one table."""
        alpha = check_level(alpha, "PrivateMeanResult.summary_frame")
        ci = self.conf_int(alpha)
        return pd.DataFrame({"mean": self.params, "std err": self.std_errors,
                             "nobs": self.nobs, f"[{alpha / 2:g}": ci["lower"],
                             f"{1 - alpha / 2:g}]": ci["upper"]})

    def summary(self, alpha: float = 0.05) -> Summary:
        """A statsmodels :class:`~statsmodels.iolib.summary.Summary` (text, LaTeX, HTML).

        Release facts left, privacy facts right, then the estimates with normal
        intervals; it returns and never prints.

        Parameters
        ----------
        alpha : float, default=0.05
            Significance level of the intervals.
        """
        alpha = check_level(alpha, "PrivateMeanResult.summary")
        ci = self.conf_int(alpha)
        left = [
            ("Dep. Variable:", self.dep_variable),
            ("Estimator:", self.model_name),
            ("No. Observations:", str(self.n_rows)),
            ("Release:", "one bit per person" if self.exact_ok else "(coordinate, bit)"),
        ]
        right = [
            ("PML eps:", f"{self.eps:.4g}"),
            ("Density floor c:", f"{self.c:.4g}"),
            ("eta_TV:", f"{self.eta:.4f}"),
            ("Risk factor 1/eta^2:", f"{1 / self.eta**2:.4g}"),
        ]
        top = SimpleTable([list(r) for r in left], title=f"{self.model_name} Results",
                          txt_fmt={"colwidths": 16})
        top.extend_right(SimpleTable([list(r) for r in right]))
        smry = Summary()
        smry.tables.append(top)
        data = np.column_stack([self.params, self.std_errors, self.tvalues, self.pvalues,
                                ci["lower"], ci["upper"]])
        rows = [[f"{v:.4f}" for v in row] + [str(int(n))]
                for row, n in zip(data, self.nobs, strict=True)]
        smry.tables.append(SimpleTable(
            rows, headers=["coef", "std err", "z", "P>|z|", f"[{alpha / 2:g}",
                           f"{1 - alpha / 2:g}]", "nobs"],
            stubs=[str(s) for s in self.params.index]))
        smry.add_extra_txt([
            "Unbiased per-person terms m + b(2Y - 1)/eta; SE = sd / sqrt(n) (1-D: sd at least "
            "b sqrt(1 - eta^2) / eta); normal intervals (z and P>|z| for a zero mean).",
            "eps-PML on the c-interior: Grosse, Saeidian, Oechtering and Skoglund (2026), "
            "Theorem 8.",
        ])
        return smry

    def __str__(self) -> str:
        return str(self.summary())

    def __repr__(self) -> str:
        """One line, as :class:`~privinfer.PrivateResults`: the estimator and its estimates.

        Examples
        --------
        >>> pm = PrivateMean(bounds=(0.0, 1.0), eps=1.0, c=0.5)
        >>> res = pm.estimate(pm.privatize(np.full(1000, 0.5), random_state=0))
        >>> repr(res).startswith("<PrivateMean results: mean=")
        True
        """
        estimates = ", ".join(f"{k}={v:.4g}" for k, v in self.params.items())
        return f"<{self.model_name} results: {estimates}>"

    def _repr_html_(self) -> str:
        return self.summary().as_html()


class PrivateMean:
    r"""Mean of a bounded variable from one eps-PML bit per person (Grosse et al., 2026, §VI-C1).

    The holder releases :math:`Y\sim\mathrm{Bernoulli}((1-\eta)/2 + \eta(x - lo)/(hi - lo))`;
    the analyst averages :math:`\hat x = m + b(2Y-1)/\eta` (:math:`m` the midpoint,
    :math:`b` the half width). Use it for a population mean when the data density is
    bounded below by c on the interval. O(n).

    Parameters
    ----------
    bounds : (float, float)
        Public bounds ``(lo, hi)``; ``(-b, b)`` is the seed's setting.
    eps : float
        PML level, ``>= 0``; above :math:`\varepsilon^* = -\log(c(hi-lo)/2)` the release
        is only :math:`\varepsilon^*`-PML and costs nothing.
    c : float
        Density floor in ``[0, 1/(hi - lo)]``; ``c = 0`` is eps-LDP.

    Raises
    ------
    ValueError
        Bad bounds, ``eps <= 0`` or ``c`` out of range.

    See Also
    --------
    PrivateVectorMean : The d-dimensional version.

    Notes
    -----
    With :math:`\eta = \eta_{TV}(\varepsilon)` and :math:`\mu(\mathcal X) = 2b`:
    :math:`K(1|x) = (1-\eta)/2 + \eta(x+b)/(2b)` has :math:`\max_x K = (1+\eta)/2`,
    :math:`\min_x K = (1-\eta)/2` and :math:`\int K\,dx = b`, so its PML on the c-interior
    is :math:`\log\frac{(1+\eta)/2}{cb + d_c(1-\eta)/2} = \log\frac{1+\eta}{1 - d_c\eta} =
    \varepsilon` (same for output 0). :math:`E\hat x = x` and :math:`E(\hat x - m)^2 =
    b^2/\eta^2`, so :math:`n\,E(\hat\theta - \theta)^2 = b^2/\eta^2 - (\theta - m)^2
    \le b^2/\eta^2`: the upper bound of Grosse et al. (2026) Proposition 3.

    Examples
    --------
    >>> import numpy as np
    >>> pm = PrivateMean(bounds=(-1.0, 1.0), eps=1.0, c=0.2)
    >>> x = np.random.default_rng(0).uniform(-1, 1, 5000) * 0.5 + 0.2
    >>> res = pm.estimate(pm.privatize(x, random_state=1))
    >>> bool(abs(res.params["mean"] - 0.2) < 4 * res.std_errors["mean"])
    True
    """

    def __init__(self, *, bounds: tuple[float, float], eps: float, c: float) -> None:
        owner = "PrivateMean"
        arr = _check_bounds(bounds, owner)
        if arr.shape[0] != 1:
            raise ValueError(f"{owner}: bounds must be one interval (lo, hi); use "
                             "PrivateVectorMean for a box.")
        self.lo, self.hi = float(arr[0, 0]), float(arr[0, 1])
        self.measure = self.hi - self.lo
        self.c = _check_c(c, self.measure, owner)
        self.eps = check_in_interval(eps, "eps", owner, 0.0, np.inf, low_open=True)
        self.eta = eta_tv(self.eps, self.c, self.measure)
        _check_eta(self.eta, self.eps, self.measure, owner)
        #: (bits, group indicators, names, outcome) bound by from_formula
        self._design: tuple[IntArray, FloatArray, list[str], str] | None = None

    @property
    def center(self) -> float:
        """Midpoint m of the bounds."""
        return 0.5 * (self.lo + self.hi)

    @property
    def half_width(self) -> float:
        """Half width b of the bounds."""
        return 0.5 * self.measure

    def prob_one(self, x: ArrayLike) -> FloatArray:
        r""":math:`K(1|x) = (1-\eta)/2 + \eta(x - lo)/(hi - lo)` for each record."""
        arr = self._check_x(x)
        return (1.0 - self.eta) / 2.0 + self.eta * (arr - self.lo) / self.measure

    def _check_x(self, x: ArrayLike) -> FloatArray:
        arr = _as_float(x, "x", "PrivateMean")
        check_no_nan(arr, "x", "PrivateMean")
        if arr.ndim != 1:
            raise DataMismatchError(f"PrivateMean: x must be 1-D; got shape {arr.shape}.")
        bad = np.flatnonzero((arr < self.lo) | (arr > self.hi))
        if bad.size:
            raise OutOfSupportError(
                f"PrivateMean: data outside the public bounds [{self.lo}, {self.hi}] at rows "
                f"{bad[:5].tolist()} (values {arr[bad[:5]].tolist()}); clip or drop them first."
            )
        return arr

    def privatize(self, x: ArrayLike, random_state: RandomStateLike = None) -> IntArray | pd.Series:
        """Data-holder side: one bit per record, in the order of ``x``.

        The bits keep the positions of ``x``, so that they can be paired with the
        records' public columns by position; the guarantee covers each bit, not the
        order. Input whose order visibly reveals the values (sorted or grouped by them,
        or nearly sorted) and a Series with an index other than the default
        ``RangeIndex`` are therefore refused: use :meth:`release` to publish bits next to
        public columns (it shuffles the rows jointly).

        Parameters
        ----------
        x : array-like or pandas.Series
            Values in the bounds, in an order unrelated to them.
        random_state : None, int, SeedSequence or Generator, default=None
            ``None`` draws fresh OS entropy.

        Returns
        -------
        ndarray of int or pandas.Series
            Released bits in the order of ``x``; a Series keeps its name and gets a fresh
            ``RangeIndex``.

        Raises
        ------
        OutOfSupportError, MissingValueError, DataMismatchError
            Values outside the bounds, missing or not numbers.
        RowOrderError
            The order of ``x`` reveals its values, or ``x`` is a Series with an index
            other than the default ``RangeIndex``.

        See Also
        --------
        PrivateMean.release : a shuffled frame of bits and public columns.

        Examples
        --------
        >>> import numpy as np, pandas as pd, privinfer as pi
        >>> pm = pi.PrivateMean(bounds=(0.0, 1.0), eps=1.0, c=0.5)
        >>> x = pd.Series(np.random.default_rng(0).uniform(size=500), name="income")
        >>> bits = pm.privatize(x, random_state=1)
        >>> bits.name, bits.index.equals(pd.RangeIndex(500))
        ('income', True)
        >>> try:  # a file sorted by income would publish the incomes' ranks
        ...     pm.privatize(x.sort_values(ignore_index=True), random_state=1)
        ... except pi.exceptions.RowOrderError as err:
        ...     message = str(err)
        >>> "sorted by the value" in message
        True
        """
        owner = "PrivateMean.privatize"
        rng = check_random_state(random_state)
        arr = self._check_x(x)
        check_row_order(x, owner, _REMEDY.format(cls="PrivateMean"))
        return as_released(x, self._draw(arr, rng))

    def _draw(self, values: np.ndarray, rng: np.random.Generator) -> IntArray:
        """Bits of validated values (no order checks; :meth:`release` shuffles)."""
        p1 = self.prob_one(values)
        return (rng.random(p1.shape[0]) < p1).astype(np.int64)

    def release(
        self,
        data: Any,
        private: str,
        *,
        public: Sequence[str] | None = None,
        shuffle: bool = True,
        random_state: RandomStateLike = None,
    ) -> pd.DataFrame:
        r"""Data-holder side: publish one bit per record with the declared public columns.

        The frame to hand to an analyst (e.g. for :meth:`from_formula`): the private
        column is replaced by its bits (same name), the columns named in ``public`` go
        out unchanged, every other column is dropped, and the rows go out jointly in a
        fresh random order with a fresh ``RangeIndex``, so that neither the raw order nor
        the raw index says anything about the private values. O(n) plus the leak checks.

        Parameters
        ----------
        data : DataFrame
            Raw records (pandas, or another DataFrame library); not modified.
        private : str
            The column holding the values in the bounds.
        public : list of str, optional
            Columns published unchanged next to the bits (e.g. a group column).
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
            The bit column and the public columns in their raw order and dtypes, a fresh
            ``RangeIndex``; ``attrs["privinfer_bits_release"]`` describes the release
            (columns, dropped columns, row order). Nothing else of the raw frame (its
            ``attrs``, ``flags``, ``columns.name``) is copied, and a categorical public
            column keeps only the categories some row takes (one without rows would tell
            of rows removed before the release).

        Raises
        ------
        DataMismatchError
            A named column is missing, declared both private and public, or duplicated.
        DerivedColumnError
            A public column (or a few together) reveals the private column: a function, a
            monotone transform or a close polynomial fit of it (see
            :meth:`AlphaIdentity.privatize <privinfer.AlphaIdentity.privatize>`).
        OutOfSupportError, MissingValueError
            Private values outside the bounds or missing.

        Warns
        -----
        UndeclaredColumnWarning
            Columns neither private nor declared public were dropped.

        Examples
        --------
        >>> import numpy as np, pandas as pd, privinfer as pi
        >>> rng = np.random.default_rng(0)
        >>> raw = pd.DataFrame({"income": np.sort(rng.uniform(size=1000)),  # sorted file
        ...                     "region": rng.choice(["n", "s"], 1000)})
        >>> pm = pi.PrivateMean(bounds=(0.0, 1.0), eps=1.0, c=0.5)
        >>> released = pm.release(raw, "income", public=["region"], random_state=2)
        >>> released.columns.tolist(), released.index.equals(pd.RangeIndex(1000))
        (['income', 'region'], True)
        >>> pos = np.arange(1000)  # the order tells nothing: position vs bit
        >>> bool(abs(np.corrcoef(pos, released["income"])[0, 1]) < 0.1)
        True
        """
        return release_bits(
            self._draw, data, private, public=public, name=None, shuffle=shuffle,
            random_state=random_state, owner="PrivateMean.release",
            mechanism=f"PrivateMean(bounds=({self.lo:g}, {self.hi:g}), eps={self.eps:g}, "
            f"c={self.c:g})",
        )

    def _result(self, bits: IntArray, groups: FloatArray, names: list[str],
                dep: str = "x") -> PrivateMeanResult:
        b, m = self.half_width, self.center
        terms = b * (2.0 * bits - 1.0) / self.eta  # centred unbiased terms
        nobs = groups.sum(axis=0)
        if np.any(nobs < 2):
            few = {str(k): int(v) for k, v in zip(names, nobs, strict=True) if v < 2}
            hint = (
                " A group with no bits is often an unused level of a categorical column "
                "(rows selected on a public column): drop it with "
                "data[col].cat.remove_unused_categories()."
                if min(few.values()) == 0
                else ""
            )
            raise DataMismatchError(
                f"PrivateMean: every group needs at least 2 released bits; these groups have "
                f"fewer: {few!r}.{hint}"
            )
        mean = groups.T @ terms / nobs
        var = (groups.T @ terms**2 - nobs * mean**2) / (nobs - 1)
        var = np.maximum(var, self.min_term_variance())
        ones = groups.T @ bits
        idx = pd.Index(names)
        return PrivateMeanResult(
            params=pd.Series(m + mean, index=idx),
            std_errors=pd.Series(np.sqrt(var / nobs), index=idx),
            nobs=pd.Series(nobs.astype(np.int64), index=idx),
            n_ones=pd.Series(ones.astype(np.int64), index=idx),
            eps=self.eps, c=self.c, eta=self.eta,
            half_width=pd.Series(b / self.eta, index=idx),
            center=pd.Series(m, index=idx),
            dep_variable=dep, model_name="PrivateMean",
        )

    def min_term_variance(self) -> float:
        r"""Smallest variance of one unbiased term :math:`m + b(2Y - 1)/\eta` the release allows.

        A term has variance :math:`(2b/\eta)^2\bar\pi(1-\bar\pi)` with :math:`\bar\pi =
        P(Y = 1)` the mean of :meth:`prob_one` over the data, which lies in
        :math:`[(1-\eta)/2, (1+\eta)/2]`; :math:`\pi(1-\pi)` is smallest at the ends,
        :math:`(1-\eta^2)/4`. Equivalently :math:`b^2/\eta^2 - (\theta - m)^2 \ge
        b^2(1-\eta^2)/\eta^2` since :math:`|\theta - m| \le b` (class Notes).

        Returns
        -------
        float
            :math:`b^2(1-\eta^2)/\eta^2`; zero only when :math:`\eta = 1` (no privacy).
        """
        return float(self.half_width**2 * (1.0 - self.eta**2) / self.eta**2)

    def _warn_outside(self, res: PrivateMeanResult) -> PrivateMeanResult:
        """Warn when an estimate leaves the bounds or its SE is zero; return ``res``."""
        est = res.params.to_numpy()
        outside = (est < self.lo) | (est > self.hi)
        bad = outside | (res.std_errors.to_numpy() == 0)
        if not np.any(bad):
            return res
        lo1, hi1 = (1.0 - self.eta) / 2.0, (1.0 + self.eta) / 2.0
        share = np.round((res.n_ones / res.nobs)[bad].to_numpy(), 4).tolist()
        what = (
            f"lies outside the public bounds [{self.lo:g}, {self.hi:g}]: the share of ones "
            f"({share}) is outside [{lo1:.4f}, {hi1:.4f}], the range the mechanism can produce "
            f"at eta = {self.eta:.4f}. The estimate is left unclipped (clipping biases it) and "
            "its standard error uses the smallest per-person variance b^2 (1 - eta^2) / eta^2"
            if np.all(outside[bad])
            else f"has a zero standard error: all released bits are equal (share of ones "
            f"{share}) and at eta = {self.eta:.4f} the mechanism's variance has no positive floor"
        )
        warnings.warn(
            f"PrivateMean: the estimate of {res.params.index[bad].tolist()} "
            f"({np.round(est[bad], 4).tolist()} from {res.nobs[bad].tolist()} released bits) "
            f"{what}. At this sample size read conf_int(method='exact') (Clopper-Pearson, within "
            "the bounds) or release more bits.",
            OutsideBoundsWarning,
            stacklevel=3,
        )
        return res

    def estimate(self, released: ArrayLike) -> PrivateMeanResult:
        r"""Analyst side: unbiased mean, SE and confidence intervals from released bits.

        The SE is :math:`s/\sqrt n` with :math:`s^2` the sample variance of the unbiased
        terms, floored at :meth:`min_term_variance`: the true variance of a term cannot
        be smaller, and the floor keeps the SE positive when all released bits are equal
        (likely in small samples). Such a sample gives an estimate outside the bounds,
        which is kept (it is unbiased) with an :class:`~privinfer.exceptions.OutsideBoundsWarning`.

        Parameters
        ----------
        released : array-like of {0, 1}
            Bits from :meth:`privatize`.

        Returns
        -------
        PrivateMeanResult
            With a single parameter named ``"mean"``.

        Warns
        -----
        OutsideBoundsWarning
            The estimate lies outside the bounds (or its SE is zero, possible only without
            privacy, :math:`\eta = 1`).
        """
        bits = _check_bits(released, "PrivateMean.estimate")
        name = released.name if isinstance(released, pd.Series) and released.name else "x"
        return self._warn_outside(
            self._result(bits, np.ones((bits.size, 1)), ["mean"], str(name))
        )

    def fit(self, released: ArrayLike | None = None) -> PrivateMeanResult:
        """Estimate from the data bound by :meth:`from_formula`, or from ``released`` bits.

        Parameters
        ----------
        released : array-like of {0, 1}, optional
            Bits from :meth:`privatize`; required unless the model was built with
            :meth:`from_formula`.

        Returns
        -------
        PrivateMeanResult

        Raises
        ------
        DataMismatchError
            No data: neither ``released`` nor a formula-built model; or both.

        Examples
        --------
        >>> import numpy as np, pandas as pd, privinfer as pi
        >>> pm = pi.PrivateMean(bounds=(0.0, 1.0), eps=1.0, c=0.5)
        >>> bits = pm.privatize(np.full(2000, 0.3), random_state=0)
        >>> pm.fit(bits).params.equals(pm.estimate(bits).params)
        True
        """
        design = getattr(self, "_design", None)
        if released is not None:
            if design is not None:
                raise DataMismatchError(
                    "PrivateMean.fit: this model was built from a formula and holds its data; "
                    "call fit() without released bits."
                )
            return self.estimate(released)
        if design is None:
            raise DataMismatchError(
                "PrivateMean.fit: no data. Pass the released bits, fit(released), or build the "
                "model with PrivateMean.from_formula(formula, data, ...)."
            )
        return self._warn_outside(self._result(*design))

    @classmethod
    def from_formula(cls, formula: str, data: Any, *, bounds: tuple[float, float],
                     eps: float, c: float) -> PrivateMean:
        """A model of the means of a released-bit column, overall or by group.

        ``"y ~ 1"`` gives one mean, ``"y ~ C(g)"`` one per level of a public group
        column; :meth:`fit` returns the estimates. The model holds the released bits and
        group indicators (O(n G) memory); its results hold only counts.

        Parameters
        ----------
        formula : str
            ``"col ~ 1"`` or ``"col ~ C(group)"``; ``col`` holds released bits.
        data : DataFrame
            The released data: pandas, polars or another DataFrame library (converted
            once through narwhals, Arrow streams or the interchange protocol).
        bounds, eps, c
            As in the constructor (the mechanism that released ``col``).

        Returns
        -------
        PrivateMean
            Call :meth:`fit` for a :class:`PrivateMeanResult` with one parameter per
            group level (``"mean"`` without groups).

        Raises
        ------
        DataMismatchError
            A formula that cannot be parsed, or a right-hand side other than an intercept
            or one categorical term.
        MissingValueError
            NaN in the columns used.

        Examples
        --------
        >>> import numpy as np, pandas as pd, privinfer as pi
        >>> rng = np.random.default_rng(0)
        >>> g = rng.choice(["a", "b"], size=4000)
        >>> raw = pd.DataFrame({"y": np.where(g == "a", 0.5, 0.2) + rng.uniform(0, 0.5, 4000),
        ...                     "g": g})
        >>> pm = pi.PrivateMean(bounds=(0.0, 1.0), eps=2.0, c=0.5)
        >>> released = pm.release(raw, "y", public=["g"], random_state=1)  # rows shuffled
        >>> res = pi.PrivateMean.from_formula("y ~ C(g)", released, bounds=(0.0, 1.0),
        ...                                   eps=2.0, c=0.5).fit()
        >>> res.params.index.tolist(), res.model.endog_names
        (['C(g)[a]', 'C(g)[b]'], 'y')
        >>> bool(res.wald_test("`C(g)[a]` = `C(g)[b]`").pvalue < 1e-6)  # the groups differ
        True
        """
        mech = cls(bounds=bounds, eps=eps, c=c)
        data = as_pandas(data, "PrivateMean.from_formula")
        try:
            f = Formula(formula)
        except Exception as exc:  # formulaic raises several types for bad formulas
            raise DataMismatchError(
                f"PrivateMean.from_formula: cannot parse formula {formula!r}: {plain_text(exc)}"
            ) from exc
        lhs = list(f.lhs)
        rhs = [t for t in f.rhs if str(t) != "1"]
        if len(lhs) != 1 or len(rhs) > 1:
            raise DataMismatchError(
                f"PrivateMean.from_formula: {formula!r} must read 'y ~ 1' or 'y ~ C(group)'; "
                f"got left terms {[str(t) for t in lhs]} and right terms {[str(t) for t in rhs]}."
            )
        try:
            y = model_matrix(f"0 + {lhs[0]}", data, na_action="raise")
            groups = (model_matrix(f"0 + {rhs[0]}", data, na_action="raise") if rhs else None)
        except ValueError as exc:
            raise MissingValueError(f"PrivateMean.from_formula: {plain_text(exc)}") from exc
        bits = _check_bits(np.asarray(y).ravel(), "PrivateMean.from_formula")
        dep = str(y.columns[0])
        if groups is None:
            mech._design = (bits, np.ones((bits.size, 1)), ["mean"], dep)
            return mech
        g = np.asarray(groups, dtype=float)
        if not np.all(np.isin(g, (0.0, 1.0))) or np.any(g.sum(axis=1) != 1):
            raise DataMismatchError(
                f"PrivateMean.from_formula: the right-hand side of {formula!r} must be one "
                "categorical term (e.g. C(region)) giving group indicators."
            )
        mech._result(bits, g, list(groups.columns), dep)  # validate now, not at fit()
        mech._design = (bits, g, [str(v) for v in groups.columns], dep)
        return mech

    def grid_kernel(self, n_grid: int = 101) -> tuple[FloatArray, FloatArray, float]:
        r"""The kernel on a symmetric grid with endpoints, for checking the PML numerically.

        Returns ``(points, K, c_grid)`` with ``K`` of shape (n_grid, 2) (columns y = 0, 1)
        and ``c_grid = c (hi - lo)/n_grid``; ``pml_epsilon(K, c_grid)`` equals
        :math:`\min(\varepsilon, \varepsilon^*)` exactly, since a linear function's grid
        average equals its integral average on a symmetric grid.
        """
        n_grid = check_int(n_grid, "n_grid", "PrivateMean.grid_kernel", 2)
        pts = np.linspace(self.lo, self.hi, n_grid)
        p1 = self.prob_one(pts)
        return pts, np.column_stack([1.0 - p1, p1]), self.c * self.measure / n_grid

    def guarantee(self) -> PMLGuarantee:
        """PML guarantee of the release: eps-PML (``min(eps, eps*)``) on the c-interior."""
        return PMLGuarantee(eps=min(self.eps, eps_star(self.c, self.measure)), c=self.c,
                            measure=self.measure, mechanism="PrivateMean linear kernel")


class PrivateVectorMean:
    r"""Mean of a vector in a box from one eps-PML (coordinate, bit) release per person.

    Each person draws a coordinate :math:`J` uniformly from ``0..d-1`` and releases
    :math:`(J, Y)` with :math:`Y\sim\mathrm{Bernoulli}((1-\eta)/2 + \eta\,
    (x_J - lo_J)/(hi_J - lo_J))`, :math:`\eta = \eta_{TV}(\varepsilon, c, \mu)` with
    :math:`\mu = \prod_k (hi_k - lo_k)`. O(n d) to estimate.

    Parameters
    ----------
    bounds : sequence of (float, float)
        The box ``[(lo_1, hi_1), ..., (lo_d, hi_d)]``.
    eps : float
        PML level, ``> 0``.
    c : float
        Density floor in ``[0, 1/mu]`` for densities on the box.

    Raises
    ------
    ValueError
        Bad bounds, ``eps <= 0`` or ``c`` out of range.

    See Also
    --------
    PrivateMean : The 1-D mechanism.

    Notes
    -----
    **Guarantee.** The release is exactly :math:`\min(\varepsilon, \varepsilon^*)`-PML
    on the c-interior of the box, :math:`\varepsilon^* = -\log(c\mu/2)`.

    *Proof.* For output :math:`(j, 1)`: :math:`K((j,1)|x) = \frac1d[(1-\eta)/2 +
    \eta a_j(x)]`, :math:`a_j(x) = (x_j - lo_j)/(hi_j - lo_j)`, so :math:`\max_x K =
    (1+\eta)/(2d)`, :math:`\min_x K = (1-\eta)/(2d)` and :math:`\int K\,dx = \mu/(2d)`.
    The worst prior in :math:`\mathcal P_c` puts density c everywhere and mass
    :math:`d_c = 1 - c\mu` on the minimiser, so the leakage is
    :math:`\log\frac{(1+\eta)/(2d)}{c\mu/(2d) + d_c(1-\eta)/(2d)} =
    \log\frac{1+\eta}{1 - d_c\eta}`, which equals :math:`\varepsilon` for
    :math:`\eta = \eta_{TV}(\varepsilon)` below :math:`\varepsilon^*` and
    :math:`\varepsilon^*` at :math:`\eta = 1`; outputs :math:`(j, 0)` are symmetric. (The
    factor 1/d cancels: the coordinate draw is independent of x.) :meth:`grid_kernel`
    checks it with :func:`~privinfer.pml.pml_epsilon`.

    **Accuracy.** :math:`\hat\theta_j = m_j + \frac1n\sum_i d\,1\{J_i = j\}\,b_j(2Y_i -
    1)/\eta` is unbiased with :math:`n\,E(\hat\theta_j - \theta_j)^2 \le d\,b_j^2/\eta^2`,
    so the summed risk is at most :math:`d\sum_j b_j^2/(n\eta^2)`.

    Examples
    --------
    >>> import numpy as np
    >>> vm = PrivateVectorMean(bounds=[(-1, 1), (0, 2)], eps=2.0, c=0.1)
    >>> X = np.random.default_rng(0).uniform([-1, 0], [1, 2], size=(4000, 2))
    >>> res = vm.estimate(vm.privatize(X, random_state=1))
    >>> res.params.index.tolist()
    ['x0', 'x1']
    """

    def __init__(self, *, bounds: ArrayLike, eps: float, c: float) -> None:
        owner = "PrivateVectorMean"
        self.bounds = _check_bounds(bounds, owner)
        self.dim = self.bounds.shape[0]
        self.widths = self.bounds[:, 1] - self.bounds[:, 0]
        self.measure = float(np.prod(self.widths))
        self.c = _check_c(c, self.measure, owner)
        self.eps = check_in_interval(eps, "eps", owner, 0.0, np.inf, low_open=True)
        self.eta = eta_tv(self.eps, self.c, self.measure)
        _check_eta(self.eta, self.eps, float(self.widths.max() * self.dim), owner)

    def _check_x(self, X: ArrayLike) -> FloatArray:
        arr = _as_float(X, "X", "PrivateVectorMean")
        check_no_nan(arr, "X", "PrivateVectorMean")
        if arr.ndim != 2 or arr.shape[1] != self.dim:
            raise DataMismatchError(
                f"PrivateVectorMean: X must have shape (n, {self.dim}); got {arr.shape}."
            )
        out = np.any((arr < self.bounds[:, 0]) | (arr > self.bounds[:, 1]), axis=1)
        if np.any(out):
            bad = np.flatnonzero(out)
            raise OutOfSupportError(
                f"PrivateVectorMean: rows {bad[:5].tolist()} lie outside the public box "
                f"{self.bounds.tolist()}."
            )
        return arr

    def prob_one(self, X: ArrayLike, coordinate: ArrayLike) -> FloatArray:
        r""":math:`P(Y = 1 | x, J = j)` for each record."""
        arr = self._check_x(X)
        j = np.asarray(coordinate, dtype=np.int64)
        a = (arr[np.arange(arr.shape[0]), j] - self.bounds[j, 0]) / self.widths[j]
        return (1.0 - self.eta) / 2.0 + self.eta * a

    def privatize(self, X: ArrayLike, random_state: RandomStateLike = None) -> IntArray:
        """Data-holder side: release ``(coordinate, bit)`` per record, shape (n, 2).

        The rows keep the order of ``X``, so input whose order visibly reveals a
        coordinate (sorted or grouped by it) and a DataFrame with an index other than the
        default ``RangeIndex`` raise :class:`~privinfer.exceptions.RowOrderError`; shuffle
        the records (with their public columns) first.
        """
        rng = check_random_state(random_state)
        arr = self._check_x(X)
        check_row_order(
            X, "PrivateVectorMean.privatize",
            "Shuffle the records, together with any public columns published next to them, "
            "first (rows = rng.permutation(len(X))).",
        )
        j = rng.integers(0, self.dim, size=arr.shape[0])
        y = (rng.random(arr.shape[0]) < self.prob_one(arr, j)).astype(np.int64)
        return np.column_stack([j, y])

    def estimate(self, released: ArrayLike) -> PrivateMeanResult:
        r"""Analyst side: unbiased coordinate means with their covariance from ``(J, Y)`` rows.

        The coordinates share rows, so their estimates are correlated: the covariance is
        the sample covariance of the per-person terms over n (off-diagonal terms are
        :math:`-(\theta_j - m_j)(\theta_k - m_k)/n` in expectation, since each person
        reports one coordinate).
        """
        rel = np.asarray(released)
        check_no_nan(rel, "released", "PrivateVectorMean.estimate")
        if rel.ndim != 2 or rel.shape[1] != 2 or rel.shape[0] < 2:
            raise DataMismatchError("PrivateVectorMean.estimate: released must have shape (n, 2).")
        j, y = rel[:, 0], rel[:, 1]
        if not np.all(np.isin(y, (0, 1))) or not np.all(np.isin(j, np.arange(self.dim))):
            raise DataMismatchError(
                f"PrivateVectorMean.estimate: columns must be coordinates 0..{self.dim - 1} "
                "and bits in {0, 1}."
            )
        n = rel.shape[0]
        b = self.widths / 2.0
        m = self.bounds.mean(axis=1)
        onehot = (j[:, None] == np.arange(self.dim)[None, :]).astype(float)
        terms = self.dim * onehot * (b[None, :] * (2.0 * y[:, None] - 1.0) / self.eta)
        mean = terms.mean(axis=0)
        cov = np.cov(terms, rowvar=False, ddof=1).reshape(self.dim, self.dim) / n
        se = np.sqrt(np.diag(cov))
        idx = pd.Index([f"x{k}" for k in range(self.dim)])
        return PrivateMeanResult(
            params=pd.Series(m + mean, index=idx), std_errors=pd.Series(se, index=idx),
            nobs=pd.Series(np.full(self.dim, n), index=idx),
            n_ones=pd.Series((onehot * y[:, None]).sum(axis=0).astype(np.int64), index=idx),
            eps=self.eps, c=self.c, eta=self.eta,
            half_width=pd.Series(self.dim * b / self.eta, index=idx),
            center=pd.Series(m, index=idx), exact_ok=False,
            covariance=pd.DataFrame(cov, index=idx, columns=idx), dep_variable="x",
            model_name="PrivateVectorMean",
        )

    def fit(self, released: ArrayLike) -> PrivateMeanResult:
        """Analyst side, as :meth:`estimate` (the name every privinfer model uses)."""
        return self.estimate(released)

    def grid_kernel(self, n_grid: int = 5) -> tuple[FloatArray, FloatArray, float]:
        r"""Kernel on a product grid (``n_grid`` symmetric points per axis, endpoints included).

        Returns ``(points, K, c_grid)``: ``points`` of shape (n_grid^d, d), ``K`` of shape
        (n_grid^d, 2d) with column ``2j + y`` for output (j, y), and
        ``c_grid = c mu / n_grid^d``. ``pml_epsilon(K, c_grid)`` equals
        :math:`\min(\varepsilon,\varepsilon^*)` exactly.
        """
        n_grid = check_int(n_grid, "n_grid", "PrivateVectorMean.grid_kernel", 2)
        axes = [np.linspace(lo, hi, n_grid) for lo, hi in self.bounds]
        pts = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, self.dim)
        a = (pts - self.bounds[:, 0]) / self.widths
        p1 = ((1.0 - self.eta) / 2.0 + self.eta * a) / self.dim
        p0 = 1.0 / self.dim - p1
        K = np.stack([p0, p1], axis=2).reshape(pts.shape[0], 2 * self.dim)
        return pts, K, self.c * self.measure / pts.shape[0]

    def guarantee(self) -> PMLGuarantee:
        """PML guarantee: ``min(eps, eps*)``-PML on the c-interior of the box."""
        return PMLGuarantee(eps=min(self.eps, eps_star(self.c, self.measure)), c=self.c,
                            measure=self.measure, mechanism="PrivateVectorMean")

