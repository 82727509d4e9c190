r"""The typed, frozen records an estimator hands to :class:`~privinfer.results.PrivateResults`.

:class:`ResultsRecord` carries the estimates, the transformed influence values and the
description of the mechanism; :class:`Diagnostics`, :class:`TestResult` and
:class:`BootstrapDraws` are its parts. :func:`data_fingerprint` identifies the rows that a
fit used without storing them. All names are importable from :mod:`privinfer.results`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from privinfer._repr import short_repr
from privinfer._typing import FloatArray, IntArray

__all__ = ["BootstrapDraws", "Diagnostics", "ResultsRecord", "TestResult", "data_fingerprint"]


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
    #: private estimates of the Riesz representers' second moments at the reference draws
    #: (where the privatisation noise of the estimate comes from)
    riesz_reference_moment: dict[str, float] = field(default_factory=dict)


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
    :meth:`~privinfer.results.PrivateResults.bootstrap` stores its draws in one; they drive
    simultaneous intervals. Here draws of two independent standard normal t statistics are attached
    by hand, so the sup-t critical value is about 2.24 instead of 1.96:

    >>> import numpy as np, pandas as pd
    >>> t_stats = np.random.default_rng(0).standard_normal((2000, 2))
    >>> draws = BootstrapDraws(method="normal", n_boot=2000, t_stats=t_stats, units="rows")
    >>> phi = np.array([[1.0, 1.0], [-1.0, -1.0], [1.0, -1.0], [-1.0, 1.0]])
    >>> rec = ResultsRecord("Demo", "y", pd.Series({"a": 0.0, "b": 1.0}), phi,
    ...                     {"alpha": 1.0}, None, (), Diagnostics(), pd.DataFrame(),
    ...                     bootstrap=draws)
    >>> from privinfer.results import PrivateResults
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
    __repr__ = short_repr  # one line: arrays and tables by their shape


@dataclass(frozen=True)
class ResultsRecord:
    r"""Everything an estimator hands to :class:`~privinfer.results.PrivateResults`.

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
        Multiplier-bootstrap draws, set by :meth:`~privinfer.results.PrivateResults.bootstrap`.
    bias_bound : Series or None, default=None
        Estimated bound :math:`B` on the absolute bias of each estimate (regularisation of
        the nuisance fits); pointwise intervals then use the bias-aware critical value.
    joint_cov : DataFrame or None, default=None
        The ``cov_override`` of the whole fit this record was sliced from
        (``results[[...]]``): contrasts of one fit's own parameters (``res["a"] - res["b"]``)
        use it, so that they keep the covariance the fit reported.

    Examples
    --------
    A record of four rows in two public clusters; influence values that agree within a
    cluster make the clustered standard error larger than the row-wise one:

    >>> import numpy as np, pandas as pd
    >>> phi = np.array([[1.0], [1.0], [-1.0], [-1.0]])
    >>> common = ("Demo", "y", pd.Series({"mean": 2.0}), phi, {"alpha": 1.0}, None,
    ...           (("Rows:", "4"),), Diagnostics(), pd.DataFrame())
    >>> from privinfer.results import PrivateResults
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
    #: estimated bound B on the absolute bias per parameter (regularised nuisances); the
    #: pointwise intervals use the bias-aware critical value (Armstrong and Kolesar, 2020)
    bias_bound: pd.Series | None = None
    #: the whole fit's ``cov_override`` when this record is a slice of it (else None)
    joint_cov: pd.DataFrame | None = None
    __repr__ = short_repr  # one line: arrays and tables by their shape


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
