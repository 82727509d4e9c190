r"""Results objects shared by every privinfer estimator (STYLE.md §6).

A :class:`PrivateResults` is built from a typed, frozen :class:`ResultsRecord` that the
estimator hands over; it knows how an estimate was produced only through that record.
Standard errors come from the :math:`Q_X^{-1}`-transformed influence values
:math:`\varphi_i`: :math:`\widehat{\mathrm{Var}} = \frac1{n^2}\sum_i \varphi_i\varphi_i'`.
Results never hold raw private values or the input frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm
from statsmodels.iolib.summary import Summary
from statsmodels.iolib.table import SimpleTable

from privinfer._typing import FloatArray
from privinfer._validation import check_in_interval

__all__ = ["Diagnostics", "PrivateResults", "ResultsRecord", "TestResult"]

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
        phi = self._record.influence
        n = phi.shape[0]
        names = self._record.params.index
        return pd.DataFrame(phi.T @ phi / n**2, index=names, columns=names)

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

    def conf_int(self, alpha: float = 0.05) -> pd.DataFrame:
        """Confidence intervals; ``alpha`` here is the significance level, not the keep probability.

        Parameters
        ----------
        alpha : float, default=0.05
            Significance level (1 - coverage). The mechanism's keep probability is
            reported in :meth:`summary` as "Keep prob. (alpha)".

        Returns
        -------
        DataFrame
            Columns ``lower`` and ``upper``, one row per parameter.
        """
        level = check_in_interval(
            alpha, "alpha", "conf_int", 0.0, 1.0, low_open=True, high_open=True
        )
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
