r"""Results objects shared by every privinfer estimator (STYLE.md §6).

A :class:`PrivateResults` is built from a typed, frozen :class:`ResultsRecord` that the
estimator hands over; it knows how an estimate was produced only through that record.
Standard errors come from the :math:`Q_X^{-1}`-transformed influence values
:math:`\varphi_i`: :math:`\widehat{\mathrm{Var}} = \frac1{n^2}\sum_i \varphi_i\varphi_i'`
(summed within clusters first when the record carries public cluster codes).
The same influence values drive the multiplier bootstrap (:meth:`PrivateResults.bootstrap`),
simultaneous intervals, multiple-testing adjustments and the combination of estimates
fitted on the same rows (``res_ate - res_att``). Results never hold raw private values or
the input frame; a data fingerprint (a hash of public columns) identifies the rows.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.stats import norm
from statsmodels.iolib.summary import Summary
from statsmodels.iolib.table import SimpleTable
from tqdm.auto import tqdm

from privinfer._typing import FloatArray, IntArray, RandomStateLike
from privinfer._validation import check_in_interval, check_int, check_random_state
from privinfer.covariance import cluster_sums as _cluster_sums
from privinfer.covariance import influence_cov as _influence_cov
from privinfer.exceptions import BootstrapError, DataMismatchError

__all__ = [
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

BootstrapMethod = Literal["normal", "bayes", "wild"]
_BOOT_METHODS = ("normal", "bayes", "wild")
#: Bootstrap draws generated per block (memory: block x units multipliers).
_BOOT_BLOCK = 100

#: 97.5% standard normal quantile, for the default 95% intervals.
_Z_975 = float(norm.ppf(0.975))


@dataclass(frozen=True)
class Diagnostics:
    r"""What happened during estimation, besides the estimates.

    Attributes
    ----------
    gram_repairs : tuple
        :class:`privinfer.nuisance.series.GramRepair` records (indefinite Gram matrices).
    n_clipped : int
        Released rows whose estimated propensity hit the clipping threshold.
    clip : float or None
        Clipping threshold of the propensity route.
    outcome_r2 : float
        Out-of-fold R^2 of the outcome regression, estimated privately.
    riesz_second_moment : dict
        Private estimates of :math:`E\rho^2` per Riesz representer (overlap check).
    reference_error : dict
        Quasi-Monte Carlo standard error of each estimate's reference term.
    reference_points : int
        Size of the reference sample (exact enumeration when ``reference_exact``).
    reference_exact : bool
        Whether reference moments were exact.
    rep_spread : dict
        Range of the estimates over repeated splits.
    notes : tuple of str
        Free-text notes (e.g. warnings issued).

    Examples
    --------
    Every fitted model carries one, as ``results.diagnostics``:

    >>> import numpy as np, pandas as pd, privinfer as pi
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-1, 1, 1000)
    >>> d = (rng.random(1000) < 1 / (1 + np.exp(-x))).astype(int)
    >>> raw = pd.DataFrame({"x": x, "d": d, "y": d + x + rng.normal(size=1000)})
    >>> mech = pi.AlphaIdentity(0.7, {"x": pi.reference.Uniform(-1, 1)})
    >>> released = mech.privatize(raw, public=["d", "y"], random_state=1)
    >>> res = pi.PrivateATE.from_formula("y ~ d | x", released,
    ...                                  mechanism=mech).fit(random_state=2)
    >>> diag = res.diagnostics
    >>> diag.gram_repairs, diag.n_clipped, diag.notes
    ((), 0, ())
    >>> diag.reference_exact, diag.reference_points  # a continuous reference: QMC points
    (False, 8192)
    >>> sorted(diag.riesz_second_moment), bool(diag.reference_error["ATE"] < 1e-3)
    (['rho[0]', 'rho[1]'], True)
    """

    gram_repairs: tuple[Any, ...] = ()
    n_clipped: int = 0
    clip: float | None = None
    outcome_r2: float = float("nan")
    riesz_second_moment: dict[str, float] = field(default_factory=dict)
    reference_error: dict[str, float] = field(default_factory=dict)
    reference_points: int = 0
    reference_exact: bool = False
    rep_spread: dict[str, float] = field(default_factory=dict)
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class TestResult:
    """A test statistic reported with the estimates, or the reason it does not apply.

    Attributes
    ----------
    name : str
        What is tested, e.g. ``"Hansen J-test of overidentifying restrictions"``.
    stat : float
        The statistic (NaN when the test does not apply).
    df : int
        Degrees of freedom of its reference distribution.
    pvalue : float
        P-value under the null (NaN when the test does not apply).
    null : str
        The null hypothesis in words.
    distribution : str, default="chi2"
        Reference distribution, e.g. ``"chi2(2)"`` or ``"F(2, inf)"``.
    reason : str or None, default=None
        Why the test does not apply; ``None`` for a valid test.

    Examples
    --------
    An over-identified private IV fit reports Hansen's J-test and first-stage strength:

    >>> import numpy as np, pandas as pd, privinfer as pi
    >>> rng = np.random.default_rng(0)
    >>> z = rng.uniform(0, 1, (1000, 2)); u = rng.normal(size=1000)
    >>> x = z @ [1.0, 1.0] + u + rng.normal(size=1000)
    >>> raw = pd.DataFrame({"z1": z[:, 0], "z2": z[:, 1], "x": x, "y": 1 + x + u})
    >>> mech = pi.AlphaIdentity(0.7, {"z1": pi.reference.Uniform(0, 1),
    ...                               "z2": pi.reference.Uniform(0, 1)})
    >>> released = mech.privatize(raw, public=["x", "y"], random_state=3)
    >>> res = pi.PrivateGMM.iv("y ~ 1 + [x ~ z1 + z2]", released,
    ...                        mechanism=mech).fit(random_state=0)
    >>> j = res.j_test
    >>> j.valid, j.df, j.distribution, bool(j.pvalue > 0.05)  # valid instruments
    (True, 1, 'chi2(1)', True)
    >>> sorted(res.tests)
    ['first_stage[x]', 'j_test']

    A model without such a test says why:

    >>> t = TestResult("Hansen J-test", float("nan"), 0, float("nan"), "moments hold",
    ...                reason="exactly identified")
    >>> t.valid, str(t)
    (False, 'Hansen J-test: not available (exactly identified)')
    """

    name: str
    stat: float
    df: int
    pvalue: float
    null: str
    distribution: str = "chi2"
    reason: str | None = None
    #: Not a pytest test class, despite its name.
    __test__ = False

    @property
    def valid(self) -> bool:
        """Whether the statistic is defined for this fit."""
        return self.reason is None

    def __str__(self) -> str:
        if self.reason is not None:
            return f"{self.name}: not available ({self.reason})"
        return f"{self.name}: {self.stat:.4g} ~ {self.distribution}, p-value {self.pvalue:.4g}"


@dataclass(frozen=True)
class BootstrapDraws:
    r"""Multiplier-bootstrap draws of the t statistics.

    Attributes
    ----------
    method : {"normal", "bayes", "wild"}
        Multiplier distribution.
    n_boot : int
        Number of draws.
    t_stats : ndarray of shape (n_boot, p)
        :math:`t^*_{bj} = \sum_u \xi_{bu} S_{uj} / (n\,\widehat{se}_j)` where the units
        :math:`u` are rows, or clusters with :math:`S_u` the within-cluster sum of
        influence values.
    units : str
        ``"rows"``, ``"clusters"`` or ``"two-way clusters"``.

    Examples
    --------
    :meth:`PrivateResults.bootstrap` stores its draws in one; they drive simultaneous
    intervals. Here draws of two independent standard normal t statistics are attached
    by hand, so the sup-t critical value is about 2.24 instead of 1.96:

    >>> import numpy as np, pandas as pd
    >>> t_stats = np.random.default_rng(0).standard_normal((2000, 2))
    >>> draws = BootstrapDraws(method="normal", n_boot=2000, t_stats=t_stats, units="rows")
    >>> phi = np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]])
    >>> rec = ResultsRecord("Demo", "y", pd.Series({"a": 0.0, "b": 1.0}), phi,
    ...                     {"alpha": 1.0}, None, (), Diagnostics(), pd.DataFrame(),
    ...                     bootstrap=draws)
    >>> res = PrivateResults(rec)
    >>> res.boot_t_stats.shape
    (2000, 2)
    >>> ci = res.conf_int(joint=True)
    >>> ((ci["upper"] - ci["lower"]) / (2 * res.bse)).round(1).tolist()
    [2.2, 2.2]
    """

    method: str
    n_boot: int
    t_stats: FloatArray
    units: str


@dataclass(frozen=True)
class ResultsRecord:
    r"""Everything an estimator hands to :class:`PrivateResults`.

    Attributes
    ----------
    model : str
        Estimator name, e.g. ``"PrivateATE"``.
    dep_variable : str
        Outcome name.
    params : Series
        Estimates, labelled.
    influence : ndarray of shape (n, p)
        Transformed influence values :math:`\varphi_i` (centred), one column per
        parameter. ``cov = influence' influence / n^2``.
    mechanism : dict
        ``AlphaIdentity.to_dict()`` of the mechanism that released the data.
    guarantees : Any
        The mechanism's :class:`PrivacyGuarantees`.
    facts : tuple of (str, str)
        Estimator facts for the summary header (folds, degree, Riesz route...).
    diagnostics : Diagnostics
    rep_params : DataFrame
        Estimates of each repeated split.
    cov_override : DataFrame or None, default=None
        A covariance to report instead of ``influence' influence / n^2`` (e.g. a
        cluster-robust sandwich).
    tests : dict of str to TestResult, default={}
        Test statistics reported with the estimates (``"j_test"``, first-stage
        strength ``"first_stage[<column>]"``...).
    clusters : ndarray of shape (n,) or (n, 2), optional
        Integer codes of public clusters (one column per clustering dimension); the
        covariance and the bootstrap then sum influence values within clusters.
    fingerprint : str or None, default=None
        :func:`data_fingerprint` of the public columns that identify the rows; results
        combine (``a - b``) only when their fingerprints agree.
    bootstrap : BootstrapDraws or None, default=None
        Multiplier-bootstrap draws, set by :meth:`PrivateResults.bootstrap`.

    Examples
    --------
    A record of four rows in two public clusters; influence values that agree within a
    cluster make the clustered standard error larger than the row-wise one:

    >>> import numpy as np, pandas as pd
    >>> phi = np.array([[1.0], [1.0], [-1.0], [-1.0]])
    >>> common = ("Demo", "y", pd.Series({"mean": 2.0}), phi, {"alpha": 1.0}, None,
    ...           (("Rows:", "4"),), Diagnostics(), pd.DataFrame())
    >>> rows = PrivateResults(ResultsRecord(*common))
    >>> clustered = PrivateResults(ResultsRecord(*common, clusters=np.array([0, 0, 1, 1])))
    >>> float(rows.bse["mean"]), round(float(clustered.bse["mean"]), 4)
    (0.5, 0.7071)
    >>> rows.model, rows.nobs, clustered.clusters.tolist()
    ('Demo', 4, [0, 0, 1, 1])
    """

    model: str
    dep_variable: str
    params: pd.Series
    influence: FloatArray
    mechanism: dict[str, Any]
    guarantees: Any
    facts: tuple[tuple[str, str], ...]
    diagnostics: Diagnostics
    rep_params: pd.DataFrame
    cov_override: pd.DataFrame | None = None
    tests: dict[str, TestResult] = field(default_factory=dict)
    clusters: IntArray | None = None
    fingerprint: str | None = None
    bootstrap: BootstrapDraws | None = None


def data_fingerprint(*columns: Any) -> str:
    """A short SHA-256 hash of public columns, to check that two fits used the same rows.

    It identifies rows without storing them: results of different estimators on the same
    released rows (same treatment, row index, weights and clusters) share it.

    Parameters
    ----------
    *columns : array-like
        Public columns (for the treatment models: the row index, treatment codes, sampling
        weights and cluster codes).

    Returns
    -------
    str
        16 hexadecimal digits.

    Examples
    --------
    >>> import numpy as np
    >>> data_fingerprint(np.arange(3)) == data_fingerprint(np.arange(3))
    True
    >>> data_fingerprint(np.arange(3)) == data_fingerprint(np.arange(1, 4))
    False
    """
    h = hashlib.sha256()
    for col in columns:
        if col is None:
            h.update(b"none")
            continue
        arr = np.ascontiguousarray(np.asarray(col))
        if arr.dtype == object:
            arr = np.asarray([str(v) for v in arr.ravel()]).astype("U")
        h.update(str((arr.dtype.str, arr.shape)).encode())
        h.update(arr.tobytes())
    return h.hexdigest()[:16]


def influence_cov(phi: FloatArray, clusters: IntArray | None = None) -> FloatArray:
    r"""Covariance of an estimate from its (centred) influence values.

    Parameters
    ----------
    phi : ndarray of shape (n, p)
        Influence values :math:`\varphi_i`.
    clusters : ndarray of shape (n,) or (n, 2), optional
        Integer cluster codes; two columns give two-way clustering.

    Returns
    -------
    ndarray of shape (p, p)

    Notes
    -----
    Without clusters :math:`V = \frac1{n^2}\sum_i\varphi_i\varphi_i'`. One-way:
    :math:`V = \frac1{n^2}\sum_g S_gS_g'`, :math:`S_g = \sum_{i\in g}\varphi_i` (as
    linearmodels' ``cov_type="clustered"`` without small-sample corrections). Two-way
    (Cameron, Gelbach and Miller 2011): :math:`V = V_1 + V_2 - V_{12}` with
    :math:`V_{12}` clustered on the intersections; negative eigenvalues are set to zero.

    Examples
    --------
    >>> import numpy as np
    >>> phi = np.array([[1.0], [1.0], [-1.0], [-1.0]])
    >>> float(influence_cov(phi)[0, 0]), float(influence_cov(phi, np.array([0, 0, 1, 1]))[0, 0])
    (0.25, 0.5)
    """
    return _influence_cov(phi, clusters)


class PrivateResults:
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

    # -- core quantities ---------------------------------------------------------------
    @property
    def model(self) -> str:
        """Name of the estimator."""
        return self._record.model

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
        r"""Centred transformed influence values :math:`\varphi_i` (n x p)."""
        return pd.DataFrame(self._record.influence, columns=self._record.params.index)

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
        """Two-sided normal p-values."""
        return pd.Series(2 * norm.sf(np.abs(self.tvalues)), index=self.params.index)

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
        """Confidence intervals; ``alpha`` here is the significance level, not the keep probability.

        Parameters
        ----------
        alpha : float, default=0.05
            Significance level (1 - coverage). The mechanism's keep probability is
            reported in :meth:`summary` as "Keep prob. (alpha)".
        joint : bool, default=False
            Simultaneous (sup-t) intervals that cover all parameters at once with
            probability 1 - ``alpha``: the critical value is the 1 - ``alpha`` quantile of
            ``max_j |t*_bj|`` over the draws of :meth:`bootstrap`, which must have
            been run (DoubleML's ``confint(joint=True)``).

        Returns
        -------
        DataFrame
            Columns ``lower`` and ``upper``, one row per parameter.

        Raises
        ------
        BootstrapError
            ``joint=True`` on results without bootstrap draws.
        """
        level = check_in_interval(
            alpha, "alpha", "conf_int", 0.0, 1.0, low_open=True, high_open=True
        )
        if joint:
            boot = self._require_bootstrap("conf_int(joint=True)")
            z = float(np.quantile(np.max(np.abs(boot.t_stats), axis=1), 1 - level))
        else:
            z = float(norm.ppf(1 - level / 2))
        return pd.DataFrame(
            {"lower": self.params - z * self.bse, "upper": self.params + z * self.bse}
        )

    def summary_frame(self, alpha: float = 0.05) -> pd.DataFrame:
        """Estimates, SEs, z, p-values and intervals as a DataFrame."""
        ci = self.conf_int(alpha)
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
        if not isinstance(method, str) or method.lower() not in _BOOT_METHODS:
            raise BootstrapError(
                f"The 'method' parameter of PrivateResults.bootstrap must be one of "
                f"{list(_BOOT_METHODS)!r}. Got {method!r} instead."
            )
        method_l = method.lower()
        n_boot = check_int(n_boot, "n_boot", "PrivateResults.bootstrap", 1)
        rng = check_random_state(random_state)
        phi = self._record.influence
        n, p = phi.shape
        codes = self._record.clusters
        if codes is None:
            blocks, units = [phi], "rows"
        elif codes.ndim == 1:
            blocks, units = [_cluster_sums(phi, codes)], "clusters"
        else:
            blocks = [_cluster_sums(phi, codes[:, 0]), _cluster_sums(phi, codes[:, 1])]
            units = "two-way clusters"
        se = self.bse.to_numpy()
        denom = n * np.where(se > 0, se, np.inf)
        t_stats = np.empty((n_boot, p))
        starts = range(0, n_boot, _BOOT_BLOCK)
        for start in tqdm(starts, disable=not progress, desc="bootstrap"):
            size = min(_BOOT_BLOCK, n_boot - start)
            acc = np.zeros((size, p))
            for S in blocks:
                acc += _multipliers(method_l, (size, S.shape[0]), rng) @ S
            t_stats[start : start + size] = acc / denom
        draws = BootstrapDraws(method=method_l, n_boot=n_boot, t_stats=t_stats, units=units)
        return PrivateResults(replace(self._record, bootstrap=draws))

    def p_adjust(self, method: str = "romano-wolf") -> pd.DataFrame:
        """P-values adjusted for testing every parameter against zero.

        Parameters
        ----------
        method : str, default="romano-wolf"
            ``"romano-wolf"`` (``"rw"``): the step-down procedure of Romano and Wolf
            (2005) on the bootstrap draws of :meth:`bootstrap` (as DoubleML's
            ``p_adjust``). Any other name is passed to statsmodels'
            :func:`~statsmodels.stats.multitest.multipletests` (``"holm"``,
            ``"bonferroni"``, ``"fdr_bh"``, ...) applied to the normal p-values.

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
            boot = np.abs(self._require_bootstrap("p_adjust('romano-wolf')").t_stats)
            t_abs = np.abs(self.tvalues.to_numpy())
            order = np.argsort(-t_abs)
            p_step = np.empty(t_abs.size)
            for i in range(t_abs.size):
                rest = boot[:, order[i:]]
                p_step[i] = min(1.0, float(np.mean(rest.max(axis=1) >= t_abs[order[i]])))
            p_step = np.maximum.accumulate(p_step)
            adj = np.empty_like(p_step)
            adj[order] = p_step
        else:
            from statsmodels.stats.multitest import multipletests

            try:
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

    # -- combining estimates through influence values -----------------------------------
    def __getitem__(self, key: str | Sequence[str]) -> PrivateResults:
        """Results restricted to some parameters (bootstrap draws are restricted too)."""
        names = [key] if isinstance(key, str) else list(key)
        index = self._record.params.index
        missing = [k for k in names if k not in index]
        if missing:
            raise KeyError(f"{missing!r} not among the parameters {list(index)!r}.")
        pos = [index.get_loc(k) for k in names]
        rec = self._record
        cov = None
        if rec.cov_override is not None:
            cov = rec.cov_override.loc[names, names]
        boot = None
        if rec.bootstrap is not None:
            boot = replace(rec.bootstrap, t_stats=rec.bootstrap.t_stats[:, pos])
        rep = rec.rep_params[names] if set(names) <= set(rec.rep_params.columns) else rec.rep_params
        return PrivateResults(
            replace(
                rec,
                params=rec.params.iloc[pos],
                influence=rec.influence[:, pos],
                cov_override=cov,
                bootstrap=boot,
                rep_params=rep,
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
            and np.array_equal(a.clusters, b.clusters)
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
        rec = ResultsRecord(
            model="Combination",
            dep_variable=a.dep_variable if a.dep_variable == b.dep_variable else "-",
            params=pd.Series(values, index=names),
            influence=phi,
            mechanism=a.mechanism,
            guarantees=a.guarantees,
            facts=(("Combined:", f"{self.model} {op} {other.model}"),),
            diagnostics=Diagnostics(
                notes=("Linear combination of estimates through their influence values.",)
            ),
            rep_params=pd.DataFrame(columns=names),
            clusters=a.clusters,
            fingerprint=a.fingerprint,
        )
        return PrivateResults(rec)

    def __sub__(self, other: object) -> PrivateResults:
        """Difference of estimates on the same rows, with the SE of the difference."""
        return self._combine(other, -1.0)

    def __add__(self, other: object) -> PrivateResults:
        """Sum of estimates on the same rows, with the SE of the sum."""
        return self._combine(other, 1.0)

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
            ratio = (
                max((err.get(k, 0.0) / self.bse[k]) for k in self.params.index if self.bse[k] > 0)
                if len(self.params)
                else 0.0
            )
            rows.append(
                (
                    "Ref. error / SE:",
                    "exact" if self._record.diagnostics.reference_exact else f"{100 * ratio:.2g}%",
                )
            )
        return rows

    def summary(self, alpha: float = 0.05) -> Summary:
        """A statsmodels :class:`~statsmodels.iolib.summary.Summary` (text, LaTeX, HTML).

        Two-column header (estimator facts left, mechanism facts right), the parameter
        table, then notes. It returns and never prints.
        """
        smry = Summary()
        left = [
            ("Dep. Variable:", self._record.dep_variable),
            ("Estimator:", self.model),
            ("No. Observations:", str(self.nobs)),
            *self._record.facts,
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
        notes = ["Standard errors from the Q_X^{-1}-transformed influence function."]
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
        if d.gram_repairs:
            n_ind = sum(g.min_eigenvalue < 0 for g in d.gram_repairs)
            notes.append(
                f"{len(d.gram_repairs)} deconvolved Gram matrix(es) had eigenvalues floored at the "
                f"noise level ({n_ind} indefinite)."
            )
        if d.n_clipped:
            notes.append(f"{d.n_clipped} propensity value(s) clipped at {d.clip:g}.")
        notes.extend(d.notes)
        smry.add_extra_txt(notes)
        return smry

    def __str__(self) -> str:
        return str(self.summary())

    def __repr__(self) -> str:
        return (
            f"<{self.model} results: {', '.join(f'{k}={v:.4g}' for k, v in self.params.items())}>"
        )

    def _repr_html_(self) -> str:
        return self.summary().as_html()


def _multipliers(method: str, size: tuple[int, int], rng: np.random.Generator) -> FloatArray:
    """Mean-zero, unit-variance bootstrap multipliers (DoubleML's three choices)."""
    if method == "normal":
        return rng.standard_normal(size)
    if method == "bayes":
        return rng.exponential(1.0, size) - 1.0
    u = rng.standard_normal(size)
    v = rng.standard_normal(size)
    return u / np.sqrt(2.0) + (v**2 - 1.0) / 2.0


class ComparisonResults:
    """Several results side by side (linearmodels' ``compare``); build with :func:`compare`.

    Attributes are DataFrames with one column per model and one row per parameter
    (missing where a model has no such parameter).

    Examples
    --------
    The ATE and the ATT fitted on the same released data:

    >>> import numpy as np, pandas as pd, privinfer as pi
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-1, 1, 1000)
    >>> d = (rng.random(1000) < 1 / (1 + np.exp(-x))).astype(int)
    >>> raw = pd.DataFrame({"x": x, "d": d, "y": d + x + rng.normal(size=1000)})
    >>> mech = pi.AlphaIdentity(0.7, {"x": pi.reference.Uniform(-1, 1)})
    >>> released = mech.privatize(raw, public=["d", "y"], random_state=1)
    >>> fits = {name: model.from_formula("y ~ d | x", released, mechanism=mech).fit(random_state=2)
    ...         for name, model in [("ATE model", pi.PrivateATE), ("ATT model", pi.PrivateATT)]}
    >>> table = pi.compare(fits)
    >>> table.params.shape, table.nobs.tolist()
    ((2, 2), [1000, 1000])
    >>> bool(pd.isna(table.params.loc["ATE", "ATT model"]))  # the ATT model has no ATE
    True
    >>> [round(float(table.params.loc[k, f"{k} model"]), 1) for k in ("ATE", "ATT")]  # truth 1
    [1.0, 1.0]
    >>> "Model Comparison" in str(table.summary())
    True
    """

    def __init__(self, results: Mapping[str, PrivateResults]) -> None:
        self._results = dict(results)

    def _frame(self, attr: str) -> pd.DataFrame:
        return pd.DataFrame({k: getattr(r, attr) for k, r in self._results.items()})

    @property
    def params(self) -> pd.DataFrame:
        """Estimates."""
        return self._frame("params")

    @property
    def std_errors(self) -> pd.DataFrame:
        """Standard errors."""
        return self._frame("bse")

    @property
    def tstats(self) -> pd.DataFrame:
        """Z statistics."""
        return self._frame("tvalues")

    @property
    def pvalues(self) -> pd.DataFrame:
        """Two-sided normal p-values."""
        return self._frame("pvalues")

    @property
    def nobs(self) -> pd.Series:
        """Number of observations per model."""
        return pd.Series({k: r.nobs for k, r in self._results.items()})

    def summary(self) -> Summary:
        """A statsmodels Summary: estimates with standard errors in parentheses."""
        smry = Summary()
        params, se = self.params, self.std_errors
        names = list(self._results)
        head = [
            ["Estimator", *[r.model for r in self._results.values()]],
            ["No. Observations", *[str(r.nobs) for r in self._results.values()]],
            [
                "Keep prob. (alpha)",
                *[f"{r.mechanism.get('alpha', float('nan')):.3g}" for r in self._results.values()],
            ],
        ]
        rows = []
        for p in params.index:
            rows.append([str(p), *["" if pd.isna(v) else f"{v:.4f}" for v in params.loc[p]]])
            rows.append(["", *["" if pd.isna(v) else f"({v:.4f})" for v in se.loc[p]]])
        table = SimpleTable(head + rows, headers=["", *names], title="Model Comparison")
        smry.tables.append(table)
        smry.add_extra_txt(["Standard errors in parentheses."])
        return smry

    def __str__(self) -> str:
        return str(self.summary())

    def __repr__(self) -> str:
        return f"<ComparisonResults of {list(self._results)}>"

    def _repr_html_(self) -> str:
        return self.summary().as_html()


def compare(
    results: Mapping[str, PrivateResults] | Sequence[PrivateResults],
) -> ComparisonResults:
    """Compare several results side by side (linearmodels' ``compare``).

    Parameters
    ----------
    results : mapping of str to PrivateResults, or a sequence of them
        Models to compare; a sequence is labelled by estimator name (numbered when
        repeated).

    Returns
    -------
    ComparisonResults
        ``params``, ``std_errors``, ``tstats``, ``pvalues``, ``nobs`` and ``summary()``.

    Raises
    ------
    DataMismatchError
        Nothing to compare, or an entry that is not a results object.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> def demo(name, value):
    ...     rec = ResultsRecord(name, "y", pd.Series({"ATE": value}), np.array([[1.0], [-1.0]]),
    ...                         {"alpha": 1.0}, None, (), Diagnostics(), pd.DataFrame())
    ...     return PrivateResults(rec)
    >>> table = compare({"first": demo("A", 1.0), "second": demo("B", 2.0)})
    >>> table.params.loc["ATE"].tolist()
    [1.0, 2.0]
    """
    if isinstance(results, Mapping):
        items = dict(results)
    else:
        items = {}
        for r in results:
            name = getattr(r, "model", type(r).__name__)
            label, k = name, 1
            while label in items:
                k += 1
                label = f"{name} ({k})"
            items[label] = r
    if not items:
        raise DataMismatchError("compare: no results given.")
    bad = [k for k, r in items.items() if not isinstance(r, PrivateResults)]
    if bad:
        raise DataMismatchError(f"compare: entries {bad!r} are not PrivateResults.")
    return ComparisonResults(items)
