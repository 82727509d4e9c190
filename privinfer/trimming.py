r"""A public trimming rule for limited overlap (Crump, Hotz, Imbens and Mitnik, 2009).

Where treated and control units do not overlap, an average effect over the whole
population is poorly identified: its efficient variance carries
:math:`E[1/(e(X)(1 - e(X)))]`, which explodes with propensities near 0 or 1, and below
``alpha = 1`` the privatisation noise multiplies it (the Riesz representer is evaluated at
the reference draws too). The remedy of Crump et al. (2009) changes the estimand to the
average effect on the units whose propensity lies in :math:`[\gamma, 1 - \gamma]`, with
the :math:`\gamma` that minimises the efficient variance of that subpopulation's
effect:

.. math:: \frac{1}{\gamma(1 - \gamma)} = 2\,E\Big[\frac{1}{e(1 - e)}\ \Big|\
          \frac{1}{e(1 - e)} \le \frac{1}{\gamma(1 - \gamma)}\Big]

(no trimming when :math:`\sup 1/(e(1-e)) \le 2E[1/(e(1-e))]`).

With privatised covariates the rule must use **public columns only**. Selecting rows on
released private values would select on a mixture of true values and reference draws:
the rows kept would no longer be a release of any subpopulation through the
alpha-identity (the models' release check refuses such rows). A rule on public
columns (and the public treatment) selects whole records, true and replaced ones alike,
so the rows kept are an alpha-identity release of the subpopulation
:math:`\{w : \gamma \le p(w) \le 1 - \gamma\}`, and every estimator of the package
applies to them unchanged. The propensity :math:`p(w) = P(D = 1 \mid W = w)` is that of
the public covariates alone (:math:`D = 1` the treated level; see :class:`PublicTrimming`
for which level of a two-level treatment that is), so the rule trims only the part of the
overlap problem the public columns carry; the diagnostics of the fit on the rows kept
(``OverlapWarning``, ``results.diagnostics``) report what remains.

:class:`PublicTrimming` fits the public propensity (a logistic regression with a small
ridge, so that separated designs still give finite fits) from a formula, e.g.
``"d ~ bs(age, df=4) + C(region)"``, and returns a :class:`TrimmingRule`:
:meth:`TrimmingRule.apply` keeps the rows inside the bounds (the release's metadata
travel with them). As in Crump et al. (2009), the interval on the rows kept treats the
rule as fixed; its estimated threshold moves the estimand, not the estimate's spread,
to first order.

**Multi-valued treatments.** With levels :math:`0, \dots, K-1` and generalised propensities
:math:`e_k(x) = P(D = k \mid X = x)`, the efficient variance of the potential-outcome
means on a subpopulation :math:`A` (homoskedastic outcomes, as in Crump et al., 2009) sums
to :math:`\sigma^2 E[h(X) 1_A]/P(A)^2` with :math:`h = \sum_k 1/e_k`, which for two
levels is their :math:`1/(e(1-e))`. The rule keeps the rows where *every* level is
likely enough, :math:`\min_k p_k(w) \ge \gamma` (for two levels exactly
:math:`\gamma \le p \le 1 - \gamma`), with the :math:`\gamma` that minimises the sample
version of that variance over these sets; the public propensity is a multinomial
logistic regression.

See :class:`PublicTrimming` for an example.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit, softmax

from privinfer._frames import as_pandas
from privinfer._typing import FloatArray, IntArray
from privinfer._validation import check_in_interval, check_no_nan, plain_text
from privinfer.exceptions import DataMismatchError, MissingValueError, SingularDesignError
from privinfer.formula import _FORMULA_NAMES
from privinfer.mechanisms.alpha_identity import ATTRS_KEY, RELEASE_KEY, AlphaIdentity
from privinfer.models._inputs import order_treatment_levels, treatment_levels

__all__ = ["PublicTrimming", "TrimmingRule", "optimal_threshold"]

#: Ridge of the public propensity's logistic fit, relative to the number of rows (on
#: standardised columns, intercept free): finite fits for separated designs, a negligible
#: shrinkage otherwise.
DEFAULT_RIDGE = 1e-4
#: Fewest rows a treatment arm may keep.
MIN_ARM_ROWS = 10
#: A float treatment with more distinct values looks continuous (as in the models).
MAX_FLOAT_LEVELS = 20


def optimal_threshold(propensity: FloatArray) -> float:
    r"""Crump et al. (2009)'s trimming threshold :math:`\gamma` for propensities ``e``.

    With :math:`h = 1/(e(1-e))` sorted increasingly and :math:`\bar h_k` the mean of the
    :math:`k` smallest, :math:`E[h \mid h \le \lambda] = \bar h_k` for
    :math:`h_{(k)} \le \lambda < h_{(k+1)}`, so the sample version of
    :math:`\lambda = 2E[h \mid h \le \lambda]` is :math:`\lambda = 2\bar h_k` for the
    first :math:`k` with :math:`2\bar h_k < h_{(k+1)}`; then
    :math:`\gamma = 1/2 - \sqrt{1/4 - 1/\lambda}`. ``0.0`` when
    :math:`\max h \le 2\bar h_n` (trimming cannot lower the variance bound).

    With ``K >= 3`` treatment levels (``propensity`` of shape ``(n, K)``, rows summing to
    1) the sets are :math:`A_\gamma = \{\min_k e_k \ge \gamma\}` and :math:`h = \sum_k
    1/e_k`: the rows sorted by :math:`\min_k e_k` (largest first), the :math:`m` kept
    minimise :math:`\sum_{j \le m} h_j / m^2` (the sample variance bound of the module
    docstring), and :math:`\gamma` is the smallest :math:`\min_k e_k` kept (``0.0``
    when every row is kept). Two columns reduce to the binary rule on the second.

    Parameters
    ----------
    propensity : array of shape (n,) or (n, K)
        Propensities in (0, 1), or the generalised propensities of ``K`` levels.

    Returns
    -------
    float
        :math:`\gamma \in [0, 1/2)` (:math:`[0, 1/K)` for ``K`` levels).

    Examples
    --------
    >>> optimal_threshold(np.full(100, 0.5))                 # perfect overlap
    0.0
    >>> e = np.r_[np.full(90, 0.5), np.full(10, 0.005)]     # a tenth near zero
    >>> round(optimal_threshold(e), 4)                     # keeps the 0.5s only
    0.1464
    >>> e = np.linspace(0.01, 0.99, 999)                     # uniform propensities
    >>> round(optimal_threshold(e), 3)
    0.102
    >>> P = np.r_[np.full((90, 3), 1 / 3), np.tile([0.01, 0.49, 0.5], (10, 1))]
    >>> round(optimal_threshold(P), 4)                     # three levels: drops the 0.01s
    0.3333
    """
    e = np.asarray(propensity, dtype=float)
    if e.ndim == 2 and e.shape[1] == 2:  # two levels: the rule of Crump et al. itself
        e = e[:, 1]
    if e.ndim == 2:
        return _optimal_min_level(e)
    e = e.ravel()
    if e.size == 0 or np.any(~np.isfinite(e)) or np.any((e <= 0) | (e >= 1)):
        raise DataMismatchError("optimal_threshold: propensities must lie in (0, 1).")
    h = np.sort(1.0 / (e * (1.0 - e)))
    mean_below = np.cumsum(h) / np.arange(1, h.size + 1)
    if h[-1] <= 2.0 * mean_below[-1]:
        return 0.0
    k = int(np.flatnonzero(2.0 * mean_below[:-1] < h[1:])[0])
    lam = 2.0 * float(mean_below[k])
    return float(0.5 - np.sqrt(max(0.25 - 1.0 / lam, 0.0)))


def _optimal_min_level(P: FloatArray) -> float:
    r"""The optimal :math:`\gamma` of :func:`optimal_threshold` for ``K >= 3`` levels."""
    if (
        P.shape[0] == 0
        or P.shape[1] < 2
        or np.any(~np.isfinite(P))
        or np.any((P <= 0) | (P >= 1))
        or not np.allclose(P.sum(axis=1), 1.0, atol=1e-6)
    ):
        raise DataMismatchError(
            "optimal_threshold: generalised propensities must lie in (0, 1) and sum to 1 "
            "in every row."
        )
    low = P.min(axis=1)
    order = np.argsort(-low, kind="stable")
    low = low[order]
    h = (1.0 / P).sum(axis=1)[order]
    m = np.arange(1, low.size + 1)
    objective = np.cumsum(h) / m**2
    # a set keeps every row tied at its smallest level probability: ends of tie runs only
    ends = np.r_[low[1:] < low[:-1], True]
    best = int(np.flatnonzero(ends)[np.argmin(objective[ends])])
    return 0.0 if best == low.size - 1 else float(low[best])


def _newton_step(hess: FloatArray, grad: FloatArray) -> FloatArray:
    """``hess^{-1} grad``; a singular Hessian is a singular public design."""
    try:
        return np.linalg.solve(hess, grad)
    except np.linalg.LinAlgError as err:
        raise SingularDesignError(
            "PublicTrimming: the public propensity's design is singular (a constant "
            "or collinear column); drop it from the formula."
        ) from err


def _standardised(X: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
    """``X`` with columns 1..p centred and scaled, and the centres and scales.

    The first column (the intercept) stays 1; constant columns keep scale 1.
    """
    centre = np.r_[0.0, X[:, 1:].mean(axis=0)]
    scale = np.r_[1.0, X[:, 1:].std(axis=0)]
    scale[scale <= 1e-12] = 1.0
    Z = (X - centre) / scale
    Z[:, 0] = 1.0
    return Z, centre, scale


def _ridge_mlogit(X: FloatArray, codes: IntArray, n_levels: int, ridge: float) -> FloatArray:
    """Newton steps for a multinomial logistic regression (level 0 the base) with ridge
    ``ridge * n`` on columns 1..p of ``X`` (first column: the intercept; the others are
    standardised here). Returns the ``(p, K - 1)`` coefficients on the original scale.
    """
    n, p = X.shape
    K1 = n_levels - 1
    Z, centre, scale = _standardised(X)
    Y = np.eye(n_levels)[codes][:, 1:]
    pen = np.tile(np.r_[0.0, np.full(p - 1, ridge * n)], K1)  # level-major, like B.T.ravel()
    B = np.zeros((p, K1))
    share = np.clip(np.bincount(codes, minlength=n_levels) / n, 1e-6, None)
    B[0] = np.log(share[1:] / share[0])
    for _ in range(100):
        P = softmax(np.column_stack([np.zeros(n), Z @ B]), axis=1)[:, 1:]
        grad = (Z.T @ (Y - P)).T.ravel() - pen * B.T.ravel()
        hess = np.empty((K1 * p, K1 * p))
        for j in range(K1):
            for k in range(j, K1):
                w = P[:, j] * ((j == k) - P[:, k])
                block = (Z * w[:, None]).T @ Z
                hess[j * p : (j + 1) * p, k * p : (k + 1) * p] = block
                hess[k * p : (k + 1) * p, j * p : (j + 1) * p] = block
        hess[np.diag_indices_from(hess)] += pen
        step = _newton_step(hess, grad)
        B = B + step.reshape(K1, p).T
        if np.max(np.abs(step)) < 1e-10 * (1 + np.max(np.abs(B))):
            break
    coef = B / scale[:, None]
    coef[0] = B[0] - centre[1:] @ coef[1:]
    return coef


def _ridge_logit(X: FloatArray, d: FloatArray, ridge: float) -> FloatArray:
    """Newton steps for a logistic regression with ridge ``ridge * n`` on columns 1..p
    (``X``'s first column is the intercept; the others are standardised here).
    """
    n, p = X.shape
    Z, centre, scale = _standardised(X)
    pen = np.full(p, ridge * n)
    pen[0] = 0.0
    b = np.zeros(p)
    dbar = float(np.clip(d.mean(), 1e-6, 1 - 1e-6))
    b[0] = np.log(dbar / (1 - dbar))
    for _ in range(100):
        mu = expit(Z @ b)
        grad = Z.T @ (d - mu) - pen * b
        hess = (Z * (mu * (1 - mu))[:, None]).T @ Z + np.diag(pen)
        step = _newton_step(hess, grad)
        b = b + step
        if np.max(np.abs(step)) < 1e-10 * (1 + np.max(np.abs(b))):
            break
    coef = b / scale
    coef[0] = b[0] - float(coef[1:] @ centre[1:])
    return coef


def _chosen_threshold(
    threshold: float | str, propensity: FloatArray, upper: float, label: str, owner: str
) -> float:
    r"""The threshold :math:`\gamma` of a rule.

    A number in ``[0, upper)``, or ``"optimal"``: :func:`optimal_threshold` of the fitted
    ``propensity``.
    """
    if not isinstance(threshold, str):
        return check_in_interval(threshold, "threshold", owner, 0.0, upper, high_open=True)
    if threshold != "optimal":
        raise ValueError(
            f"{owner}: threshold must be a number in [0, {label}) or 'optimal'; got "
            f"{threshold!r}."
        )
    return optimal_threshold(propensity)


def _required_variables(rhs: str, formula: str, owner: str) -> set[str]:
    """The variables formulaic reads off the right-hand side ``rhs`` of ``formula``.

    Raises
    ------
    DataMismatchError
        ``rhs`` is not a formula (the message is plain text, without formulaic's
        terminal colour codes).

    Examples
    --------
    >>> sorted(_required_variables("w + C(region)", "d ~ w + C(region)", "demo"))
    ['region', 'w']
    """
    import formulaic

    try:
        return {str(v) for v in formulaic.Formula(rhs).required_variables}
    except Exception as err:  # formulaic raises several types for bad formulas
        raise DataMismatchError(
            f"{owner}: cannot parse formula {formula!r}: {plain_text(err)}"
        ) from err


def _used_columns(rhs: str, frame: pd.DataFrame, formula: str, owner: str) -> set[str]:
    """The columns of ``frame`` that the right-hand side ``rhs`` uses, from its design.

    Before a formula meets data, formulaic names no variable inside a stateful transform
    (``bs(x, df=4)``, ``center(x)``, ``poly(x, 2)``): a private column there would pass
    the check of public columns unseen. The spec of the materialised design lists them.

    Raises
    ------
    DataMismatchError
        The terms cannot be evaluated on ``frame`` (e.g. a column inside a transform is
        missing).

    Examples
    --------
    >>> frame = pd.DataFrame({"x": np.linspace(0, 1, 20), "w": np.arange(20.0)})
    >>> sorted(_used_columns("w + bs(x, df=4)", frame, "d ~ w + bs(x, df=4)", "demo"))
    ['w', 'x']
    """
    import formulaic

    try:  # missing values are reported afterwards, column by column
        mm = formulaic.model_matrix("1 + " + rhs, frame, na_action="ignore")
    except Exception as err:  # formulaic raises several types
        raise DataMismatchError(
            f"{owner}: the terms of {formula!r} cannot be evaluated on the data "
            f"({plain_text(err)})."
        ) from err
    return {str(v) for v in mm.model_spec.variables} & {str(c) for c in frame.columns}


def _private_columns(data: pd.DataFrame, mechanism: AlphaIdentity | None) -> set[str]:
    """Private columns known from the mechanism or the release's metadata."""
    cols: set[str] = set()
    if mechanism is not None:
        cols |= set(map(str, mechanism.private_columns))
    desc = data.attrs.get(RELEASE_KEY)
    if isinstance(desc, dict):
        cols |= set(map(str, desc.get("private", [])))
    mech = data.attrs.get(ATTRS_KEY)
    if mech is not None:
        # an unreadable description: the models report it
        with contextlib.suppress(Exception):
            cols |= set(map(str, AlphaIdentity.from_dict(mech).private_columns))
    return cols


@dataclass(frozen=True)
class TrimmingRule:
    r"""A fitted public trimming rule: keep the rows with :math:`p(w)` within bounds.

    Attributes
    ----------
    formula : str
        The propensity formula (treatment on public columns).
    threshold : float
        :math:`\gamma`.
    side : str
        ``"both"`` (keep :math:`\gamma \le p \le 1 - \gamma`), ``"upper"`` (drop
        :math:`p > 1 - \gamma` only: controls missing, the ATT's problem) or ``"lower"``,
        with :math:`p` the probability of the treated level (``arms[1]``). With three or
        more levels always ``"both"``: keep :math:`\min_k p_k(w) \ge \gamma`.
    bounds : tuple of float
        The propensity bounds of the rows kept (of every level's probability, with
        three or more levels: :math:`[\gamma, 1 - (K - 1)\gamma]`).
    coef : pandas.Series or pandas.DataFrame
        Logistic coefficients of the public propensity, by design column (with three or
        more levels, the multinomial logit's: one column per level against the first).
    n_rows, n_kept : int
        Rows the rule was fitted on, and rows it keeps there.
    kept_by_arm : dict
        Rows kept per treatment value (of those the rule was fitted on), keyed by
        ``arms`` for a binary treatment.
    max_h : float
        :math:`\max 1/(p(1-p))` over the rows kept (over all rows: ``max_h_all``); the
        efficient variance of an average effect grows with its mean. With three or more
        levels :math:`\max \sum_k 1/p_k`.
    levels : tuple
        The treatment's levels when it has three or more, the reference level (the
        multinomial logit's base) first; empty for a binary one.
    arms : tuple
        A binary treatment's two levels, control first and treated second (``(0, 1)``
        for a 0/1 or boolean treatment with the default ``reference_level``, ``(1, 0)``
        with ``reference_level=1``); empty with three or more levels.

    Examples
    --------
    >>> import numpy as np, pandas as pd, privinfer as pi
    >>> rng = np.random.default_rng(2)
    >>> w = rng.normal(size=500)
    >>> df = pd.DataFrame({"d": (rng.random(500) < 1 / (1 + np.exp(-4 * w))).astype(int),
    ...                    "w": w})
    >>> rule = pi.PublicTrimming.from_formula("d ~ w", df).fit(threshold=0.1)
    >>> rule.bounds, rule.share_kept < 1
    ((0.1, 0.9), True)
    >>> new = pd.DataFrame({"w": [-3.0, 0.0, 3.0]})         # public columns suffice
    >>> rule.keep(new).tolist()
    [False, True, False]
    """

    formula: str
    threshold: float
    side: str
    bounds: tuple[float, float]
    coef: pd.Series
    n_rows: int
    n_kept: int
    kept_by_arm: dict[Any, int]
    max_h: float
    max_h_all: float
    _spec: Any = field(repr=False, compare=False)
    levels: tuple[Any, ...] = ()
    arms: tuple[Any, ...] = ()

    @property
    def share_kept(self) -> float:
        """Share of the rows kept."""
        return self.n_kept / self.n_rows

    def propensity(self, data: Any) -> FloatArray:
        """The public propensity :math:`p(w)` at the rows of ``data`` (public columns only).

        With three or more levels: the ``(n, K)`` matrix of :math:`p_k(w)`.
        """
        frame = as_pandas(data, "TrimmingRule.propensity")
        try:  # the spec raises on missing values (never drops rows)
            X = np.asarray(self._spec.get_model_matrix(frame), dtype=float)
        except Exception as err:
            if frame.isna().to_numpy().any():
                raise MissingValueError(
                    "TrimmingRule.propensity: the public columns of these data have missing "
                    "values; a row without them cannot be placed by the rule."
                ) from err
            raise DataMismatchError(
                f"TrimmingRule.propensity: the rule's public terms cannot be evaluated on "
                f"these data ({plain_text(err)}). Splines need values inside the fitted range "
                "unless they were given extrapolation='clip' in the formula."
            ) from err
        if X.shape[0] != len(frame) or np.any(~np.isfinite(X)):
            raise MissingValueError(
                "TrimmingRule.propensity: the public columns of these data have missing or "
                "infinite values; a row without them cannot be placed by the rule."
            )
        if self.levels:
            eta = X @ self.coef.to_numpy()
            return softmax(np.column_stack([np.zeros(X.shape[0]), eta]), axis=1)
        return expit(X @ self.coef.to_numpy())

    def keep(self, data: Any) -> np.ndarray:
        """Boolean mask of the rows of ``data`` inside the bounds."""
        p = self.propensity(data)
        lo, hi = self.bounds
        if self.levels:
            return p.min(axis=1) >= lo
        return (p >= lo) & (p <= hi)

    def apply(self, data: Any) -> pd.DataFrame:
        """The rows of ``data`` inside the bounds, with the release's metadata.

        Rows are selected on public columns only, so the rows kept are an alpha-identity
        release of the subpopulation and carry the same mechanism.
        """
        frame = as_pandas(data, "TrimmingRule.apply")
        out = frame.loc[self.keep(frame)]
        out.attrs = dict(frame.attrs)
        return out

    def plot(self, data: Any, *, ax: Any = None) -> Any:
        """:func:`privinfer.plotting.trimming_plot` of this rule on ``data``."""
        from privinfer.plotting import trimming_plot

        return trimming_plot(self, as_pandas(data, "TrimmingRule.plot"), ax=ax)

    def summary(self) -> str:
        """A short text report: threshold, bounds, rows kept by arm, the overlap gain."""
        lo, hi = self.bounds
        arms = ", ".join(f"{k}: {v}" for k, v in self.kept_by_arm.items())
        multi = bool(self.levels)
        lines = [
            "Public trimming rule (Crump, Hotz, Imbens and Mitnik, 2009)",
            "=" * 60,
            f"Propensity model:      {self.formula} "
            f"({'multinomial logistic' if multi else 'logistic'}, public columns)",
            f"Threshold gamma:       {self.threshold:.4f} ({self.side})",
            f"Kept:                  every level's p_k(w) >= {lo:.4f}"
            if multi
            else f"Kept:                  {lo:.4f} <= p(w) <= {hi:.4f}",
            f"Rows kept:             {self.n_kept} of {self.n_rows} ({self.share_kept:.1%})",
            f"Rows kept by arm:      {arms}",
            f"{'max sum_k 1/p_k:' if multi else 'max 1/(p(1-p)):':<23}"
            f"{self.max_h:.1f} kept, {self.max_h_all:.1f} all rows",
            "The estimand becomes the effect on the rows kept: a subpopulation defined",
            "by public covariates only.",
        ]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.summary()

    def __repr__(self) -> str:
        return (
            f"TrimmingRule(formula={self.formula!r}, threshold={self.threshold:.4g}, "
            f"side={self.side!r}, kept={self.n_kept}/{self.n_rows})"
        )


class PublicTrimming:
    r"""A trimming rule from a propensity model on public columns (Crump et al., 2009).

    Parameters
    ----------
    formula : str
        ``"treatment ~ public terms"`` in formulaic syntax, e.g.
        ``"d ~ bs(age, df=4) + C(region)"``. Every variable must be a public column.
    data : DataFrame-like
        The release (or any frame with the treatment and the public columns).
    mechanism : AlphaIdentity, optional
        The release's mechanism, read from the data's metadata when omitted: its private
        columns may not enter the formula.
    reference_level : optional
        The control level, as the models' ``reference_level``: pass the one the effect
        will be estimated with. With two levels the other level is treated, so
        :math:`p(w)` and ``side`` refer to it (see Notes); with three or more it comes
        first in ``TrimmingRule.levels`` and is the base of the multinomial logit (the
        rows kept do not depend on it, up to the ridge). Default: the first level.

    Raises
    ------
    DataMismatchError
        A formula that cannot be parsed, a private column in the formula, a missing
        column, a treatment with a single value, a float treatment with so many values
        that it looks continuous, or a ``reference_level`` the treatment does not take.
    MissingValueError
        Missing values in the treatment or the public columns.

    See Also
    --------
    TrimmingRule, optimal_threshold

    Notes
    -----
    A two-level treatment is coded as in :class:`~privinfer.PrivateATE` and
    :class:`~privinfer.PrivateATT` (with the default ``reference_level``): its levels in
    sorted order, or in the order of its categories for a categorical column, the
    first one the control and the second one treated. So 0/1 and ``False``/``True``
    treat 1 and ``True``, ``"control"``/``"treated"`` treat ``"treated"``, and
    ``"no"``/``"yes"`` treat ``"yes"``; a column of ``"treated"``/``"untreated"`` treats
    ``"untreated"`` (pass ``reference_level="untreated"``, here and to the model, or make
    it a categorical with the control first, to reverse that). The
    propensity :math:`p(w)` is the probability of the treated level, so
    ``side="upper"`` drops the rows almost surely treated (few controls: the ATT's
    problem) and ``side="lower"`` those almost surely control; ``TrimmingRule.arms``
    says which level is which.

    Examples
    --------
    >>> import numpy as np, pandas as pd, privinfer as pi
    >>> rng = np.random.default_rng(0)
    >>> n = 4000
    >>> w = rng.normal(size=n)                                  # a public confounder
    >>> x = rng.uniform(0, 1, n)                                # a private covariate
    >>> d = (rng.random(n) < 1 / (1 + np.exp(-3 * w))).astype(int)
    >>> y = x + w + d * (1 + w) + rng.normal(size=n)
    >>> mech = pi.AlphaIdentity(0.7, {"x": pi.reference.Uniform(0, 1)})
    >>> released = mech.privatize(pd.DataFrame({"y": y, "d": d, "x": x, "w": w}),
    ...                           public=["y", "d", "w"], random_state=1)
    >>> rule = pi.PublicTrimming.from_formula("d ~ w", released).fit()
    >>> round(rule.threshold, 3), rule.n_kept < n
    (0.087, True)
    >>> kept = rule.apply(released)                             # rows with p(w) in bounds
    >>> res = pi.PrivateATE.from_formula("y ~ d | x + w", kept).fit(random_state=0)
    >>> bool(rule.bounds[0] <= rule.propensity(kept).min())
    True

    A control level that does not come first is named as for the models:

    >>> words = released.assign(d=np.where(released["d"] == 1, "treated", "untreated"))
    >>> pi.PublicTrimming.from_formula("d ~ w", words, reference_level="untreated").fit().arms
    ('untreated', 'treated')

    Three doses that the public ``w`` pushes apart: a multinomial public propensity, and
    the rule keeps the rows whose every dose has probability at least :math:`\gamma`.

    >>> eta = np.column_stack([np.zeros(n), 1.5 * w, -2.0 * w])
    >>> u = rng.random(n)[:, None]
    >>> dose = (u > np.cumsum(np.exp(eta) / np.exp(eta).sum(1, keepdims=True), 1)).sum(1)
    >>> three = pd.DataFrame({"dose": dose, "w": w})
    >>> rule3 = pi.PublicTrimming.from_formula("dose ~ w", three).fit()
    >>> rule3.levels, bool(rule3.propensity(rule3.apply(three)).min() >= rule3.threshold)
    ((0, 1, 2), True)
    """

    def __init__(
        self,
        formula: str,
        data: Any,
        *,
        mechanism: AlphaIdentity | None = None,
        reference_level: Any = None,
    ) -> None:
        owner = "PublicTrimming"
        frame = as_pandas(data, owner)
        if not isinstance(formula, str) or "~" not in formula:
            raise DataMismatchError(
                f"{owner}: formula must read 'treatment ~ public terms'; got {formula!r}."
            )
        lhs, rhs = (s.strip() for s in formula.split("~", 1))
        if lhs not in frame.columns:
            raise DataMismatchError(f"{owner}: treatment column {lhs!r} is not in the data.")
        private = _private_columns(frame, mechanism)
        needed = _required_variables(rhs, formula, owner)
        missing = needed - {str(c) for c in frame.columns} - _FORMULA_NAMES
        if missing:
            raise DataMismatchError(
                f"{owner}: column(s) {sorted(missing)} of the formula are not in the data."
            )
        used = _used_columns(rhs, frame, formula, owner)
        bad = sorted((used | {lhs}) & private)
        if bad:
            raise DataMismatchError(
                f"{owner}: column(s) {bad} are private. A trimming rule must use public "
                "columns only: rows selected on released private values (true values and "
                "reference draws alike) are no longer a release of any subpopulation, and "
                "estimates on them would be biased."
            )
        d_raw = frame[lhs]
        if d_raw.isna().any():
            raise MissingValueError(f"{owner}: the treatment {lhs!r} has missing values.")
        levels, codes = np.unique(d_raw.to_numpy(), return_inverse=True)
        if pd.api.types.is_float_dtype(d_raw.dtype) and levels.size > MAX_FLOAT_LEVELS:
            raise DataMismatchError(
                f"{owner}: the treatment {lhs!r} looks continuous ({levels.size} distinct "
                "values); it must be binary or categorical."
            )
        if levels.size < 2:
            raise DataMismatchError(
                f"{owner}: the treatment {lhs!r} takes a single value {levels.tolist()!r}; "
                "it needs two levels (control and treated) or more."
            )
        arms: tuple[Any, ...] = ()
        d = None
        if levels.size == 2:  # the models' coding: the second level is treated
            found, codes = treatment_levels(d_raw, reference_level, owner)
            d = codes.astype(float)
            arms = tuple(int(v) for v in found) if set(found) == {0, 1} else tuple(found)
        elif reference_level is not None:  # the base of the multinomial logit first
            order = order_treatment_levels(levels.tolist(), d_raw, reference_level, owner)
            codes = np.asarray([order.index(v) for v in levels])[codes]
            levels = np.asarray(order, dtype=levels.dtype)
        for col in sorted(used):
            if frame[col].isna().any():
                raise MissingValueError(
                    f"{owner}: public column {col!r} has missing values; drop or impute "
                    "them (by a public rule) first."
                )
        self.formula, self.treatment = formula, lhs
        self._frame, self._d = frame, d
        self._levels = tuple(levels.tolist()) if d is None else ()
        self._arms = arms
        self._codes = codes.astype(np.int64)
        self._rhs = rhs

    @classmethod
    def from_formula(
        cls,
        formula: str,
        data: Any,
        *,
        mechanism: AlphaIdentity | None = None,
        reference_level: Any = None,
    ) -> PublicTrimming:
        """Same as the constructor (the models' spelling)."""
        return cls(formula, data, mechanism=mechanism, reference_level=reference_level)

    def fit(
        self,
        threshold: float | str = "optimal",
        *,
        side: str = "both",
        ridge: float = DEFAULT_RIDGE,
    ) -> TrimmingRule:
        r"""Fit the public propensity and choose the bounds.

        Parameters
        ----------
        threshold : float or "optimal", default="optimal"
            :math:`\gamma \in [0, 0.5)`; ``"optimal"``: :func:`optimal_threshold` of the
            fitted propensities (Crump et al., 2009; about 0.1 in many applications).
            With ``K >= 3`` treatment levels :math:`\gamma \in [0, 1/K)`, and the rule
            keeps the rows whose every level has :math:`p_k(w) \ge \gamma`.
        side : {"both", "upper", "lower"}, default="both"
            ``"both"`` for average effects over the population (ATE, potential-outcome
            means); ``"upper"`` drops only propensities above :math:`1 - \gamma` (no
            controls to compare with: the ATT's problem); ``"lower"`` only those below
            :math:`\gamma`. The propensity is that of the treated level (the second
            level; see the class's Notes). Only ``"both"`` with three or more levels.
        ridge : float, default=1e-4
            Ridge of the logistic fit on standardised columns, times the number of rows.

        Returns
        -------
        TrimmingRule

        Raises
        ------
        DataMismatchError
            A treatment arm keeps fewer than 10 rows.
        """
        owner = "PublicTrimming.fit"
        import formulaic

        if side not in ("both", "upper", "lower"):
            raise ValueError(f"{owner}: side must be 'both', 'upper' or 'lower'; got {side!r}.")
        ridge = check_in_interval(ridge, "ridge", owner, 0.0, np.inf)
        mm = formulaic.model_matrix("1 + " + self._rhs, self._frame, na_action="raise")
        X = np.asarray(mm, dtype=float)
        check_no_nan(X, "public design", owner)
        if self._levels:
            return self._fit_levels(X, mm, threshold, side, float(ridge))
        coef = _ridge_logit(X, self._d, float(ridge))
        p = expit(X @ coef)
        p_in = np.clip(p, 1e-12, 1 - 1e-12)
        gamma = _chosen_threshold(threshold, p_in, 0.5, "0.5", owner)
        lo = gamma if side in ("both", "lower") else 0.0
        hi = 1.0 - gamma if side in ("both", "upper") else 1.0
        keep = (p >= lo) & (p <= hi)
        d = self._d
        arms = {a: int(np.sum(keep & (d == v))) for v, a in enumerate(self._arms)}
        if min(arms.values()) < MIN_ARM_ROWS:
            raise DataMismatchError(
                f"{owner}: the rule keeps {arms} rows per treatment arm; at least "
                f"{MIN_ARM_ROWS} of each are needed. Choose a smaller threshold or a "
                "coarser propensity formula."
            )
        h = 1.0 / (p_in * (1.0 - p_in))
        return TrimmingRule(
            formula=self.formula,
            threshold=float(gamma),
            side=side,
            bounds=(float(lo), float(hi)),
            coef=pd.Series(coef, index=list(mm.columns)),
            n_rows=int(p.size),
            n_kept=int(keep.sum()),
            kept_by_arm=arms,
            max_h=float(h[keep].max()),
            max_h_all=float(h.max()),
            _spec=mm.model_spec,
            arms=self._arms,
        )

    def _fit_levels(
        self, X: FloatArray, mm: Any, threshold: float | str, side: str, ridge: float
    ) -> TrimmingRule:
        """:meth:`fit` for a treatment with ``K >= 3`` levels (multinomial propensity)."""
        owner = "PublicTrimming.fit"
        levels, K = self._levels, len(self._levels)
        if side != "both":
            raise ValueError(
                f"{owner}: side={side!r} trims one end of a binary propensity (the ATT's "
                f"problem); with {K} treatment levels the rule keeps the rows whose every "
                "level is likely enough: use side='both'."
            )
        coef = _ridge_mlogit(X, self._codes, K, ridge)
        P = softmax(np.column_stack([np.zeros(X.shape[0]), X @ coef]), axis=1)
        P_in = np.clip(P, 1e-12, None)
        P_in = P_in / P_in.sum(axis=1, keepdims=True)
        gamma = _chosen_threshold(threshold, P_in, 1.0 / K, f"1/{K}", owner)
        keep = P.min(axis=1) >= gamma
        arms = {v: int(np.sum(keep & (self._codes == k))) for k, v in enumerate(levels)}
        if min(arms.values()) < MIN_ARM_ROWS:
            raise DataMismatchError(
                f"{owner}: the rule keeps {arms} rows per treatment level; at least "
                f"{MIN_ARM_ROWS} of each are needed. Choose a smaller threshold or a "
                "coarser propensity formula."
            )
        h = (1.0 / P_in).sum(axis=1)
        return TrimmingRule(
            formula=self.formula,
            threshold=float(gamma),
            side="both",
            bounds=(float(gamma), float(1.0 - (K - 1) * gamma)),
            coef=pd.DataFrame(coef, index=list(mm.columns), columns=list(levels[1:])),
            n_rows=int(P.shape[0]),
            n_kept=int(keep.sum()),
            kept_by_arm=arms,
            max_h=float(h[keep].max()),
            max_h_all=float(h.max()),
            _spec=mm.model_spec,
            levels=levels,
        )
