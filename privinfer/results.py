r"""Results objects shared by every privinfer estimator.

A :class:`PrivateResults` is built from a typed, frozen :class:`ResultsRecord` that the
estimator hands over; it knows how an estimate was produced only through that record.
Standard errors come from the :math:`Q_X^{-1}`-transformed influence values
:math:`\varphi_i`: :math:`\widehat{\mathrm{Var}} = \frac1{n^2}\sum_i \varphi_i\varphi_i'`
(summed within clusters first when the record carries public cluster codes).
The same influence values drive the multiplier bootstrap (:meth:`PrivateResults.bootstrap`),
simultaneous intervals, multiple-testing adjustments and the combination of estimates
fitted on the same rows (``res_ate - res_att``). Results never hold raw private values or
the input frame; a data fingerprint (a hash of public columns) identifies the rows.

The records live in :mod:`privinfer._records`, the bootstrap arithmetic in
:mod:`privinfer._bootstrap`, :func:`compare` in :mod:`privinfer.comparison` and the
bias-aware contrasts of ``t_test`` (:class:`BiasAwareContrastResults`) in
:mod:`privinfer._hypotheses`; every public name is importable from here.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import replace
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm
from statsmodels.iolib.summary import Summary
from statsmodels.iolib.table import SimpleTable

from privinfer._bootstrap import (
    BOOT_METHODS,
    BootstrapMethod,
    multiplier_t_stats,
    romano_wolf,
    warn_few_draws,
)
from privinfer._critical import (
    bias_aware_critical_value,
    bias_aware_pvalue,
    bias_aware_supt_critical_value,
    zero_se_half_width,
)
from privinfer._hypotheses import BiasAwareContrastResults, PostEstimationMixin, describe_bounds
from privinfer._records import (
    BootstrapDraws,
    Diagnostics,
    ResultsRecord,
    TestResult,
    data_fingerprint,
)
from privinfer._tables import ModelLabel
from privinfer._typing import IntArray, RandomStateLike
from privinfer._validation import check_int, check_level, check_random_state
from privinfer.comparison import ComparisonResults, compare
from privinfer.covariance import influence_cov
from privinfer.exceptions import BootstrapError, DataMismatchError

__all__ = [
    "BiasAwareContrastResults",
    "BootstrapDraws",
    "ComparisonResults",
    "Diagnostics",
    "PrivateResults",
    "ResultsRecord",
    "TestResult",
    "compare",
    "data_fingerprint",
    "influence_cov",
]


class PrivateResults(PostEstimationMixin):
    """Estimates, standard errors and intervals from a private estimator.

    Parameters
    ----------
    record : ResultsRecord
        Built by the estimator.

    Examples
    --------
    >>> import pandas as pd, numpy as np
    >>> rec = ResultsRecord("Demo", "y", pd.Series({"mean": 1.0}),
    ...                     np.array([[1.0], [-1.0]]), {"alpha": 1.0}, None, (),
    ...                     Diagnostics(), pd.DataFrame())
    >>> round(float(PrivateResults(rec).bse["mean"]), 3)  # sqrt(2) / 2
    0.707
    """

    def __init__(self, record: ResultsRecord) -> None:
        self._record = record

    @property
    def _bias_widened(self) -> bool:
        """Whether any interval is widened for an estimated regularisation bias."""
        bound = self._record.bias_bound
        return bound is not None and bool((bound > 0).any())

    def _bias_over_se(self) -> np.ndarray:
        r""":math:`B_j/se_j` per parameter, 0 where that is not a finite number.

        Zero for no bound and for a NaN SE (as before), and for :math:`se_j = 0 < B_j`,
        whose interval is :math:`\pm B_j` instead (:func:`zero_se_half_width`).
        """
        with np.errstate(divide="ignore", invalid="ignore"):
            t = (self._record.bias_bound / self.bse).to_numpy(dtype=float)
        return np.where(np.isfinite(t), t, 0.0)

    def _half_widths(self, crit: Any) -> pd.Series:
        """``crit * bse``; :math:`B_j` where :math:`se_j = 0 < B_j` (the limit)."""
        half = crit * self.bse
        if not self._bias_widened:
            return half
        return pd.Series(
            zero_se_half_width(half.to_numpy(), self._record.bias_bound.to_numpy(), self.bse),
            index=half.index,
        )

    def _bias_note(self) -> str:
        """The summary's note on intervals widened for a bias bound ("" when none is)."""
        if not self._bias_widened:
            return ""
        bound = self._record.bias_bound
        wide = describe_bounds(list(bound.index), bound.to_numpy(), self.bse.to_numpy())
        return (
            f"Intervals widened for an estimated regularisation bias: {wide}; bias-aware "
            "critical values and p-values (Armstrong and Kolesar, 2020): P>|z| is the "
            "worst case over the bias bound, while z is coef / std err."
        )

    # -- core quantities ---------------------------------------------------------------
    @property
    def model(self) -> str:
        """Name of the estimator (a ``str`` that also carries statsmodels' ``endog_names``)."""
        return ModelLabel(
            self._record.model, self._record.dep_variable, list(self._record.params.index)
        )

    @property
    def params(self) -> pd.Series:
        """Point estimates."""
        return self._record.params.copy()

    @property
    def nobs(self) -> int:
        """Number of released observations."""
        return int(self._record.influence.shape[0])

    @property
    def influence(self) -> pd.DataFrame:
        r"""Centred transformed influence values :math:`\varphi_i` (n x p).

        With Dask input the fit keeps them lazy (only their reductions were computed);
        this property then computes them, one more pass over the data.
        """
        return pd.DataFrame(np.asarray(self._record.influence), columns=self._record.params.index)

    @cached_property
    def cov(self) -> pd.DataFrame:
        r"""Covariance of the estimates, :math:`\sum_i \varphi_i\varphi_i' / n^2`."""
        if self._record.cov_override is not None:
            return self._record.cov_override.copy()
        names = self._record.params.index
        cov = influence_cov(self._record.influence, self._record.clusters)
        return pd.DataFrame(cov, index=names, columns=names)

    @cached_property
    def bse(self) -> pd.Series:
        """Standard errors."""
        return pd.Series(np.sqrt(np.diag(self.cov)), index=self._record.params.index)

    @property
    def std_errors(self) -> pd.Series:
        """Alias of :attr:`bse` (linearmodels' name)."""
        return self.bse

    @cached_property
    def tvalues(self) -> pd.Series:
        """Z statistics for the null of zero."""
        return self.params / self.bse

    @cached_property
    def pvalues(self) -> pd.Series:
        r"""Two-sided p-values for the null of zero; bias-aware where a bias bound is reported.

        A parameter without a bias bound (or with :math:`B_j = 0`) gets the normal
        p-value :math:`2\Phi(-|z_j|)`. A parameter whose interval :meth:`conf_int` widens
        for a bound :math:`B_j > 0` gets the p-value that inverts that bias-aware
        interval, so the two never disagree: the interval at level ``a`` excludes zero
        exactly when the p-value is below ``a``. :attr:`tvalues` stays
        :math:`\hat\psi_j/\mathrm{se}_j`.

        Notes
        -----
        With :math:`z = \hat\psi_j/\mathrm{se}_j` and :math:`t = B_j/\mathrm{se}_j`, the
        worst case over biases :math:`|b| \le B_j` of :math:`P(|N(b/\mathrm{se}_j, 1)| \ge
        |z|)` is attained at :math:`|b| = B_j`:

        .. math:: p_j = P(|N(t, 1)| \ge |z|) = \Phi(t - |z|) + \Phi(-|z| - t),

        which is :math:`2\Phi(-|z|)` at :math:`t = 0`. The bias-aware interval uses the
        critical value :math:`c` solving :math:`\Phi(c - t) - \Phi(-c - t) = 1 - a`
        (the 1 - ``a`` quantile of :math:`|N(t, 1)|`; Armstrong and Kolesar, 2020), so
        :math:`|z| > c` if and only if :math:`p_j < a`: ``p_j`` is the smallest level at
        which the bias-aware interval excludes zero. A large bound therefore keeps the
        p-value high however large :math:`|z|` is, until :math:`|z|` clears :math:`t`.
        A standard error of zero with :math:`B_j > 0` gives the limit as
        :math:`\mathrm{se}_j \to 0`, matching the interval :math:`\hat\psi_j \pm B_j` of
        :meth:`conf_int`: :math:`p_j = 0` when :math:`|\hat\psi_j| > B_j`, else 1.

        References
        ----------
        Armstrong, T. B. and Kolesar, M. (2020). Simple and honest confidence intervals
        in nonparametric regression. *Quantitative Economics* 11(1), 1-39.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> phi = np.random.default_rng(0).normal(size=(400, 2))
        >>> rec = ResultsRecord("Demo", "y", pd.Series({"a": 0.15, "b": 0.15}),
        ...                     phi - phi.mean(0), {"alpha": 1.0}, None, (), Diagnostics(),
        ...                     pd.DataFrame(), bias_bound=pd.Series({"a": 0.0, "b": 0.1}))
        >>> p = PrivateResults(rec).pvalues
        >>> bool(p["a"] < 0.05 < p["b"])  # same z; only b's bound keeps 0 in its interval
        True
        """
        z = self.tvalues
        plain = pd.Series(2 * norm.sf(np.abs(z)), index=self.params.index)
        if not self._bias_widened:
            return plain
        bound = self._record.bias_bound.to_numpy(dtype=float)
        aware = bias_aware_pvalue(self.params.to_numpy(dtype=float), bound, self.bse.to_numpy())
        # parameters without a bound keep the normal p-value bit for bit
        return pd.Series(np.where(bound > 0, aware, plain.to_numpy()), index=self.params.index)

    @property
    def diagnostics(self) -> Diagnostics:
        """Gram repairs, clipping, fit quality, reference error, repeated-split spread."""
        return self._record.diagnostics

    @property
    def mechanism(self) -> dict[str, Any]:
        """Description of the mechanism (``AlphaIdentity.to_dict()``)."""
        return dict(self._record.mechanism)

    @property
    def guarantees(self) -> Any:
        """Privacy guarantees of the mechanism."""
        return self._record.guarantees

    @property
    def rep_params(self) -> pd.DataFrame:
        """Estimates of each repeated cross-fitting split."""
        return self._record.rep_params.copy()

    @property
    def tests(self) -> dict[str, TestResult]:
        """Test statistics reported with the estimates, by key."""
        return dict(self._record.tests)

    @property
    def j_test(self) -> TestResult:
        """Hansen's J-test of overidentifying restrictions (or why it does not apply)."""
        found = self._record.tests.get("j_test")
        if found is not None:
            return found
        return TestResult(
            "Hansen J-test of overidentifying restrictions",
            float("nan"),
            0,
            float("nan"),
            "all moment conditions hold",
            reason=f"{self.model} reports no J-test",
        )

    @property
    def first_stage(self) -> pd.DataFrame:
        """First-stage strength per endogenous regressor (empty when not an IV fit)."""
        rows = {
            key[len("first_stage[") : -1]: {"partial F": t.stat, "df": t.df, "pvalue": t.pvalue}
            for key, t in self._record.tests.items()
            if key.startswith("first_stage[")
        }
        return pd.DataFrame.from_dict(rows, orient="index", columns=["partial F", "df", "pvalue"])

    def conf_int(self, alpha: float = 0.05, *, joint: bool = False) -> pd.DataFrame:
        r"""Confidence intervals; ``alpha`` is the significance level, not the keep probability.

        Parameters
        ----------
        alpha : float, default=0.05
            Significance level (1 - coverage). The mechanism's keep probability is
            reported in :meth:`summary` as "Keep prob. (alpha)".
        joint : bool, default=False
            Simultaneous (sup-t) intervals that cover all parameters at once with
            probability 1 - ``alpha``: the critical value is the 1 - ``alpha`` quantile of
            ``max_j |t*_bj|`` over the draws of :meth:`bootstrap`, which must have
            been run (DoubleML's ``confint(joint=True)``), and at least the pointwise
            normal critical value (which the quantile of a few draws can fall below). With
            bias bounds (below) the critical value is the bias-aware sup-t one, so that the
            band covers all parameters at once whatever the biases within their bounds.

        Returns
        -------
        DataFrame
            Columns ``lower`` and ``upper``, one row per parameter.

        Raises
        ------
        BootstrapError
            ``joint=True`` on results without bootstrap draws.

        Warns
        -----
        FewBootstrapDrawsWarning
            ``joint=True`` with fewer than 10 draws beyond the 1 - ``alpha`` quantile
            (``n_boot * alpha < 10``, e.g. ``n_boot < 200`` at 0.05); the message names
            the ``n_boot`` needed.

        Notes
        -----
        When the estimator reported a bias bound :math:`B_j > 0` (regularisation that the
        data could not undo), the pointwise interval is bias-aware (Armstrong and
        Kolesar, 2020): :math:`\hat\psi_j \pm c_j\,\mathrm{se}_j` with :math:`c_j` the
        1 - ``alpha`` quantile of :math:`|N(B_j/\mathrm{se}_j, 1)|`, which covers whatever
        the bias within the bound; :meth:`summary` says when this happened.

        The joint band under bias bounds is :math:`\hat\psi_j \pm c\,\mathrm{se}_j` with
        :math:`c` the smallest value such that, for every bias vector in the box
        :math:`|b_j| \le B_j`, :math:`P(\max_j |t^*_j + b_j/\mathrm{se}_j| \le c) \ge
        1 - \alpha` over the bootstrap draws: the worst case is at a vertex
        :math:`b_j = \pm B_j` (the probability is log-concave in :math:`b` for Gaussian
        draws; Prékopa, 1973), and the :math:`2^{k-1}` sign patterns of the :math:`k`
        bounded parameters are enumerated, on the draws and their negatives, up to
        :math:`k = 12`. Above that the critical value is the smaller of two conservative
        ones: the sup-t quantile plus :math:`\max_j B_j/\mathrm{se}_j` (triangle
        inequality), and the largest pointwise bias-aware critical value at level
        :math:`\alpha/k` (a union bound over the parameters). Taking
        :math:`\max(c_j, z_{\text{sup-t}})` per parameter, as before, did not cover all
        parameters at once: with three correlated parameters biased by one SE each it
        covered about 0.86 at the 0.95 level. A second simultaneous band shifts each
        parameter's half-length by its own bound instead:
        :math:`\hat\psi_j \pm (z_{\text{sup-t}} + B_j/\mathrm{se}_j)\,\mathrm{se}_j`
        (if :math:`\max_j|t^*_j| \le z_{\text{sup-t}}` then
        :math:`|t^*_j + b_j/\mathrm{se}_j| \le z_{\text{sup-t}} + B_j/\mathrm{se}_j` for
        every :math:`j`), which leaves parameters without a bound at the plain sup-t width;
        the band returned is the one of the two with the smaller total length
        :math:`\sum_j c_j\,\mathrm{se}_j`, a choice that depends on the standard
        errors, bounds and draws but not on the estimates. The joint interval is never
        narrower than the parameter's pointwise bias-aware interval nor than the band
        without bounds.

        A parameter with :math:`\mathrm{se}_j = 0` and :math:`B_j > 0` (no noise, only
        the bias) gets :math:`\hat\psi_j \pm B_j`, pointwise and joint: the limit of
        :math:`c_j\,\mathrm{se}_j` as :math:`\mathrm{se}_j \to 0`, and an interval that
        covers whatever the bias within the bound.
        """
        level = check_level(alpha, self._owner("conf_int"))
        widened = self._bias_widened
        if widened:
            t = self._bias_over_se()
            aware = pd.Series(bias_aware_critical_value(t, level), index=self.params.index)
        if joint:
            boot = self._require_bootstrap("conf_int(joint=True)")
            warn_few_draws(
                boot.n_boot,
                level,
                "conf_int(joint=True)",
                "the sup-t critical value is the quantile of a handful of draws",
                stacklevel=2,
            )
            z = float(np.quantile(np.max(np.abs(boot.t_stats), axis=1), 1 - level))
            # max_j |t_j| >= |t_1| ~ N(0, 1): the sup-t critical value is never below the
            # pointwise one, which a quantile of few draws can fall under
            z = max(z, float(norm.ppf(1 - level / 2)))
            if widened:  # worst case over the bias box; never below the pointwise interval
                c = bias_aware_supt_critical_value(boot.t_stats, t, level)
                common = np.maximum(aware, max(z, c))
                shifted = np.maximum(aware, z + t)
                # two simultaneous bands; the shorter in total length, a choice made from
                # the SEs, bounds and draws alone (not from the estimates)
                se = self.bse.to_numpy()
                z = common if np.sum(common * se) <= np.sum(shifted * se) else shifted
        elif widened:
            z = aware
        else:
            z = float(norm.ppf(1 - level / 2))
        half = self._half_widths(z)
        return pd.DataFrame({"lower": self.params - half, "upper": self.params + half})

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """Estimates, SEs, z, p-values and intervals as a DataFrame.

        ``z`` is ``coef / std err``; ``P>|z|`` (:attr:`pvalues`) and the interval
        (:meth:`conf_int`) are bias-aware where the fit reported a bias bound.
        """
        ci = self.conf_int(check_level(alpha, self._owner("summary_frame")))
        return pd.DataFrame(
            {
                "coef": self.params,
                "std err": self.bse,
                "z": self.tvalues,
                "P>|z|": self.pvalues,
                "lower": ci["lower"],
                "upper": ci["upper"],
            }
        )

    # -- multiplier bootstrap ----------------------------------------------------------
    @property
    def clusters(self) -> IntArray | None:
        """Public cluster codes behind the covariance (``None`` when not clustered)."""
        c = self._record.clusters
        return None if c is None else c.copy()

    @property
    def boot_t_stats(self) -> pd.DataFrame | None:
        """Bootstrap draws of the t statistics (``None`` before :meth:`bootstrap`)."""
        boot = self._record.bootstrap
        if boot is None:
            return None
        return pd.DataFrame(boot.t_stats, columns=self._record.params.index)

    def _owner(self, method: str) -> str:
        """``"<class>.<method>"``: how messages name the method the user called."""
        return f"{type(self).__name__}.{method}"

    def _require_bootstrap(self, what: str) -> BootstrapDraws:
        boot = self._record.bootstrap
        if boot is None:
            raise BootstrapError(
                f"{what} needs multiplier-bootstrap draws; call "
                "results.bootstrap(method='normal', n_boot=1000, random_state=...) first and "
                "use the results object it returns."
            )
        return boot

    def bootstrap(
        self,
        method: BootstrapMethod = "normal",
        n_boot: int = 1000,
        random_state: RandomStateLike = None,
        *,
        progress: bool = False,
    ) -> PrivateResults:
        r"""Multiplier bootstrap of the t statistics from the transformed influence values.

        No re-estimation: each draw reweights the influence values :math:`\varphi_i` by
        independent mean-zero, unit-variance multipliers, as DoubleML's ``bootstrap``.
        With clusters the multipliers are drawn per cluster (and, two-way, one set per
        dimension, added). Cost O(n_boot x units x p). The draws feed
        :meth:`conf_int` (``joint=True``) and :meth:`p_adjust` (``"romano-wolf"``).

        Parameters
        ----------
        method : {"normal", "bayes", "wild"}, default="normal"
            Multipliers :math:`\xi \sim N(0, 1)`; :math:`\xi = E - 1`,
            :math:`E \sim \mathrm{Exp}(1)` (Bayesian); or Mammen-type
            :math:`\xi = u/\sqrt2 + (v^2 - 1)/2` with independent standard normals
            (wild; DoubleML's choice).
        n_boot : int, default=1000
            Number of draws.
        random_state : int, SeedSequence, Generator or None, default=None
            ``None`` draws fresh OS entropy.
        progress : bool, default=False
            Show a progress bar over blocks of draws.

        Returns
        -------
        PrivateResults
            A copy of these results carrying the draws; ``self`` is unchanged.

        Raises
        ------
        BootstrapError
            Unknown ``method``.
        ValueError
            ``n_boot`` not a positive integer.

        Notes
        -----
        .. math:: t^*_{bj} = \frac{\sum_u \xi_{bu} S_{uj}}{n\,\widehat{se}_j},\qquad
                  S_u = \sum_{i\in u}\varphi_i,

        with units :math:`u` the rows (then :math:`S_u = \varphi_u`) or the clusters.
        Two-way: :math:`\sum_g\xi_g S_g + \sum_h\zeta_h S_h`, whose variance
        :math:`V_1 + V_2` exceeds the analytic :math:`V_1 + V_2 - V_{12}` by the
        intersection term, which is of smaller order when clusters are large.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> phi = np.random.default_rng(0).normal(size=(500, 2))
        >>> rec = ResultsRecord("Demo", "y", pd.Series({"a": 0.1, "b": 0.2}),
        ...                     phi - phi.mean(0), {"alpha": 1.0}, None, (), Diagnostics(),
        ...                     pd.DataFrame())
        >>> boot = PrivateResults(rec).bootstrap("normal", n_boot=2000, random_state=1)
        >>> ci = boot.conf_int(joint=True)
        >>> bool((ci["upper"] - ci["lower"] > 2 * 1.96 * boot.bse).all())  # wider than pointwise
        True
        """
        if not isinstance(method, str) or method.lower() not in BOOT_METHODS:
            raise BootstrapError(
                f"The 'method' parameter of PrivateResults.bootstrap must be one of "
                f"{list(BOOT_METHODS)!r}. Got {method!r} instead."
            )
        method_l = method.lower()
        n_boot = check_int(n_boot, "n_boot", "PrivateResults.bootstrap", 1)
        rng = check_random_state(random_state)
        t_stats, units = multiplier_t_stats(
            self._record.influence,
            self._record.clusters,
            self.bse.to_numpy(),
            method_l,
            n_boot,
            rng,
            progress=progress,
        )
        draws = BootstrapDraws(method=method_l, n_boot=n_boot, t_stats=t_stats, units=units)
        return PrivateResults(replace(self._record, bootstrap=draws))

    def p_adjust(self, method: str = "romano-wolf") -> pd.DataFrame:
        r"""P-values adjusted for testing every parameter against zero.

        Parameters
        ----------
        method : str, default="romano-wolf"
            ``"romano-wolf"`` (``"rw"``): the step-down procedure of Romano and Wolf
            (2005) on the bootstrap draws of :meth:`bootstrap` (as DoubleML's
            ``p_adjust``). Any other name is passed to statsmodels'
            :func:`~statsmodels.stats.multitest.multipletests` (``"holm"``,
            ``"bonferroni"``, ``"fdr_bh"``, ...) applied to :attr:`pvalues`, which are
            bias-aware where the fit reported a bias bound.

        Returns
        -------
        DataFrame
            Columns ``coef``, ``pvalue`` (unadjusted) and ``pvalue_adj``.

        Raises
        ------
        BootstrapError
            Romano-Wolf without bootstrap draws.
        ValueError
            A method statsmodels does not know.

        Warns
        -----
        FewBootstrapDrawsWarning
            Romano-Wolf from fewer than 200 draws (under 10 beyond the 95% quantile): the
            p-values are shares of ``n_boot`` draws and cannot resolve 0.05.

        Notes
        -----
        Where a parameter has a bias bound :math:`B_j > 0`, Romano-Wolf steps down on
        :math:`\max(|z_j| - B_j/\mathrm{se}_j, 0)` instead of :math:`|z_j|`: under
        :math:`\psi_j = 0` the bias moves :math:`z_j` by at most :math:`B_j/\mathrm{se}_j`,
        so the statistic is below the noise :math:`|z_j - b_j/\mathrm{se}_j|` that the
        draws of :math:`|t^*_j|` reproduce, and the familywise error stays controlled
        (conservatively) whatever the biases within their bounds. Without bounds the
        statistics are the :math:`|z_j|`, as in Romano and Wolf. A parameter with
        :math:`\mathrm{se}_j = 0 < B_j` has no noise: its statistic is :math:`+\infty`
        (rejected, adjusted p-value 0) when :math:`|\hat\psi_j| > B_j`, which no bias
        within the bound explains, and 0 (never rejected) otherwise.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> phi = np.random.default_rng(0).normal(size=(400, 3))
        >>> rec = ResultsRecord("Demo", "y", pd.Series({"a": 0.0, "b": 0.3, "c": 0.05}),
        ...                     phi - phi.mean(0), {"alpha": 1.0}, None, (), Diagnostics(),
        ...                     pd.DataFrame())
        >>> res = PrivateResults(rec)
        >>> adj = res.p_adjust("holm")
        >>> bool((adj["pvalue_adj"] >= adj["pvalue"]).all())
        True
        >>> rw = res.bootstrap(n_boot=500, random_state=0).p_adjust("romano-wolf")
        >>> bool((rw["pvalue_adj"] >= rw["pvalue"] - 0.05).all())
        True
        """
        pvals = self.pvalues.to_numpy()
        if isinstance(method, str) and method.lower() in ("romano-wolf", "rw"):
            draws = self._require_bootstrap("p_adjust('romano-wolf')")
            warn_few_draws(
                draws.n_boot,
                0.05,
                "p_adjust('romano-wolf')",
                f"the adjusted p-values are shares of {draws.n_boot} draws (0.0 means below "
                f"1/{draws.n_boot}) and cannot resolve the 0.05 level",
                stacklevel=2,
            )
            stat = np.abs(self.tvalues.to_numpy())
            if self._bias_widened:  # |z| - B/se bounds the noise part of |z| under the null
                t = self._bias_over_se()
                stat = np.where(t > 0, np.maximum(stat - t, 0.0), stat)
                stat = self._zero_se_statistics(stat)
            adj = romano_wolf(stat, np.abs(draws.t_stats))
        else:
            from statsmodels.stats.multitest import multipletests

            try:
                if not isinstance(method, str):  # statsmodels calls method.lower()
                    raise ValueError("not a string")
                adj = multipletests(pvals, method=method)[1]
            except ValueError as err:
                raise ValueError(
                    f"The 'method' parameter of PrivateResults.p_adjust must be 'romano-wolf' "
                    f"or a statsmodels multipletests method; got {method!r} ({err})."
                ) from None
        return pd.DataFrame(
            {"coef": self.params, "pvalue": self.pvalues, "pvalue_adj": adj},
            index=self.params.index,
        )

    def _zero_se_statistics(self, stat: np.ndarray) -> np.ndarray:
        """Romano-Wolf statistics with the limits of :meth:`p_adjust` where se = 0 < B."""
        bound = self._record.bias_bound.to_numpy(dtype=float)
        zero = (self.bse.to_numpy() == 0) & (bound > 0)
        beyond = np.abs(self.params.to_numpy(dtype=float)) > bound
        return np.where(zero, np.where(beyond, np.inf, 0.0), stat)

    # -- combining estimates through influence values -----------------------------------
    def __getitem__(self, key: str | Sequence[str]) -> PrivateResults:
        """Results restricted to some parameters (bootstrap draws are restricted too)."""
        names = list(key) if np.iterable(key) and not isinstance(key, str) else [key]
        index = self._record.params.index
        missing = [k for k in names if not isinstance(k, Hashable) or k not in index]
        if missing or not names:
            raise KeyError(
                f"{missing!r} not among the parameters {list(index)!r}; select parameters "
                "by name, e.g. results[['a', 'b']]."
                if missing
                else f"No parameters selected; name some of {list(index)!r}."
            )
        pos = [index.get_loc(k) for k in names]
        rec = self._record
        cov = None
        if rec.cov_override is not None:
            cov = rec.cov_override.loc[names, names]
        boot = None
        if rec.bootstrap is not None:
            boot = replace(rec.bootstrap, t_stats=rec.bootstrap.t_stats[:, pos])
        rep = rec.rep_params[names] if set(names) <= set(rec.rep_params.columns) else rec.rep_params
        bound = None if rec.bias_bound is None else rec.bias_bound.iloc[pos]
        return PrivateResults(
            replace(
                rec,
                params=rec.params.iloc[pos],
                influence=rec.influence[:, pos],
                cov_override=cov,
                bootstrap=boot,
                rep_params=rep,
                bias_bound=bound,
                joint_cov=_joint_cov(rec),
            )
        )

    def _combine(self, other: object, sign: float) -> PrivateResults:
        if not isinstance(other, PrivateResults):
            return NotImplemented  # type: ignore[return-value]
        a, b = self._record, other._record
        op = "+" if sign > 0 else "-"
        if a.fingerprint is None or b.fingerprint is None:
            raise DataMismatchError(
                f"Cannot combine {self.model} and {other.model}: both need a data fingerprint "
                "(the treatment models record one; PrivateGMM does not)."
            )
        if self.nobs != other.nobs or a.fingerprint != b.fingerprint:
            raise DataMismatchError(
                f"Cannot combine {self.model} ({self.nobs} rows) and {other.model} "
                f"({other.nobs} rows): influence values combine only for fits on the same rows "
                "(same row index, treatment, weights and clusters); the data fingerprints "
                f"{a.fingerprint} and {b.fingerprint} differ."
                if a.fingerprint != b.fingerprint
                else f"Cannot combine results with {self.nobs} and {other.nobs} rows."
            )
        same_cl = (a.clusters is None and b.clusters is None) or (
            a.clusters is not None and b.clusters is not None
            # asarray first: codes a Dask fit never gathered say so (array_equal says False)
            and np.array_equal(np.asarray(a.clusters), np.asarray(b.clusters))
        )
        if not same_cl:
            raise DataMismatchError(
                f"Cannot combine {self.model} and {other.model}: they use different clusters."
            )
        pa, pb = a.params, b.params
        if len(pa) != len(pb) and 1 not in (len(pa), len(pb)):
            raise DataMismatchError(
                f"Cannot combine {len(pa)} with {len(pb)} parameters; select matching ones "
                "with results[[...]] first."
            )
        k = max(len(pa), len(pb))
        ia = np.arange(k) if len(pa) == k else np.zeros(k, dtype=int)
        ib = np.arange(k) if len(pb) == k else np.zeros(k, dtype=int)
        na, nb = [str(pa.index[i]) for i in ia], [str(pb.index[i]) for i in ib]
        names = [
            f"{x} {op} {y}" if x != y else f"{self.model}[{x}] {op} {other.model}[{y}]"
            for x, y in zip(na, nb, strict=True)
        ]
        values = pa.to_numpy()[ia] + sign * pb.to_numpy()[ib]
        phi = a.influence[:, ia] + sign * b.influence[:, ib]
        # parameters of one fit whose reported covariance is not that of its influence
        # values (bootstrap standard errors, Dask reductions): combine through it
        cov = None
        ja, jb = _joint_cov(a), _joint_cov(b)
        if (
            ja is not None
            and jb is not None
            and (ja is jb or ja.equals(jb))
            and set(pa.index[ia]) | set(pb.index[ib]) <= set(ja.index)
        ):
            pos_a = ja.index.get_indexer(pa.index[ia])
            pos_b = ja.index.get_indexer(pb.index[ib])
            C = np.zeros((k, len(ja.index)))
            np.add.at(C, (np.arange(k), pos_a), 1.0)
            np.add.at(C, (np.arange(k), pos_b), sign)
            cov = pd.DataFrame(C @ ja.to_numpy() @ C.T, index=names, columns=names)
        bound = _combined_bias_bound(a, b, ia, ib, names)
        notes = ["Linear combination of estimates through their influence values."]
        if bound is not None and bool((bound > 0).any()):
            notes.append(
                "Bias bound of each combination: the sum of the two fits' bounds (worst "
                "case, the two biases may have either sign)."
            )
        rec = ResultsRecord(
            model="Combination",
            dep_variable=a.dep_variable if a.dep_variable == b.dep_variable else "-",
            params=pd.Series(values, index=names),
            influence=phi,
            mechanism=a.mechanism,
            guarantees=a.guarantees,
            facts=(("Combined:", f"{self.model} {op} {other.model}"),),
            diagnostics=Diagnostics(notes=tuple(notes)),
            rep_params=pd.DataFrame(columns=names),
            clusters=a.clusters,
            fingerprint=a.fingerprint,
            cov_override=cov,
            bias_bound=bound,
        )
        return PrivateResults(rec)

    def __sub__(self, other: object) -> PrivateResults:
        r"""Difference of estimates on the same rows, with the SE of the difference.

        The influence values subtract, so the standard error accounts for the correlation
        of the two estimates; a one-parameter side is broadcast against the other's
        parameters. Where either fit reported a bias bound, the difference carries one and
        its interval is bias-aware, as a single fit's (:meth:`conf_int`, :meth:`summary`).

        Notes
        -----
        With :math:`\hat a = a + b_a + \text{noise}`, :math:`|b_a| \le B_a`, and likewise
        for :math:`\hat b`, the bias of the difference is :math:`b_a - b_b`, and

        .. math:: |b_a - b_b| \le B_a + B_b.

        Nothing ties the signs of the two biases (different fits, or different
        parameters of one fit, shrink in their own directions), so the worst case is the
        sum: the bound is :math:`B_a + B_b` per parameter pair (:math:`B = 0` for a side
        without a bound; no bound at all when neither side has one). The same bound
        holds for a difference of one parameter with itself, where the biases cancel;
        it is conservative there, never too small.

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> phi = np.random.default_rng(0).normal(size=(400, 2))
        >>> def fit(name, col, value, bound):
        ...     rec = ResultsRecord(name, "y", pd.Series({"ATE": value}), phi[:, [col]],
        ...                         {"alpha": 1.0}, None, (), Diagnostics(), pd.DataFrame(),
        ...                         fingerprint="rows", bias_bound=pd.Series({"ATE": bound}))
        ...     return PrivateResults(rec)
        >>> gap = fit("Young", 0, 1.0, 0.02) - fit("Old", 1, 0.5, 0.03)
        >>> round(float(gap._record.bias_bound.iloc[0]), 2)  # 0.02 + 0.03
        0.05
        >>> "widened" in str(gap.summary())  # the interval is bias-aware, and says so
        True
        """
        return self._combine(other, -1.0)

    def __add__(self, other: object) -> PrivateResults:
        r"""Sum of estimates on the same rows, with the SE of the sum.

        The influence values add; a one-parameter side is broadcast against the other's
        parameters. Where either fit reported a bias bound, the sum carries one and its
        interval is bias-aware, as a single fit's (:meth:`conf_int`, :meth:`summary`).

        Notes
        -----
        The bias of the sum is :math:`b_a + b_b` with :math:`|b_a| \le B_a` and
        :math:`|b_b| \le B_b`; the two biases may share a sign, so the bound is

        .. math:: |b_a + b_b| \le B_a + B_b

        per parameter pair (:math:`B = 0` for a side without a bound; no bound at all
        when neither side has one), which is attained when both biases take their
        largest size with the same sign.
        """
        return self._combine(other, 1.0)

    # -- post-estimation (cov_params, t_test, wald_test, f_test, save, load) -------------
    @property
    def df_resid(self) -> float:
        """Residual degrees of freedom, ``nobs - len(params)`` (used by :meth:`f_test`)."""
        return float(self.nobs - len(self._record.params))

    @property
    def _df_resid(self) -> float:
        return self.df_resid

    def _bias_bounds(self) -> np.ndarray | None:
        """|B| per parameter for t_test / wald_test / f_test (None when nothing widens)."""
        if not self._bias_widened:
            return None
        return np.abs(self._record.bias_bound.fillna(0.0).to_numpy(dtype=float))

    # -- presentation ------------------------------------------------------------------
    def _privacy_facts(self) -> list[tuple[str, str]]:
        mech = self._record.mechanism
        g = self._record.guarantees
        rows = [
            ("Mechanism:", str(mech.get("mechanism", "-"))),
            ("Keep prob. (alpha):", f"{mech.get('alpha', float('nan')):.3g}"),
        ]
        if g is not None:
            rows.append(("TV privacy:", f"{g.tv:.3g}"))
            if g.ldp_delta == 0:
                rows.append(("LDP eps:", f"{g.ldp_eps:.3g}"))
            else:
                rows.append(("LDP (eps, delta):", f"(0, {g.ldp_delta:.3g})"))
        err = self._record.diagnostics.reference_error
        if err:
            # no positive standard error (a NaN one, e.g.): the share is not defined
            ratio = max(
                ((err.get(k, 0.0) / self.bse[k]) for k in self.params.index if self.bse[k] > 0),
                default=float("nan"),
            )
            share = "n/a" if np.isnan(ratio) else f"{100 * ratio:.2g}%"
            rows.append(
                (
                    "Ref. error / SE:",
                    "exact" if self._record.diagnostics.reference_exact else share,
                )
            )
        return rows

    def summary(self, alpha: float = 0.05) -> Summary:
        """A statsmodels :class:`~statsmodels.iolib.summary.Summary` (text, LaTeX, HTML).

        Two-column header (estimator facts left, mechanism facts right), the parameter
        table, then notes. It returns and never prints.
        """
        alpha = check_level(alpha, self._owner("summary"))
        level_facts, level_notes = self._level_lines(alpha)
        smry = Summary()
        left = [
            ("Dep. Variable:", self._record.dep_variable),
            ("Estimator:", self.model),
            ("No. Observations:", str(self.nobs)),
            *self._record.facts,
            *level_facts,
        ]
        right = self._privacy_facts()
        while len(right) < len(left):
            right.append(("", ""))
        while len(left) < len(right):
            left.append(("", ""))
        top = SimpleTable(
            [[a, b] for a, b in left], title=f"{self.model} Results", txt_fmt={"colwidths": 16}
        )
        top_right = SimpleTable([[a, b] for a, b in right])
        top.extend_right(top_right)
        smry.tables.append(top)
        frame = self.summary_frame(alpha)
        lo, hi = f"[{alpha / 2:g}", f"{1 - alpha / 2:g}]"
        data = [
            [f"{v:.4f}" for v in row]
            for row in frame.to_numpy()
        ]
        params_table = SimpleTable(
            data,
            headers=["coef", "std err", "z", "P>|z|", lo, hi],
            stubs=[str(s) for s in frame.index],
        )
        smry.tables.append(params_table)
        # notes only when something happened, each with the docs page that explains it
        notes = []
        codes = self._record.clusters
        if codes is not None:
            if codes.ndim == 1:
                notes.append(f"Cluster-robust covariance ({int(codes.max()) + 1} clusters).")
            else:
                notes.append(
                    "Two-way cluster-robust covariance "
                    f"({int(codes[:, 0].max()) + 1} x {int(codes[:, 1].max()) + 1} clusters)."
                )
        if self._record.bootstrap is not None:
            b = self._record.bootstrap
            notes.append(f"Multiplier bootstrap: {b.n_boot} {b.method} draws over {b.units}.")
        d = self._record.diagnostics
        n_ind = sum(g.min_eigenvalue < 0 for g in d.gram_repairs)
        n_ill = sum(g.min_eigenvalue >= 0 and g.ill_conditioned for g in d.gram_repairs)
        if n_ind or n_ill:  # floors of well-conditioned matrices are routine: no note
            what = " and ".join(
                p for p in (f"{n_ind} indefinite" if n_ind else "",
                            f"{n_ill} ill-conditioned" if n_ill else "") if p
            )
            notes.append(
                f"{len(d.gram_repairs)} deconvolved Gram matrix(es) had eigenvalues floored at "
                f"the noise level, {what}."
            )
        if d.n_clipped:
            notes.append(f"{d.n_clipped} propensity value(s) clipped at {d.clip:g}.")
        if self._bias_widened:
            notes.append(self._bias_note())
        notes.extend(d.notes)
        notes.extend(level_notes)
        see = " (see docs: user_guide/diagnostics)"
        notes = [n if "see docs" in n else n.rstrip(".") + see + "." for n in notes]
        if notes:
            smry.add_extra_txt(notes)
        return smry

    def _level_lines(self, alpha: float) -> tuple[list[tuple[str, str]], list[str]]:
        """Summary header facts and notes that depend on the level ``alpha`` (none here)."""
        return [], []

    def __str__(self) -> str:
        return str(self.summary())

    def __repr__(self) -> str:
        return (
            f"<{self.model} results: {', '.join(f'{k}={v:.4g}' for k, v in self.params.items())}>"
        )

    def _repr_html_(self) -> str:
        return self.summary().as_html()


def _combined_bias_bound(
    a: ResultsRecord, b: ResultsRecord, ia: IntArray, ib: IntArray, names: list[str]
) -> pd.Series | None:
    r"""Bias bound of ``a[ia] +/- b[ib]``: :math:`|B_a| + |B_b|` (worst case), or None.

    A side without a bound contributes zero; when neither has one the combination has
    none, exactly as before bounds were combined.
    """
    if a.bias_bound is None and b.bias_bound is None:
        return None
    k = len(names)
    parts = [
        np.zeros(k) if r.bias_bound is None else np.abs(r.bias_bound.to_numpy(dtype=float))[i]
        for r, i in ((a, ia), (b, ib))
    ]
    return pd.Series(parts[0] + parts[1], index=names)


def _joint_cov(rec: ResultsRecord) -> pd.DataFrame | None:
    """The reported covariance of the whole fit ``rec`` comes from (None: its influence)."""
    return rec.joint_cov if rec.joint_cov is not None else rec.cov_override
