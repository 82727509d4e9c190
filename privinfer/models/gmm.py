r"""PrivateGMM: the locally private generalised method of moments.

Kormos and van der Vaart (2026), Proposition 2. Moments :math:`\phi_\theta(v, x)` are
written for the true data; their private version :math:`\bar\phi_\theta = Q_X^{-1}\phi_\theta`
has the same expectation under the released-data law, so

.. math::

    \check\theta = \arg\min_\theta\ \bar g(\theta)' A_n\, \bar g(\theta),\qquad
    \bar g(\theta) = \frac1n\sum_i \bar\phi_\theta(V_i, Z_i),

is consistent, and :math:`\sqrt n(\check\theta - \theta_0) \to N(0, \bar\Sigma)` with
:math:`\bar\Sigma = (D'AD)^{-1}D'A\bar\Phi AD(D'AD)^{-1}`,
:math:`D = \frac1n\sum_i \partial_\theta\bar\phi` (the operator commutes with
differentiation) and :math:`\bar\Phi = \frac1n\sum_i\bar\phi_i\bar\phi_i'`. Efficient
two-step weighting uses :math:`A = \hat{\bar\Phi}^{-1}` and gives Hansen's J-test.

:class:`PrivateGMM` is a façade over three engines, one module each, all with
``fit(options, rng) -> GMMFit``:

* linear moments (:meth:`PrivateGMM.ols`, :meth:`PrivateGMM.iv`,
  :mod:`~privinfer.models._gmm_linear`): closed forms through private Gram and
  cross-moment matrices, O(n K^2 + M K^2); IV fits add the private first stage and the
  weak-instrument-robust Anderson-Rubin test (:mod:`~privinfer.models._weakiv`);
* the logistic score (:meth:`PrivateGMM.logit`, :mod:`~privinfer.models._gmm_logit`):
  Newton steps with the exact deconvolved Jacobian, O(n K^2 + T M K^2), and average
  marginal effects;
* any user moment function (:class:`PrivateGMM` itself,
  :mod:`~privinfer.models._gmm_generic`): reference expectations by brute force over
  the distinct public rows, O(T M) function evaluations.

Covariances, clusters and the sandwich come from :mod:`privinfer.covariance`. On a
Dask DataFrame the formula routes sum over partitions
(:mod:`~privinfer.models._gmm_dask`); the user-moment route computes it to pandas.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd

from privinfer._frames import MODEL_ARRAY_HINT, as_pandas, frame_from_arrays
from privinfer._typing import ArrayLike, FloatArray, RandomStateLike
from privinfer._validation import check_int, check_random_state
from privinfer.exceptions import (
    DataMismatchError,
    NotAvailableError,
    SingularDesignError,
)
from privinfer.mechanisms.alpha_identity import AlphaIdentity
from privinfer.models._backend import is_dask_frame
from privinfer.models._diagnose import warn_few_weighted_rows
from privinfer.models._gmm_common import FitOptions, GMMEngine, GMMFit, check_inputs, fit_options
from privinfer.models._gmm_dask import DaskLinearDesign, OmittedInfluence, dask_linear_design
from privinfer.models._gmm_design import (
    LinearDesign,
    LinearFormula,
    build_linear_design,
    parse_linear_formula,
)
from privinfer.models._gmm_generic import build_generic_engine
from privinfer.models._gmm_linear import LinearEngine
from privinfer.models._gmm_logit import LogitEngine, MarginalEffects
from privinfer.models._gmm_results import (
    PrivateGMMResults,
    first_stage_min,
    se_note,
    weak_iv_warning,
)
from privinfer.models._inputs import mechanism_record, release_guarantees, resolve_mechanism
from privinfer.models._weakiv import ConfidenceSet, WeakIVStats
from privinfer.results import Diagnostics, ResultsRecord

__all__ = [
    "ConfidenceSet",
    "CovType",
    "MarginalEffects",
    "PrivateGMM",
    "PrivateGMMResults",
    "WeakIVStats",
    "Weighting",
]

Weighting = Literal["one-step", "two-step", "iterated"]
CovType = Literal["robust", "clustered", "nonrobust"]
MomentFunction = Callable[[FloatArray, pd.DataFrame], Any]

_OWNER = "PrivateGMM"


class PrivateGMM:
    r"""Private GMM for a user moment function, with OLS, IV and logit front-ends.

    The analyst writes the moment conditions as if the private covariates had been
    observed; :math:`Q_X^{-1}` is applied to each moment function, so averages over the
    released data are unbiased for the true-data moments. ``fit`` returns a
    :class:`~privinfer.results.PrivateResults` with a sandwich covariance and the J-test.

    Use the constructor for a moment function of your own, the classmethods
    :meth:`ols`, :meth:`iv` and :meth:`logit` for formula models; each builds one engine
    (linear, logit or generic) and goes through this constructor, so every route carries
    the same attributes. The generic route
    evaluates :math:`E_{\bar Q}\phi_\theta(v_i, X)` over a reference sample of
    ``reference_size`` points once per *distinct* public row: O(T M) calls-worth of rows,
    O(n M) when a public column is continuous. The formula front-ends are separable and
    O(n + M).

    Parameters
    ----------
    moments : callable or GMMEngine
        ``moments(params, frame) -> ndarray of shape (len(frame), k_moms)``, vectorised
        over rows and written for the *true* data. It is also called on frames that pair
        public rows with reference draws of the private columns, so it must use the
        frame's values only (no row positions or external arrays).
    data : DataFrame
        Released data (the output of ``mechanism.privatize``).
    mechanism : AlphaIdentity or None
        The mechanism that released ``data``; ``None`` reads it from ``data.attrs``.
    k_params : int
        Number of parameters.
    param_names : sequence of str, optional
        Parameter labels; default ``theta_0, theta_1, ...``.
    start_params : array-like of shape (k_params,), optional
        Starting values (default zeros); the moment function is checked there.
    jacobian : callable, optional
        ``jacobian(params, frame) -> ndarray of shape (len(frame), k_moms, k_params)``,
        the derivative of each moment row; default central differences of
        :math:`\bar g`.
    columns : sequence of str, optional
        Columns the moment function uses (default all). Fewer public columns means fewer
        distinct public rows ``T``.
    reference_size : int, default=512
        Reference points ``M`` of the brute-force reference expectation.

    Raises
    ------
    DataMismatchError
        ``moments`` returns the wrong shape, NaN, or data are malformed.
    SingularDesignError
        Fewer moment conditions than parameters (under-identified).
    MechanismMismatchError
        The mechanism does not match the data.

    See Also
    --------
    PrivateGMM.ols : linear regression with private regressors.
    PrivateGMM.iv : linear IV with private regressors and/or instruments.
    PrivateGMM.logit : logistic regression with private regressors.
    privinfer.inversion.invert : the operator :math:`Q_X^{-1}`.

    Notes
    -----
    Kormos and van der Vaart (2026), Proposition 2: with
    :math:`\bar\phi_\theta(v, z) =
    (\phi_\theta(v, z) - (1-\alpha)E_{\bar Q}\phi_\theta(v, X))/\alpha`,

    .. math::

        \sqrt n(\check\theta-\theta_0)\rightsquigarrow N\big(0,
        (D'AD)^{-1}D'A\bar\Phi AD(D'AD)^{-1}\big),\quad
        \bar\Phi = P_{VZ}\bar\phi_{\theta_0}\bar\phi_{\theta_0}'.

    :math:`\bar\Phi` is the variance of the *released-data* rows, the product of the
    inverted values; :math:`D` is a true-data expectation,
    :math:`\frac1n\sum_i Q_X^{-1}[\partial_\theta\phi]`. The worst-case variance grows like
    :math:`1/\alpha^2`.

    References
    ----------
    Kormos, M. and van der Vaart, A. (2026). Private rate-double-robust inference.
    arXiv:2606.20427, sec. 6 and App. D.1.
    Hansen, L. P. (1982). Large sample properties of generalized method of moments
    estimators. Econometrica 50(4).

    Examples
    --------
    >>> import numpy as np, pandas as pd, privinfer as pi
    >>> rng = np.random.default_rng(0)
    >>> raw = pd.DataFrame({"x": rng.uniform(0, 1, 400)})
    >>> raw["y"] = 1 + 2 * raw["x"] + rng.normal(0, 0.5, 400)
    >>> mech = pi.AlphaIdentity(0.8, {"x": pi.reference.Uniform(0, 1)})
    >>> released = mech.privatize(raw, public=["y"], random_state=1)
    >>> def ols_moments(b, f):
    ...     X = np.column_stack([np.ones(len(f)), f["x"]])
    ...     return X * (f["y"].to_numpy() - X @ b)[:, None]
    >>> res = pi.PrivateGMM(ols_moments, released, mech, 2, reference_size=64).fit(random_state=0)
    >>> bool(abs(res.params.iloc[1] - 2) < 4 * res.bse.iloc[1])
    True
    """

    def __init__(
        self,
        moments: MomentFunction | GMMEngine,
        data: pd.DataFrame,
        mechanism: AlphaIdentity | None,
        k_params: int,
        *,
        param_names: Sequence[str] | None = None,
        start_params: Any = None,
        jacobian: MomentFunction | None = None,
        columns: Sequence[str] | None = None,
        reference_size: int = 512,
    ) -> None:
        if not isinstance(moments, GMMEngine):
            data = as_pandas(data, "PrivateGMM", array_hint=MODEL_ARRAY_HINT)
        engine = (
            moments
            if isinstance(moments, GMMEngine)
            else build_generic_engine(
                moments,
                data,
                mechanism,
                k_params,
                param_names,
                start_params,
                jacobian,
                columns,
                reference_size,
            )
        )
        self._engine = engine
        self.mechanism = engine.mechanism
        self.kind = engine.kind
        self.formula = engine.formula
        self.dep_variable = engine.dep_variable
        self.param_names = list(engine.param_names)
        self.k_params = engine.k_params
        self.k_moms = engine.k_moms
        self.reference_size = engine.reference_size
        self.start_params = getattr(engine, "start_params", None)
        self._design = getattr(engine, "design", None)
        # the pandas data's row index: cluster labels given as a Series are aligned to it
        self._row_index: pd.Index | None = data.index if isinstance(data, pd.DataFrame) else None

    # -- constructors ------------------------------------------------------------------
    @classmethod
    def ols(
        cls,
        formula: str,
        data: pd.DataFrame,
        *,
        mechanism: AlphaIdentity | None = None,
        reference_size: int = 8192,
        weights: str | None = None,
    ) -> PrivateGMM:
        r"""Linear regression ``"y ~ x1 + x2 + w"`` with private and public regressors.

        The moments :math:`x(y - x'\beta)` are linear, so
        :math:`\hat\beta = S_{xx}^{-1}S_{xy}` in the private second moments
        :math:`S = \frac1n\sum_i Q_X^{-1}[c\,c']`: O(n K^2 + M K^2), in row chunks.

        Parameters
        ----------
        formula : str
            Formulaic formula; the dependent variable must be public, regressor terms
            must each be purely private or purely public (``w:x`` interactions of a
            public and a private variable are not separable through formula terms).
        data : DataFrame
            Released data: pandas, another frame library, or a Dask DataFrame (fitted
            partition by partition; the results omit the influence values).
        mechanism : AlphaIdentity or None, default=None
            ``None`` reads it from ``data.attrs``.
        reference_size : int, default=8192
            Reference (Sobol) points for the moments of continuous private columns.
        weights : str, optional
            A public column of sampling weights (>= 0, normalised to mean one): every
            moment and second moment is a weighted average, and the moment rows of the
            covariance are weighted (weighted least squares / weighted GMM; at
            ``alpha = 1`` statsmodels' ``WLS`` with the same covariance type). The
            summary reports Kish's effective sample size of the weights.

        Returns
        -------
        PrivateGMM

        Raises
        ------
        MechanismMismatchError
            The dependent variable is private.
        DataMismatchError, MissingValueError, NonSeparableTermError

        Warns
        -----
        FewEffectiveRowsWarning
            Kish's effective sample size of ``weights``,
            :math:`(\sum w)^2 / \sum w^2`, is below 200: a few rows carry the estimate.

        Examples
        --------
        >>> import numpy as np, pandas as pd, privinfer as pi
        >>> rng = np.random.default_rng(0)
        >>> raw = pd.DataFrame({"x": rng.uniform(0, 1, 2000), "w": rng.normal(size=2000)})
        >>> raw["y"] = 1 + 2 * raw["x"] - raw["w"] + rng.normal(size=2000)
        >>> mech = pi.AlphaIdentity(0.6, {"x": pi.reference.Uniform(0, 1)})
        >>> released = mech.privatize(raw, public=["w", "y"], random_state=2)
        >>> res = pi.PrivateGMM.ols("y ~ x + w", released,
        ...                         mechanism=mech).fit(random_state=0)
        >>> list(res.params.index)
        ['Intercept', 'x', 'w']
        """
        return cls._linear(formula, data, mechanism, reference_size, iv=False, weights=weights)

    @classmethod
    def iv(
        cls,
        formula: str,
        data: pd.DataFrame,
        *,
        mechanism: AlphaIdentity | None = None,
        reference_size: int = 8192,
        weights: str | None = None,
    ) -> PrivateGMM:
        r"""Linear IV ``"y ~ w + [x ~ z1 + z2]"`` (linearmodels' bracket syntax).

        Endogenous regressors, exogenous regressors and excluded instruments may each be
        private or public. One-step weighting is 2SLS, :math:`A = S_{zz}^{-1}`; two-step
        and iterated weighting use :math:`A = \hat{\bar\Phi}^{-1}`. The fit also reports
        the first-stage strength of every endogenous regressor, estimated privately, and the
        weak-instrument-robust Anderson-Rubin test and confidence set
        (``res.ar_test``, ``res.ar_conf_int``).

        Parameters
        ----------
        formula : str
            ``"dep ~ exog + [endog ~ instruments]"``; one bracket block.
        data : DataFrame
            Released data: pandas, another frame library, or a Dask DataFrame (fitted
            partition by partition; the results omit the influence values).
        mechanism : AlphaIdentity or None, default=None
            ``None`` reads it from ``data.attrs``.
        reference_size : int, default=8192
            Reference (Sobol) points for the moments of continuous private columns.
        weights : str, optional
            A public column of sampling weights (>= 0, normalised to mean one): every
            moment and second moment is a weighted average, and the moment rows of the
            covariance are weighted (weighted least squares / weighted GMM; at
            ``alpha = 1`` statsmodels' ``WLS`` with the same covariance type). The
            summary reports Kish's effective sample size of the weights.

        Returns
        -------
        PrivateGMM

        Raises
        ------
        SingularDesignError
            Fewer excluded instruments than endogenous regressors.
        MechanismMismatchError
            The dependent variable is private.
        DataMismatchError
            Malformed formula.

        Warns
        -----
        FewEffectiveRowsWarning
            Kish's effective sample size of ``weights``,
            :math:`(\sum w)^2 / \sum w^2`, is below 200: a few rows carry the estimate.

        Examples
        --------
        >>> import numpy as np, pandas as pd, privinfer as pi
        >>> rng = np.random.default_rng(0)
        >>> n = 3000
        >>> z = rng.uniform(0, 1, (n, 2)); u = rng.normal(size=n)
        >>> x = z @ [1.0, 1.0] + u + rng.normal(size=n)
        >>> raw = pd.DataFrame({"z1": z[:, 0], "z2": z[:, 1], "x": x, "y": 1 + x + u})
        >>> mech = pi.AlphaIdentity(0.7, {"z1": pi.reference.Uniform(0, 1),
        ...                               "z2": pi.reference.Uniform(0, 1)})
        >>> released = mech.privatize(raw, public=["x", "y"], random_state=3)
        >>> res = pi.PrivateGMM.iv("y ~ 1 + [x ~ z1 + z2]", released,
        ...                        mechanism=mech).fit(random_state=0)
        >>> res.j_test.df
        1
        """
        return cls._linear(formula, data, mechanism, reference_size, iv=True, weights=weights)

    @classmethod
    def logit(
        cls,
        formula: str,
        data: pd.DataFrame,
        *,
        mechanism: AlphaIdentity | None = None,
        reference_size: int = 8192,
        weights: str | None = None,
    ) -> PrivateGMM:
        r"""Logistic regression ``"d ~ x1 + w"`` of a public binary outcome.

        The score :math:`\psi(d - \mathrm{expit}(\gamma'\psi))` is inverted whole and
        solved by Newton steps with the exact deconvolved Jacobian
        (:func:`privinfer.nuisance.logit.fit_private_logit`); reference expectations go
        through the single index, O(n K^2 + T M K^2). At ``alpha = 1`` this is the
        maximum-likelihood estimator. Parameters come out in formula order, named as in
        :meth:`ols`. The default covariance is the robust sandwich (HC0 at ``alpha = 1``);
        ``fit(cov_type="nonrobust")`` gives the inverse information, statsmodels' default.

        Parameters
        ----------
        formula : str
            ``"d ~ covariates"`` with an intercept; ``d`` public and coded 0/1.
        data : DataFrame
            Released data: pandas, another frame library, or a Dask DataFrame (fitted
            partition by partition; the results omit the influence values).
        mechanism : AlphaIdentity or None, default=None
            ``None`` reads it from ``data.attrs``.
        reference_size : int, default=8192
            Reference (Sobol) points.
        weights : str, optional
            A public column of sampling weights (>= 0, normalised to mean one): the
            weighted score equations, weighted score rows in the covariance and weighted
            average marginal effects. The summary reports Kish's effective sample size of
            the weights.

        Returns
        -------
        PrivateGMM

        Raises
        ------
        MechanismMismatchError
            The outcome is private.
        DataMismatchError
            The outcome is not 0/1 or is constant, or the formula drops the intercept.

        Warns
        -----
        PerfectSeparationWarning
            At ``fit()``: the covariates (quasi-)separate the outcome, so the logit's
            coefficients are not identified.
        FewEffectiveRowsWarning
            Kish's effective sample size of ``weights``,
            :math:`(\sum w)^2 / \sum w^2`, is below 200: a few rows carry the estimate.

        Examples
        --------
        >>> import numpy as np, pandas as pd, privinfer as pi
        >>> rng = np.random.default_rng(0)
        >>> raw = pd.DataFrame({"x": rng.uniform(-1, 1, 3000)})
        >>> raw["d"] = (rng.uniform(size=3000) < 1 / (1 + np.exp(-2 * raw["x"]))).astype(float)
        >>> mech = pi.AlphaIdentity(0.7, {"x": pi.reference.Uniform(-1, 1)})
        >>> released = mech.privatize(raw, public=["d"], random_state=4)
        >>> res = pi.PrivateGMM.logit("d ~ x", released,
        ...                           mechanism=mech).fit(random_state=0)
        >>> bool(abs(res.params["x"] - 2) < 4 * res.bse["x"])
        True
        """
        owner = "PrivateGMM.logit"
        parsed = parse_linear_formula(formula, owner, iv=False)
        if not parsed.intercept:
            raise DataMismatchError(f"{owner}: {formula!r} must keep the intercept.")
        data, mech, design = _design(
            parsed, data, mechanism, owner, persist=True, weights=weights
        )
        size = check_int(reference_size, "reference_size", owner, 2)
        if isinstance(design, LinearDesign):
            bad, values = _outcome_values(design)
        else:
            bad, values = design.sums(_outcome_values, add=_merge_values)
        if bad:
            raise DataMismatchError(
                f"{owner}: the outcome {parsed.dependent!r} must be coded 0/1; got values "
                f"{values.tolist()!r}."
            )
        if values.size < 2:
            raise DataMismatchError(
                f"{owner}: the outcome {parsed.dependent!r} is constant (every row is "
                f"{values.tolist()[0]:g}); a logit needs both outcomes, and its intercept would "
                "drift to infinity. Check the sample (a filter may have removed one class)."
            )
        engine = LogitEngine(design, mech, formula, parsed.dependent, size, weights)
        return cls(engine, data, mech, engine.k_params)

    @classmethod
    def _linear(
        cls,
        formula: str,
        data: pd.DataFrame,
        mechanism: AlphaIdentity | None,
        reference_size: int,
        *,
        iv: bool,
        weights: str | None = None,
    ) -> PrivateGMM:
        owner = "PrivateGMM.iv" if iv else "PrivateGMM.ols"
        parsed = parse_linear_formula(formula, owner, iv=iv)
        data, mech, design = _design(
            parsed, data, mechanism, owner, persist=False, weights=weights
        )
        size = check_int(reference_size, "reference_size", owner, 2)
        kind = "iv" if iv else "ols"
        engine = LinearEngine(
            design, mech, kind, formula, parsed.dependent, size, parsed.intercept, weights
        )
        return cls(engine, data, mech, engine.k_params)

    @classmethod
    def from_arrays(
        cls,
        dependent: ArrayLike,
        exog: ArrayLike | None,
        endog: ArrayLike | None = None,
        instruments: ArrayLike | None = None,
        *,
        mechanism: AlphaIdentity,
        logit: bool = False,
        intercept: bool = True,
        names: Mapping[str, str | Sequence[str]] | None = None,
        reference_size: int = 8192,
    ) -> PrivateGMM:
        r"""Linear regression, linear IV or logit from numpy arrays (linearmodels' order).

        The arrays become the columns ``y``, ``x1 .. xk`` (exogenous regressors),
        ``endog1 ..`` and ``z1 ..`` (excluded instruments) of a frame (a 1-D array keeps
        the bare name: ``x``, ``endog``, ``z``), and the model is built as
        :meth:`ols` (``"y ~ x1 + x2"``), :meth:`iv` (``"y ~ x1 + [endog1 ~ z1 + z2]"``)
        or :meth:`logit`; the mechanism's reference distributions are keyed by those
        names. Categorical regressors need a formula (``C(g)``).

        Parameters
        ----------
        dependent : array-like of shape (n,)
            Dependent variable (public).
        exog : array-like of shape (n,) or (n, k), or None
            Exogenous regressors, without a constant column (see ``intercept``).
        endog : array-like of shape (n,) or (n, p), optional
            Endogenous regressors (IV); needs ``instruments``.
        instruments : array-like of shape (n,) or (n, q), optional
            Excluded instruments, ``q >= p``.
        mechanism : AlphaIdentity
            The mechanism that released the private columns.
        logit : bool, default=False
            A logistic regression of a 0/1 ``dependent`` instead of a linear model.
        intercept : bool, default=True
            Add an intercept (named ``Intercept``); a logit needs one.
        names : mapping, optional
            Column names by argument: ``{"dependent": "lwage", "exog": ["exper"],
            "endog": ["educ"], "instruments": ["fatheduc", "motheduc"]}``.
        reference_size : int, default=8192
            Reference (Sobol) points for the moments of continuous private columns.

        Returns
        -------
        PrivateGMM

        Raises
        ------
        DataMismatchError
            Arrays of different lengths, non-numeric arrays, clashing names, ``endog``
            without ``instruments`` (or the reverse), or IV with ``logit=True``.

        Warns
        -----
        UnverifiedReleaseWarning
            Below keep probability 1: arrays carry no release metadata, so nothing
            shows that they went through ``mechanism``.

        Examples
        --------
        >>> import warnings
        >>> import numpy as np, pandas as pd, privinfer as pi
        >>> rng = np.random.default_rng(0)
        >>> x = rng.uniform(0, 1, 3000); w = rng.normal(size=3000)
        >>> y = 1 + 2 * x - w + rng.normal(size=3000)
        >>> mech = pi.AlphaIdentity(0.6, {"x": pi.reference.Uniform(0, 1)})
        >>> x_released = mech.privatize(pd.DataFrame({"x": x}), shuffle=False,
        ...                             random_state=1)["x"]
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", pi.UnverifiedReleaseWarning)
        ...     res = pi.PrivateGMM.from_arrays(y, np.column_stack([x_released, w]),
        ...                                     mechanism=mech, names={"exog": ["x", "w"]})
        >>> res.formula
        'y ~ 1 + x + w'
        >>> fit = res.fit(random_state=0)
        >>> bool(abs(fit.params["x"] - 2) < 4 * fit.bse["x"])
        True
        """
        owner = "PrivateGMM.from_arrays"
        if (endog is None) != (instruments is None):
            raise DataMismatchError(
                f"{owner}: endogenous regressors and excluded instruments go together; got "
                f"endog={'an array' if endog is not None else None} and instruments="
                f"{'an array' if instruments is not None else None}."
            )
        if logit and endog is not None:
            raise DataMismatchError(f"{owner}: a logit has no endogenous regressors.")
        roles = {"dependent": "y", "exog": "x", "endog": "endog", "instruments": "z"}
        given = dict(names or {})
        unknown = sorted(set(given) - set(roles))
        if unknown:
            raise DataMismatchError(
                f"{owner}: names keys must be among {list(roles)}; got {unknown}."
            )
        frame, cols = frame_from_arrays(
            {"y": dependent, "x": exog, "endog": endog, "z": instruments},
            owner,
            {roles[k]: v for k, v in given.items()},
        )
        rhs = ["1" if intercept else "0", *cols.get("x", [])]
        if endog is not None:
            rhs.append(f"[{' + '.join(cols['endog'])} ~ {' + '.join(cols['z'])}]")
        formula = f"{cols['y'][0]} ~ {' + '.join(rhs)}"
        if logit:
            model = cls.logit(formula, frame, mechanism=mechanism, reference_size=reference_size)
        else:
            build = cls.iv if endog is not None else cls.ols
            model = build(formula, frame, mechanism=mechanism, reference_size=reference_size)
        model._row_index = None  # the arrays are positional, and so are cluster labels
        return model

    # -- fit ---------------------------------------------------------------------------
    def fit(
        self,
        *,
        weighting: Weighting = "two-step",
        cov_type: CovType = "robust",
        clusters: Any = None,
        small_g: bool = False,
        center: bool = False,
        initial_weight: Any = None,
        start_params: Any = None,
        max_iter: int = 100,
        tol: float = 1e-10,
        random_state: RandomStateLike = None,
    ) -> PrivateGMMResults:
        r"""Estimate; returns a :class:`PrivateGMMResults` (the model is unchanged).

        Parameters
        ----------
        weighting : {"one-step", "two-step", "iterated"}, default="two-step"
            One-step uses ``initial_weight`` (default :math:`S_{zz}^{-1}` for linear IV,
            i.e. 2SLS, and the identity otherwise); two-step re-weights once by
            :math:`\hat{\bar\Phi}^{-1}` at the one-step estimate; iterated repeats until the
            estimate settles. Irrelevant for exactly identified models.
        cov_type : {"robust", "clustered", "nonrobust"}, default="robust"
            Heteroskedasticity-robust (HC0 at ``alpha = 1``), one- or two-way
            cluster-robust :math:`\bar\Phi`, used for both the efficient weight and the
            covariance; or, for the formula routes, the classical non-robust covariance
            (statsmodels' default), valid at ``alpha = 1`` only: it ignores the variance
            the privacy noise adds (:class:`~privinfer.exceptions.NonRobustCovarianceWarning`
            below one). The summary states the type used.
        clusters : array-like of shape (n,) or (n, 2), optional
            Public cluster labels, one column per clustering dimension; required with
            ``cov_type="clustered"``. They are recorded in the results, so the
            multiplier bootstrap draws one multiplier per cluster. A pandas Series or
            DataFrame is matched to the data's rows by index, as pandas aligns (e.g.
            ``clusters=data["k"]``); arrays, and the labels of a ``from_arrays`` model,
            are read by position. On a Dask model: one
            or two column names of the data, or a Dask Series / DataFrame of labels
            partitioned like it (reduced by key, never gathered).
        small_g : bool, default=False
            Multiply the clustered :math:`\bar\Phi` by :math:`G/(G-1)` (per dimension),
            the usual correction for a small number of clusters.
        center : bool, default=False
            Centre the moment rows before forming :math:`\bar\Phi`.
        initial_weight : array-like of shape (k_moms, k_moms), optional
            First-step weighting matrix.
        start_params : array-like of shape (k_params,), optional
            Starting values of the generic engine (default: the constructor's).
        max_iter : int, default=100
            Largest number of Gauss-Newton steps (generic) and of re-weighting rounds
            (iterated).
        tol : float, default=1e-10
            Relative step size declaring convergence.
        random_state : int, SeedSequence, Generator or None, default=None
            Seeds the reference (Sobol) sample: numerical integration, not privacy noise.

        Returns
        -------
        PrivateGMMResults
            ``params``, ``cov`` (sandwich), ``j_test``, ``first_stage`` and ``ar_conf_int``
            (IV), ``rsquared`` and ``predict`` (linear), ``get_margeff`` (logit),
            ``summary()``.

        Raises
        ------
        SingularDesignError
            A private Gram matrix or :math:`D'AD` is singular (the message names columns).
        ClusterError
            Bad ``clusters`` (shape, missing labels, fewer than 2 clusters, a Series or
            DataFrame whose index does not match the data's rows).
        DataMismatchError
            Bad ``initial_weight`` or options.

        Warns
        -----
        FewClustersWarning
            ``cov_type="clustered"`` with fewer than 50 clusters in a dimension: the
            clustered standard errors are too small and noisy (the message names the n
            needed).
        """
        opts = fit_options(
            self._engine, weighting, cov_type, clusters, small_g, center, initial_weight,
            start_params, max_iter, tol, self._row_index,
        )  # fmt: skip
        rng = check_random_state(random_state)
        return self._results(self._engine.fit(opts, rng), opts)

    def anderson_rubin(
        self,
        *,
        cov_type: Literal["robust", "clustered"] = "robust",
        clusters: Any = None,
        small_g: bool = False,
        random_state: RandomStateLike = None,
    ) -> WeakIVStats:
        r"""Private Anderson-Rubin inference without the Wald estimate (IV models).

        The AR test and its confidence set need only the private second moments, not the
        IV estimate, which may not exist when the private first stage is (nearly) zero:
        this works when :meth:`fit` raises :class:`~privinfer.exceptions.SingularDesignError`.
        With the same ``random_state`` it equals ``fit(...).weak_iv``.

        Parameters
        ----------
        cov_type : {"robust", "clustered"}, default="robust"
        clusters : array-like of shape (n,) or (n, 2), optional
        small_g : bool, default=False
        random_state : int, SeedSequence, Generator or None, default=None
            Seeds the reference (Sobol) sample.

        Returns
        -------
        WeakIVStats
            ``ar_test(beta0)``, ``conf_set(level)``, ``first_stage()``.

        Raises
        ------
        NotAvailableError
            Not an IV model.

        Examples
        --------
        >>> import numpy as np, pandas as pd, privinfer as pi
        >>> rng = np.random.default_rng(0)
        >>> z = rng.uniform(0, 1, 2000); u = rng.normal(size=2000)
        >>> x = 0.05 * z + u + rng.normal(size=2000)  # a nearly irrelevant instrument
        >>> raw = pd.DataFrame({"z": z, "x": x, "y": 1 + x + u})
        >>> mech = pi.AlphaIdentity(0.5, {"z": pi.reference.Uniform(0, 1)})
        >>> released = mech.privatize(raw, public=["x", "y"], random_state=1)
        >>> model = pi.PrivateGMM.iv("y ~ 1 + [x ~ z]", released, mechanism=mech)
        >>> model.anderson_rubin(random_state=0).conf_set(0.95).bounded
        False
        """
        if self.kind != "iv":
            raise NotAvailableError(
                f"{_OWNER}.anderson_rubin is defined for PrivateGMM.iv models; this is a "
                f"{self.kind!r} model."
            )
        if cov_type not in ("robust", "clustered"):
            raise ValueError(
                f"The 'cov_type' parameter of {_OWNER}.anderson_rubin must be 'robust' or "
                f"'clustered'. Got {cov_type!r} instead."
            )
        opts = fit_options(
            self._engine, "one-step", cov_type, clusters, small_g, False, None, None, 1, 0.5,
            self._row_index,
        )  # fmt: skip
        engine = self._engine
        assert isinstance(engine, LinearEngine)
        return engine.weak_iv(opts, check_random_state(random_state))

    # -- results -----------------------------------------------------------------------
    def _results(self, fit: GMMFit, o: FitOptions) -> PrivateGMMResults:
        names = list(self.param_names)
        theta, cov = fit.params, np.asarray(fit.cov, dtype=float)
        cov_diag = np.diag(cov)
        if not (np.all(np.isfinite(theta)) and np.all(np.isfinite(cov_diag))) or np.any(
            cov_diag < 0
        ):
            bad = [n for n, v in zip(names, cov_diag, strict=True) if not v >= 0]
            raise SingularDesignError(
                f"{_OWNER}.fit: the estimate or its sandwich covariance is not finite and "
                f"positive (parameters {bad!r}); the private design is (near-)singular or the "
                f"outcome is separated on {len(fit.influence)} row(s). Use more rows, fewer "
                "regressors or drop constant/collinear columns."
            )
        tests = dict(fit.tests)
        facts, notes = list(fit.facts), list(fit.notes)
        j = tests.get("j_test")
        if j is not None and j.valid:
            facts.append(("J stat (p-value):", f"{j.stat:.3f} ({j.pvalue:.3f})"))
        f_min = first_stage_min(tests)
        if f_min is not None:
            facts.append(("Min. 1st-stage F:", f"{f_min:.2f}"))
        if fit.n_steps > 1:
            facts.append(("Weighting steps:", str(fit.n_steps)))
        if fit.rsquared is not None:
            facts.append(("Private R-squared:", f"{fit.rsquared:.4f}"))
        weak_iv_warning(fit.weak_iv, f_min, notes)
        notes.append(se_note(o))
        infl = fit.influence
        if o.center and not isinstance(infl, OmittedInfluence):
            infl = infl - infl.mean(axis=0)
        diag = Diagnostics(
            gram_repairs=tuple(fit.repairs),
            reference_error=dict(fit.reference_error),
            reference_points=fit.reference_points,
            reference_exact=fit.reference_exact,
            notes=tuple(notes),
        )
        record = ResultsRecord(
            model="PrivateGMM",
            dep_variable=self.dep_variable,
            params=pd.Series(theta, index=names),
            influence=infl if isinstance(infl, OmittedInfluence) else np.asarray(infl),
            mechanism=mechanism_record(self.mechanism),
            guarantees=release_guarantees(self.mechanism),
            facts=tuple(facts),
            diagnostics=diag,
            rep_params=pd.DataFrame([theta], columns=names),
            cov_override=pd.DataFrame(cov, index=names, columns=names),
            tests=tests,
            clusters=o.codes.omitted() if hasattr(o.codes, "omitted") else o.codes,
        )
        return PrivateGMMResults(
            record,
            self.kind,
            self._engine,
            rsquared=fit.rsquared,
            margeff=fit.margeff,
            weak_iv=fit.weak_iv,
        )

    def __repr__(self) -> str:
        what = self.formula if self.formula is not None else f"{self.k_moms} user moments"
        return f"PrivateGMM({self.kind}: {what}, alpha={self.mechanism.alpha:g})"


def _design(
    parsed: LinearFormula,
    data: Any,
    mechanism: AlphaIdentity | None,
    owner: str,
    *,
    persist: bool,
    weights: str | None = None,
) -> tuple[Any, AlphaIdentity, LinearDesign | DaskLinearDesign]:
    """The released design of a pandas frame, or its partition-wise stand-in for Dask;
    warns when the sampling weights leave few effective rows (Kish's n_eff).
    """
    if is_dask_frame(data):
        mech = resolve_mechanism(data._meta, mechanism, owner)
        design = dask_linear_design(parsed, data, mech, owner, persist=persist, weights=weights)
    else:
        data = as_pandas(data, owner, array_hint=MODEL_ARRAY_HINT)
        mech = check_inputs(data, mechanism, owner)
        design = build_linear_design(parsed, data, mech, owner, weights)
    if weights is not None and design.weights_n_eff is not None:
        warn_few_weighted_rows(owner, weights, design.weights_n_eff, design.n_obs)
    return data, mech, design


def _outcome_values(d: LinearDesign) -> tuple[int, FloatArray]:
    """Rows whose outcome is not 0/1, and the five smallest outcome values."""
    y = d.public[:, 0]
    return int(np.sum(~((y == 0) | (y == 1)))), np.unique(y)[:5]


def _merge_values(a: tuple[int, FloatArray], b: tuple[int, FloatArray]) -> Any:
    return a[0] + b[0], np.unique(np.concatenate([a[1], b[1]]))[:5]
