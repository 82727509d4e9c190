r"""Results of :class:`~privinfer.models.gmm.PrivateGMM`: predictions, R², AR sets, margins.

:class:`PrivateGMMResults` adds to :class:`~privinfer.results.PrivateResults` what is
specific to GMM fits:

* ``predict``, ``fittedvalues`` and ``resid`` for the formula routes. On released rows
  the fitted values are predictions *at the released covariates*, which for a share
  :math:`1-\alpha` of the rows are reference draws, not the true covariates; they are
  not estimates of :math:`E[y\mid x_i]` row by row. Their average and the private
  :math:`R^2` are unbiased through :math:`Q_X^{-1}`; the rows themselves are not.
* ``rsquared`` (linear models), from the deconvolved second moments;
* ``ar_test`` and ``ar_conf_int`` (IV): the weak-instrument-robust private
  Anderson-Rubin test and its confidence set by test inversion; ``clr_test``, the robust
  conditional likelihood-ratio test (one endogenous regressor);
* ``get_margeff`` (logit): average marginal effects with delta-method standard errors.

Predictions need the released design, which the results hold by reference while the
session lives and never pickle: a results object restored from disk carries no data rows.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import expit

from privinfer._frames import as_pandas
from privinfer._validation import check_level
from privinfer.exceptions import NotAvailableError, UnsupportedBackendError, WeakInstrumentWarning
from privinfer.models._gmm_common import FitOptions
from privinfer.models._gmm_dask import OmittedInfluence
from privinfer.models._gmm_logit import MarginalEffects
from privinfer.models._weakiv import WEAK_F, ConfidenceSet, WeakIVStats
from privinfer.results import PrivateResults, ResultsRecord, TestResult

__all__ = ["PrivateGMMResults"]


class PrivateGMMResults(PrivateResults):
    """Results of a private GMM fit (OLS, IV, logit or user moments).

    Parameters
    ----------
    record : ResultsRecord
    kind : {"ols", "iv", "logit", "generic"}
    engine : object, optional
        The fitted engine (held by reference for predictions; never pickled).
    rsquared : float, optional
    margeff : MarginalEffects, optional
    weak_iv : WeakIVStats, optional

    Examples
    --------
    >>> import numpy as np, pandas as pd, privinfer as pi
    >>> rng = np.random.default_rng(0)
    >>> raw = pd.DataFrame({"x": rng.uniform(0, 1, 2000), "w": rng.normal(size=2000)})
    >>> raw["y"] = 1 + 2 * raw["x"] - raw["w"] + rng.normal(size=2000)
    >>> mech = pi.AlphaIdentity(0.6, {"x": pi.reference.Uniform(0, 1)})
    >>> released = mech.privatize(raw, public=["w", "y"], random_state=2)
    >>> res = pi.PrivateGMM.ols("y ~ x + w", released, mechanism=mech).fit(random_state=0)
    >>> bool(0.3 < res.rsquared < 0.8), res.fittedvalues.shape
    (True, (2000,))
    """

    def __init__(
        self,
        record: ResultsRecord,
        kind: str = "generic",
        engine: Any = None,
        *,
        rsquared: float | None = None,
        margeff: MarginalEffects | None = None,
        weak_iv: WeakIVStats | None = None,
    ) -> None:
        super().__init__(record)
        self._kind = kind
        self._engine = engine
        self._rsquared = rsquared
        self._margeff = margeff
        self._weak_iv = weak_iv

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        state["_engine"] = None  # the released design never travels with the results
        return state

    def _like(self, record: ResultsRecord) -> PrivateGMMResults:
        return PrivateGMMResults(
            record,
            self._kind,
            self._engine,
            rsquared=self._rsquared,
            margeff=self._margeff,
            weak_iv=self._weak_iv,
        )

    @property
    def influence(self) -> pd.DataFrame:
        r"""Centred transformed influence values :math:`\varphi_i` (n x p).

        Raises
        ------
        UnsupportedBackendError
            The fit ran on a Dask DataFrame: its covariance was reduced over the
            partitions and the influence values were never gathered.
        """
        self._require_rows("influence")
        return super().influence

    def _require_rows(self, what: str) -> None:
        infl = self._record.influence
        if isinstance(infl, OmittedInfluence):
            raise UnsupportedBackendError(
                f"PrivateGMMResults.{what}: this fit ran on a Dask DataFrame, whose influence "
                f"values (n = {infl.shape[0]} rows) are reduced over the partitions and never "
                "gathered. Refit on pandas (compute() the frame) for row-level values and "
                "the multiplier bootstrap."
            )

    def bootstrap(self, *args: Any, **kwargs: Any) -> PrivateGMMResults:
        r"""Multiplier bootstrap of the t statistics; see :meth:`PrivateResults.bootstrap`.

        Same arguments. The fit records its public clusters, so with
        ``cov_type="clustered"`` one multiplier is drawn per cluster and the draws
        :math:`t^*` have unit variance under the clustered covariance.

        Returns
        -------
        PrivateGMMResults
            A copy carrying the draws.

        Raises
        ------
        UnsupportedBackendError
            A fit on a Dask DataFrame (its influence values are not gathered).

        Examples
        --------
        >>> import numpy as np, pandas as pd, privinfer as pi
        >>> rng = np.random.default_rng(0)
        >>> g = rng.integers(0, 40, 2000)
        >>> raw = pd.DataFrame({"x": rng.uniform(0, 1, 2000), "g": g})
        >>> raw["y"] = raw["x"] + rng.normal(size=40)[g] + rng.normal(size=2000)
        >>> mech = pi.AlphaIdentity(0.7, {"x": pi.reference.Uniform(0, 1)})
        >>> released = mech.privatize(raw, public=["y", "g"], random_state=1)
        >>> res = pi.PrivateGMM.ols("y ~ x", released, mechanism=mech).fit(
        ...     cov_type="clustered", clusters=released["g"], random_state=0)
        >>> boot = res.bootstrap(n_boot=2000, random_state=1)
        >>> bool(abs(boot.boot_t_stats["x"].std() - 1) < 0.1)
        True
        """
        self._require_rows("bootstrap")
        return self._like(super().bootstrap(*args, **kwargs)._record)

    # -- fit quality -----------------------------------------------------------------------
    @property
    def rsquared(self) -> float:
        r"""Private :math:`R^2 = 1 - \hat\sigma^2/\widehat{\mathrm{Var}}(y)` (linear models).

        :math:`\hat\sigma^2 = w'Sw` with the deconvolved second moments :math:`S` and
        :math:`w = (1, -\hat\theta)`: an estimate of the *true-data* :math:`R^2`; at
        ``alpha = 1`` statsmodels' / linearmodels' value (centred with an intercept).
        """
        if self._rsquared is None:
            raise NotAvailableError(
                f"rsquared is defined for PrivateGMM.ols and .iv fits; this is a {self._kind!r} "
                "fit."
            )
        return float(self._rsquared)

    # -- predictions -----------------------------------------------------------------------
    def _require_engine(self, what: str) -> Any:
        if self._kind not in ("ols", "iv", "logit"):
            raise NotAvailableError(
                f"{what} is defined for the formula routes (.ols, .iv, .logit); this is a "
                f"{self._kind!r} fit."
            )
        if self._engine is None:
            raise NotAvailableError(
                f"{what} needs the released design, which results never pickle; refit the "
                "model in this session."
            )
        return self._engine

    def predict(self, exog: pd.DataFrame | None = None) -> pd.Series:
        r"""Predictions :math:`x'\hat\theta` (logit: :math:`\mathrm{expit}(x'\hat\gamma)`).

        Parameters
        ----------
        exog : DataFrame-like, optional
            Frame with every variable on the formula's right-hand side (instruments
            included for IV): pandas, or another DataFrame library (converted as the
            models' data are). ``None`` predicts at the released rows, i.e. at the
            *released* covariates, which are reference draws for a share
            :math:`1-\alpha` of the rows.

        Returns
        -------
        Series
            One prediction per row.

        Raises
        ------
        NotAvailableError
            User-moment fits, or results restored from a pickle.
        DataMismatchError
            ``exog`` lacks a variable of the right-hand side.
        UnsupportedInputError
            ``exog`` is not a DataFrame (e.g. a dict, or an array: the message names the
            columns to give it).
        """
        engine = self._require_engine("predict")
        frame = None
        if exog is not None:
            needed = sorted(engine.design.spec.variables)
            hint = (
                f" Pass a DataFrame whose columns are the right-hand side's variables {needed}, "
                "e.g. pandas.DataFrame(array, columns=[...])."
            )
            frame = as_pandas(exog, "PrivateGMMResults.predict", array_hint=hint)
        X = engine.regressors(frame)
        fit = X @ self.params.to_numpy()
        if self._kind == "logit":
            fit = expit(fit)
        index = None if frame is None else frame.index
        return pd.Series(fit, index=index, name="predicted")

    @property
    def fittedvalues(self) -> pd.Series:
        """Predictions at the released rows (see :meth:`predict` for what they mean)."""
        return self.predict()

    @property
    def resid(self) -> pd.Series:
        """Released outcome minus :attr:`fittedvalues` (logit: response residuals)."""
        engine = self._require_engine("resid")
        return pd.Series(engine.outcome() - self.predict().to_numpy(), name="resid")

    # -- logit margins -----------------------------------------------------------------------
    def get_margeff(self) -> MarginalEffects:
        r"""Average marginal effects of a logit with private delta-method standard errors.

        Returns
        -------
        MarginalEffects
            ``margeff``, ``margeff_se`` and ``summary_frame()``; at ``alpha = 1`` equal to
            statsmodels' ``get_margeff()`` (``at="overall"``, ``method="dydx"``) with the
            same covariance type.

        Raises
        ------
        NotAvailableError
            Not a logit fit.
        """
        if self._margeff is None:
            raise NotAvailableError(
                f"get_margeff is defined for PrivateGMM.logit fits; this is a {self._kind!r} fit."
            )
        return self._margeff

    # -- weak-instrument-robust inference --------------------------------------------------
    @property
    def weak_iv(self) -> WeakIVStats:
        """Aggregates of the private Anderson-Rubin test (IV fits)."""
        if self._weak_iv is None:
            raise NotAvailableError(
                f"Anderson-Rubin inference is defined for PrivateGMM.iv fits; this is a "
                f"{self._kind!r} fit."
            )
        return self._weak_iv

    def ar_test(self, value: Any = 0.0) -> TestResult:
        r"""Private Anderson-Rubin test of :math:`H_0: \beta_{\mathrm{endog}} = \beta_0`.

        Valid whatever the strength of the (private) first stage: a private OLS of
        :math:`y - x'\beta_0` on all instruments and a robust (or cluster-robust, as the
        fit) Wald test of the excluded instruments, :math:`\chi^2_q` under the null.

        Parameters
        ----------
        value : float or array-like, default=0
            Hypothesised value of each endogenous coefficient (in formula order).

        Returns
        -------
        TestResult
        """
        return self.weak_iv.ar_test(value)

    def clr_test(self, value: float = 0.0) -> TestResult:
        r"""Robust conditional likelihood-ratio test of the endogenous coefficient (IV).

        Kleibergen's (2005) heteroskedasticity-robust version of Moreira's (2003) CLR test
        on the private moments (:meth:`WeakIVStats.clr_test`): the K test under strong
        instruments, size-correct under weak ones; the AR test with one instrument.

        Parameters
        ----------
        value : float, default=0
            Hypothesised value of the (single) endogenous coefficient.

        Returns
        -------
        TestResult
        """
        return self.weak_iv.clr_test(value)

    def _level_lines(self, alpha: float) -> tuple[list[tuple[str, str]], list[str]]:
        r"""The Anderson-Rubin set next to the Wald interval, both at level :math:`1 - a`.

        For an IV fit with one endogenous regressor :math:`\beta`; nothing otherwise. The
        set is recomputed from the stored aggregates (:meth:`ar_conf_int`), so it follows
        the level of :meth:`summary`.

        Returns
        -------
        facts, notes : list
            The header line ``AR 95% set x:`` (at ``alpha = 0.05``) and the note that
            compares the two intervals.
        """
        weak = self._weak_iv
        if weak is None or len(weak.endog) != 1 or first_stage_min(self.tests) is None:
            return [], []
        name = weak.endog[0]
        ar = self.ar_conf_int(alpha)
        lo, hi = self.conf_int(alpha).loc[name]
        pct = f"{100 * (1 - alpha):g}%"
        return [(f"AR {pct} set {name}:", str(ar))], [
            f"{pct} intervals for {name!r}: Wald [{lo:.4g}, {hi:.4g}]; Anderson-Rubin {ar} "
            f"({ar.kind})."
        ]

    def ar_conf_int(self, alpha: float = 0.05) -> ConfidenceSet:
        r"""Anderson-Rubin confidence set of the endogenous coefficient, by test inversion.

        Parameters
        ----------
        alpha : float, default=0.05
            Significance level (not the keep probability).

        Returns
        -------
        ConfidenceSet
            A union of intervals; ``kind`` says ``"bounded"``, ``"unbounded"`` (a weak
            first stage: the set is unbounded exactly when the first-stage Wald test does
            not reject at ``alpha``), ``"disjoint"`` or ``"empty"``.
        """
        level = check_level(alpha, self._owner("ar_conf_int"))
        weak = self.weak_iv
        name = weak.endog[0] if len(weak.endog) == 1 else None
        center = float(self.params[name]) if name is not None else 0.0
        scale = float(self.bse[name]) if name is not None else 1.0
        return weak.conf_set(1.0 - level, center=center, scale=scale)


def first_stage_min(tests: dict[str, TestResult]) -> float | None:
    """Smallest first-stage partial F among ``tests`` (``None`` without first stage)."""
    fs = [t.stat for k, t in tests.items() if k.startswith("first_stage[")]
    return float(np.min(fs)) if fs else None


def weak_iv_warning(weak: WeakIVStats | None, f_min: float | None, notes: list[str]) -> None:
    """Note and warn when the private first stage is weak (the partial F below 10)."""
    if weak is None or f_min is None or f_min >= WEAK_F:
        return
    msg = (
        f"Weak instruments: the private first-stage partial F is {f_min:.2f} < "
        f"{WEAK_F:g}; Wald intervals may under-cover. Use results.ar_conf_int() "
        "(Anderson-Rubin, robust to weak instruments)."
    )
    notes.append(msg)
    warnings.warn(msg, WeakInstrumentWarning, stacklevel=4)


def se_note(o: FitOptions) -> str:
    """The SE type, stated in every summary."""
    if o.cov_type == "nonrobust":
        return (
            "Covariance: classical non-robust (inverse information / sigma^2 Szz); valid at "
            "alpha = 1 only."
        )
    what = (
        "cluster-robust GMM sandwich"
        if o.codes is not None
        else "heteroskedasticity-robust GMM sandwich (HC0 at alpha = 1; the default)"
    )
    return (
        f"Covariance: {what} with private D and Phi (Kormos and van der Vaart 2026, Prop. 2); "
        "cov_type='nonrobust' gives the classical one for the formula routes."
    )
