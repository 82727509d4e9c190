r"""PrivateGMM: the locally private generalised method of moments (seed 003, Proposition 2).

Moments :math:`\phi_\theta(v, x)` are written for the true data; their private version
:math:`\bar\phi_\theta = Q_X^{-1}\phi_\theta` has the same expectation under the
released-data law (DESIGN.md §4), so

.. math::

    \check\theta = \arg\min_\theta\ \bar g(\theta)' A_n\, \bar g(\theta),\qquad
    \bar g(\theta) = \frac1n\sum_i \bar\phi_\theta(V_i, Z_i),

is consistent, and :math:`\sqrt n(\check\theta - \theta_0) \to N(0, \bar\Sigma)` with
:math:`\bar\Sigma = (D'AD)^{-1}D'A\bar\Phi AD(D'AD)^{-1}`,
:math:`D = \frac1n\sum_i \partial_\theta\bar\phi` (the operator commutes with
differentiation) and :math:`\bar\Phi = \frac1n\sum_i\bar\phi_i\bar\phi_i'`. Efficient
two-step weighting uses :math:`A = \hat{\bar\Phi}^{-1}` and gives Hansen's J-test.

Three engines compute :math:`\bar\phi`:

* linear moments (:meth:`PrivateGMM.ols`, :meth:`PrivateGMM.iv`): separable closed
  forms through private Gram and cross-moment matrices, O(n K^2 + M K^2);
* the logistic score (:meth:`PrivateGMM.logit`): Newton steps with the exact
  deconvolved Jacobian, reference expectations through the single index, O(n K^2 + T M K^2);
* any user moment function (:class:`PrivateGMM` itself): reference expectations by brute
  force over the distinct public rows, O(T M) function evaluations.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.stats import chi2

from privinfer._typing import FloatArray, RandomStateLike
from privinfer._validation import check_in_interval, check_int, check_random_state
from privinfer.exceptions import (
    DataMismatchError,
    IndefiniteGramWarning,
    MechanismMismatchError,
    PrivinferWarning,
    SingularDesignError,
)
from privinfer.formula import cast_private_categoricals
from privinfer.mechanisms.alpha_identity import AlphaIdentity
from privinfer.models._gmm_common import (
    check_nonsingular,
    cluster_codes,
    j_statistic,
    moment_covariance,
    sandwich,
)
from privinfer.models._gmm_generic import GenericMoments
from privinfer.models._gmm_linear import (
    LinearDesign,
    build_linear_design,
    parse_linear_formula,
    reference_moments,
)
from privinfer.nuisance.logit import fit_private_logit, private_logit_scores
from privinfer.nuisance.series import GramRepair, repair_gram
from privinfer.results import Diagnostics, PrivateResults, ResultsRecord, TestResult

__all__ = ["CovType", "PrivateGMM", "Weighting"]

Weighting = Literal["one-step", "two-step", "iterated"]
CovType = Literal["robust", "clustered"]
MomentFunction = Callable[[FloatArray, pd.DataFrame], Any]

_OWNER = "PrivateGMM"


class PrivateGMM:
    r"""Private GMM for a user moment function, with OLS, IV and logit front-ends.

    The analyst writes the moment conditions as if the private covariates had been
    observed; :math:`Q_X^{-1}` is applied to each moment function, so averages over the
    released data are unbiased for the true-data moments. ``fit`` returns a
    :class:`~privinfer.results.PrivateResults` with a sandwich covariance and the J-test.

    Use the constructor for a moment function of your own, the classmethods
    :meth:`ols`, :meth:`iv` and :meth:`logit` for formula models. The generic route
    evaluates :math:`E_{\bar Q}\phi_\theta(v_i, X)` over a reference sample of
    ``reference_size`` points once per *distinct* public row: O(T M) calls-worth of rows,
    O(n M) when a public column is continuous. The formula front-ends are separable and
    O(n + M).

    Parameters
    ----------
    moments : callable
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
    Seed 003, Proposition 2: with
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
    Seed 003 (``../shared/seeds/003_94639a349968700b.txt``), sec. 6 and App. D.1.
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
        moments: MomentFunction,
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
        if not callable(moments):
            raise DataMismatchError(
                f"{_OWNER}: moments must be callable; got {type(moments).__name__}."
            )
        if jacobian is not None and not callable(jacobian):
            raise DataMismatchError(f"{_OWNER}: jacobian must be callable or None.")
        mechanism = _check_inputs(data, mechanism, _OWNER)
        self.k_params = check_int(k_params, "k_params", _OWNER, 1)
        self.reference_size = check_int(reference_size, "reference_size", _OWNER, 2)
        cols = list(data.columns) if columns is None else list(columns)
        missing = [c for c in cols if c not in data.columns]
        if missing:
            raise DataMismatchError(f"{_OWNER}: columns {missing!r} are not in the data.")
        mechanism.check_data(data, _OWNER)
        self.mechanism = mechanism
        self.kind = "generic"
        self.dep_variable = "moments"
        self._moments = moments
        self._jacobian = jacobian
        self._frame = cast_private_categoricals(data[cols], mechanism)
        self.start_params = self._check_start(start_params)
        self.param_names = self._check_names(param_names)
        out = np.asarray(moments(self.start_params, self._frame), dtype=float)
        if out.ndim != 2 or out.shape[0] != len(data):
            raise DataMismatchError(
                f"{_OWNER}: moments(params, frame) must return an array of shape "
                f"(len(frame), k_moms) = ({len(data)}, k_moms); got {out.shape}."
            )
        self.k_moms = int(out.shape[1])
        if self.k_moms < self.k_params:
            raise SingularDesignError(
                f"{_OWNER}: the model is under-identified: {self.k_moms} moment condition(s) for "
                f"{self.k_params} parameter(s). Add moment conditions (instruments)."
            )
        self._design: LinearDesign | None = None
        self.formula: str | None = None

    # -- constructors ------------------------------------------------------------------
    @classmethod
    def ols(
        cls,
        formula: str,
        data: pd.DataFrame,
        *,
        mechanism: AlphaIdentity | None = None,
        reference_size: int = 8192,
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
            Released data.
        mechanism : AlphaIdentity or None, default=None
            ``None`` reads it from ``data.attrs``.
        reference_size : int, default=8192
            Reference (Sobol) points for the moments of continuous private columns.

        Returns
        -------
        PrivateGMM

        Raises
        ------
        MechanismMismatchError
            The dependent variable is private.
        DataMismatchError, MissingValueError, NonSeparableTermError

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
        return cls._linear(
            formula, data, mechanism, reference_size, iv=False, owner="PrivateGMM.ols"
        )

    @classmethod
    def iv(
        cls,
        formula: str,
        data: pd.DataFrame,
        *,
        mechanism: AlphaIdentity | None = None,
        reference_size: int = 8192,
    ) -> PrivateGMM:
        r"""Linear IV ``"y ~ w + [x ~ z1 + z2]"`` (linearmodels' bracket syntax).

        Endogenous regressors, exogenous regressors and excluded instruments may each be
        private or public. One-step weighting is 2SLS, :math:`A = S_{zz}^{-1}`; two-step
        and iterated weighting use :math:`A = \hat{\bar\Phi}^{-1}`. The fit also reports
        the first-stage strength of every endogenous regressor, estimated privately.

        Parameters
        ----------
        formula : str
            ``"dep ~ exog + [endog ~ instruments]"``; one bracket block.
        data : DataFrame
            Released data.
        mechanism : AlphaIdentity or None, default=None
            ``None`` reads it from ``data.attrs``.
        reference_size : int, default=8192
            Reference (Sobol) points for the moments of continuous private columns.

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
        return cls._linear(formula, data, mechanism, reference_size, iv=True, owner="PrivateGMM.iv")

    @classmethod
    def logit(
        cls,
        formula: str,
        data: pd.DataFrame,
        *,
        mechanism: AlphaIdentity | None = None,
        reference_size: int = 8192,
    ) -> PrivateGMM:
        r"""Logistic regression ``"d ~ x1 + w"`` of a public binary outcome.

        The score :math:`\psi(d - \mathrm{expit}(\gamma'\psi))` is inverted whole and
        solved by Newton steps with the exact deconvolved Jacobian
        (:func:`privinfer.nuisance.logit.fit_private_logit`); reference expectations go
        through the single index, O(n K^2 + T M K^2). At ``alpha = 1`` this is the
        maximum-likelihood estimator. Parameters are ordered intercept, public, private.

        Parameters
        ----------
        formula : str
            ``"d ~ covariates"`` with an intercept; ``d`` public and coded 0/1.
        data : DataFrame
            Released data.
        mechanism : AlphaIdentity or None, default=None
            ``None`` reads it from ``data.attrs``.
        reference_size : int, default=8192
            Reference (Sobol) points.

        Returns
        -------
        PrivateGMM

        Raises
        ------
        MechanismMismatchError
            The outcome is private.
        DataMismatchError
            The outcome is not 0/1, or the formula drops the intercept.

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
        mechanism = _check_inputs(data, mechanism, owner)
        design = build_linear_design(parsed, data, mechanism, owner)
        y = design.public[:, 0]
        if not np.all((y == 0) | (y == 1)):
            raise DataMismatchError(
                f"{owner}: the outcome {parsed.dependent!r} must be coded 0/1; got values "
                f"{sorted(np.unique(y))[:5]!r}."
            )
        obj = cls._blank(mechanism, reference_size, owner, "logit", parsed.dependent, formula)
        obj._design = design
        names = ["Intercept", *design.spec.public_names, *design.spec.private_names]
        obj.param_names = names
        obj.k_params = obj.k_moms = len(names)
        return obj

    @classmethod
    def _linear(
        cls,
        formula: str,
        data: pd.DataFrame,
        mechanism: AlphaIdentity | None,
        reference_size: int,
        *,
        iv: bool,
        owner: str,
    ) -> PrivateGMM:
        parsed = parse_linear_formula(formula, owner, iv=iv)
        mechanism = _check_inputs(data, mechanism, owner)
        design = build_linear_design(parsed, data, mechanism, owner)
        obj = cls._blank(
            mechanism, reference_size, owner, "iv" if iv else "ols", parsed.dependent, formula
        )
        obj._design = design
        obj.param_names = [design.names[j] for j in design.x_idx]
        obj.k_params = int(design.x_idx.size)
        obj.k_moms = int(design.z_idx.size)
        return obj

    @classmethod
    def _blank(
        cls,
        mechanism: AlphaIdentity,
        reference_size: int,
        owner: str,
        kind: str,
        dep: str,
        formula: str,
    ) -> PrivateGMM:
        obj = cls.__new__(cls)
        obj.mechanism = mechanism
        obj.reference_size = check_int(reference_size, "reference_size", owner, 2)
        obj.kind = kind
        obj.dep_variable = dep
        obj.formula = formula
        obj.start_params = None
        obj._moments = None
        obj._jacobian = None
        return obj

    # -- validation helpers --------------------------------------------------------------
    def _check_start(self, start: Any) -> FloatArray:
        if start is None:
            return np.zeros(self.k_params)
        arr = np.asarray(start, dtype=float).ravel()
        if arr.size != self.k_params or not np.all(np.isfinite(arr)):
            raise DataMismatchError(
                f"{_OWNER}: start_params must hold {self.k_params} finite values; got {start!r}."
            )
        return arr

    def _check_names(self, names: Sequence[str] | None) -> list[str]:
        if names is None:
            return [f"theta_{j}" for j in range(self.k_params)]
        out = [str(s) for s in names]
        if len(out) != self.k_params or len(set(out)) != len(out):
            raise DataMismatchError(
                f"{_OWNER}: param_names must be {self.k_params} distinct labels; got {names!r}."
            )
        return out

    # -- fit ---------------------------------------------------------------------------
    def fit(
        self,
        *,
        weighting: Weighting = "two-step",
        cov_type: CovType = "robust",
        clusters: Any = None,
        center: bool = False,
        initial_weight: Any = None,
        start_params: Any = None,
        max_iter: int = 100,
        tol: float = 1e-10,
        random_state: RandomStateLike = None,
    ) -> PrivateResults:
        r"""Estimate; returns a :class:`~privinfer.results.PrivateResults` (the model is unchanged).

        Parameters
        ----------
        weighting : {"one-step", "two-step", "iterated"}, default="two-step"
            One-step uses ``initial_weight`` (default :math:`S_{zz}^{-1}` for linear IV,
            i.e. 2SLS, and the identity otherwise); two-step re-weights once by
            :math:`\hat{\bar\Phi}^{-1}` at the one-step estimate; iterated repeats until the
            estimate settles. Irrelevant for exactly identified models.
        cov_type : {"robust", "clustered"}, default="robust"
            Heteroskedasticity-robust or one-way cluster-robust :math:`\bar\Phi`, used
            for both the efficient weight and the covariance.
        clusters : array-like of shape (n,), optional
            Public cluster labels; required with ``cov_type="clustered"``.
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
        PrivateResults
            ``params``, ``cov`` (sandwich), ``j_test``, ``first_stage`` (IV), ``summary()``.

        Raises
        ------
        SingularDesignError
            A private Gram matrix or :math:`D'AD` is singular (the message names columns).
        DataMismatchError
            Bad ``clusters``, ``initial_weight`` or options.
        """
        owner = f"{_OWNER}.fit"
        if weighting not in ("one-step", "two-step", "iterated"):
            raise ValueError(
                f"The 'weighting' parameter of {owner} must be 'one-step', 'two-step' or "
                f"'iterated'. Got {weighting!r} instead."
            )
        if cov_type not in ("robust", "clustered"):
            raise ValueError(
                f"The 'cov_type' parameter of {owner} must be 'robust' or 'clustered'. "
                f"Got {cov_type!r} instead."
            )
        if not isinstance(center, bool):
            raise ValueError(f"The 'center' parameter of {owner} must be a bool. Got {center!r}.")
        max_iter = check_int(max_iter, "max_iter", owner, 1)
        tol = check_in_interval(tol, "tol", owner, 0.0, 1.0, low_open=True)
        n = self._n_obs()
        codes = None
        if cov_type == "clustered":
            if clusters is None:
                raise DataMismatchError(f"{owner}: cov_type='clustered' needs clusters.")
            codes = cluster_codes(clusters, n, owner)
        elif clusters is not None:
            raise DataMismatchError(f"{owner}: clusters given but cov_type={cov_type!r}.")
        if initial_weight is not None:
            initial_weight = np.asarray(initial_weight, dtype=float)
            if initial_weight.shape != (self.k_moms, self.k_moms):
                raise DataMismatchError(
                    f"{owner}: initial_weight must be a {self.k_moms} x {self.k_moms} matrix; got "
                    f"shape {initial_weight.shape}."
                )
        opts = _Options(weighting, codes, center, initial_weight, max_iter, tol, owner)
        rng = check_random_state(random_state)
        if self.kind in ("ols", "iv"):
            return self._fit_linear(opts, rng)
        if self.kind == "logit":
            return self._fit_logit(opts, rng)
        start = self.start_params if start_params is None else self._check_start(start_params)
        return self._fit_generic(opts, rng, start)

    def _n_obs(self) -> int:
        if self._design is not None:
            return self._design.n_obs
        return len(self._frame)

    # -- linear engine -----------------------------------------------------------------
    def _fit_linear(self, o: _Options, rng: np.random.Generator) -> PrivateResults:
        d = self._design
        assert d is not None
        alpha = self.mechanism.alpha
        n = d.n_obs
        raw, pub_mean = d.raw_moments()
        kp = d.private.shape[1]
        if alpha < 1.0 and kp:
            ref, exact = reference_moments(d, self.mechanism, self.reference_size, rng)
            mean, outer = ref.mean, ref.outer
        else:
            ref, exact = None, True
            mean, outer = np.zeros(kp), np.zeros((kp, kp))
        eff_alpha = alpha if kp else 1.0
        S = d.private_second_moments(raw, pub_mean, mean, outer, eff_alpha)
        table = d.reference_table(mean, outer)
        x, z = d.x_idx, d.z_idx
        xn = [d.names[j] for j in x]
        zn = [d.names[j] for j in z]
        repairs: list[GramRepair] = []
        notes: list[str] = []
        Szz = S[np.ix_(z, z)]
        check_nonsingular(
            Szz,
            zn,
            "Gram matrix of the instruments"
            if self.kind == "iv"
            else "Gram matrix of the regressors",
            o.owner,
        )
        exactly = z.size == x.size
        if o.initial_weight is not None:
            A = o.initial_weight
        else:
            Szz_fixed, info = Szz, None
            if np.linalg.eigvalsh(0.5 * (Szz + Szz.T)).min() <= 0.0:
                # only an indefinite Gram is repaired: the weight must be positive definite
                Szz_fixed, info = repair_gram(Szz, "instrument Gram (one-step weight)")
            if info is not None:
                repairs.append(info)
                msg = (
                    f"The deconvolved Gram matrix of {zn!r} is indefinite (smallest eigenvalue "
                    f"{info.min_eigenvalue:.3g}); its eigenvalues were floored for the "
                    "one-step weight only."
                )
                notes.append(msg)
                warnings.warn(msg, IndefiniteGramWarning, stacklevel=3)
            A = np.linalg.inv(Szz_fixed)
        Szx = S[np.ix_(z, x)]
        Szy = S[z, 0]

        def solve(W: FloatArray, S_zx: FloatArray, S_zy: FloatArray) -> FloatArray:
            return np.linalg.solve(S_zx.T @ W @ S_zx, S_zx.T @ W @ S_zy)

        check_nonsingular(Szx.T @ A @ Szx, xn, "moment Jacobian D'AD", o.owner)
        theta = solve(A, Szx, Szy)

        def coef(th: FloatArray) -> FloatArray:
            w = np.zeros(len(d.names))
            w[0] = 1.0
            w[x] -= th
            return w

        def phi_cov(th: FloatArray) -> FloatArray:
            return _chunked_cov(d, coef(th), z, table, eff_alpha, o.codes, o.center, Szy - Szx @ th)

        n_steps = 1
        efficient = o.weighting != "one-step"
        if efficient and not exactly:
            for _ in range(1 if o.weighting == "two-step" else o.max_iter):
                Phi = phi_cov(theta)
                A = _inv_cov(Phi, zn, o.owner)
                new = solve(A, Szx, Szy)
                n_steps += 1
                done = np.max(np.abs(new - theta)) <= o.tol * (1 + np.max(np.abs(theta)))
                theta = new
                if done:
                    break
        D = -Szx
        bread = -np.linalg.solve(D.T @ A @ D, D.T @ A)
        Phi, infl = _chunked_cov(
            d, coef(theta), z, table, eff_alpha, o.codes, o.center, Szy - Szx @ theta, bread=bread
        )
        cov, _ = sandwich(D, A, Phi, n)
        gbar = Szy - Szx @ theta
        tests = {"j_test": j_statistic(gbar, A, n, x.size, efficient=efficient)}
        if self.kind == "iv":
            tests.update(self._first_stage(d, S, table, eff_alpha, o))
        ref_err: dict[str, float] = {}
        if ref is not None and not exact:
            A_fix = A

            def theta_at(j: int) -> Callable[[FloatArray, FloatArray], float]:
                def f(m: FloatArray, R: FloatArray) -> float:
                    Sr = d.private_second_moments(raw, pub_mean, m, R, eff_alpha)
                    return float(solve(A_fix, Sr[np.ix_(z, x)], Sr[z, 0])[j])

                return f

            ref_err = {name: ref.error(theta_at(j)) for j, name in enumerate(xn)}
        weighting = (
            "2SLS (one-step)"
            if (self.kind == "iv" and o.weighting == "one-step" and o.initial_weight is None)
            else o.weighting
        )
        if self.kind == "ols":
            weighting = "OLS (exactly identified)"
        elif exactly:
            weighting = "IV (exactly identified)"
        facts = [
            ("Model:", self.kind.upper()),
            ("Weighting:", weighting),
            ("Covariance:", o.label),
            ("Moments / params:", f"{z.size} / {x.size}"),
        ]
        return self._results(
            theta,
            cov,
            infl,
            tests,
            facts,
            repairs,
            notes,
            ref_err,
            0 if ref is None else ref.n_points,
            exact,
            n_steps,
        )

    def _first_stage(
        self, d: LinearDesign, S: FloatArray, table: FloatArray, alpha: float, o: _Options
    ) -> dict[str, TestResult]:
        r"""Private first-stage regressions of each endogenous regressor on all instruments.

        The first stage is itself a linear private GMM (exactly identified): coefficients
        :math:`\pi = S_{zz}^{-1}S_{z e}`, robust or cluster-robust covariance of the private
        moment rows, and a Wald test that the excluded instruments' coefficients vanish,
        reported as the partial F (Wald / q).
        """
        out: dict[str, TestResult] = {}
        z = d.z_idx
        Szz = S[np.ix_(z, z)]
        Szz_inv = np.linalg.inv(Szz)
        excl = np.array([list(z).index(j) for j in d.instr_idx], dtype=np.int64)
        q = excl.size
        for e in d.endog_idx:
            pi_hat = Szz_inv @ S[z, e]
            w = np.zeros(len(d.names))
            w[e] = 1.0
            w[z] -= pi_hat
            Phi = _chunked_cov(d, w, z, table, alpha, o.codes, o.center, S[z, e] - Szz @ pi_hat)
            V = Szz_inv @ Phi @ Szz_inv / d.n_obs
            Ve = V[np.ix_(excl, excl)]
            b = pi_hat[excl]
            wald = float(b @ np.linalg.solve(Ve, b))
            out[f"first_stage[{d.names[e]}]"] = TestResult(
                f"First-stage partial F of {d.names[e]!r} (robust Wald / q)",
                wald / q,
                q,
                float(chi2.sf(wald, q)),
                "excluded instruments have no effect",
                f"F({q}, inf)",
            )
        return out

    # -- logit engine ------------------------------------------------------------------
    def _fit_logit(self, o: _Options, rng: np.random.Generator) -> PrivateResults:
        d = self._design
        assert d is not None
        alpha = self.mechanism.alpha
        kp = d.private.shape[1]
        y = d.public[:, 0]
        pub = d.public[:, 2:]
        if alpha < 1.0 and kp:
            draw = self.mechanism.reference.draw_for_moments(self.reference_size, random_state=rng)
            U_ref = d.spec.private_design(cast_private_categoricals(draw.frame, self.mechanism))
            w_ref, exact, n_ref = draw.weights, draw.exact, len(draw.weights)
            eff_alpha = alpha
        else:
            U_ref, w_ref, exact, n_ref, eff_alpha = np.zeros((1, kp)), np.ones(1), True, 0, 1.0
        try:
            fit = fit_private_logit(
                y, pub, d.private, U_ref, w_ref, eff_alpha, label=o.owner, tol=min(o.tol, 1e-11)
            )
        except SingularDesignError as err:
            raise SingularDesignError(
                f"{o.owner}: the private logistic moment equations have no root reached by "
                "Newton's method; the outcome may be (quasi-)separated by the covariates or alpha "
                f"too small for this design. ({err})"
            ) from err
        rows, jac, interp = private_logit_scores(
            fit.coef, y, pub, d.private, U_ref, w_ref, eff_alpha
        )
        check_nonsingular(-jac, self.param_names, "logistic information matrix", o.owner)
        A = np.eye(jac.shape[0])
        Phi = moment_covariance(rows, o.codes, center=o.center)
        cov, bread = sandwich(jac, A, Phi, d.n_obs)
        infl = rows @ bread.T
        tests = {"j_test": j_statistic(rows.mean(axis=0), A, d.n_obs, A.shape[0], efficient=True)}
        notes = [f"Single-index interpolation error {interp:.2g}."] if interp > 0 else []
        facts = [
            ("Model:", "LOGIT"),
            ("Newton steps:", str(fit.n_iter)),
            ("Covariance:", o.label),
            ("Moments / params:", f"{A.shape[0]} / {A.shape[0]}"),
        ]
        return self._results(fit.coef, cov, infl, tests, facts, [], notes, {}, n_ref, exact, 1)

    # -- generic engine ----------------------------------------------------------------
    def _fit_generic(
        self, o: _Options, rng: np.random.Generator, start: FloatArray
    ) -> PrivateResults:
        alpha = self.mechanism.alpha
        frame = self._frame
        private = tuple(c for c in self.mechanism.private_columns if c in frame.columns)
        if alpha < 1.0 and private:
            draw = self.mechanism.reference.draw_for_moments(self.reference_size, random_state=rng)
            ref_frame = cast_private_categoricals(draw.frame, self.mechanism)
            ref_w, rep, exact, n_ref, eff_alpha = (
                draw.weights,
                draw.replicate,
                draw.exact,
                len(draw.weights),
                alpha,
            )
        else:
            ref_frame, ref_w, rep, exact, n_ref, eff_alpha = None, None, None, True, 0, 1.0
        assert self._moments is not None
        eng = GenericMoments(
            self._moments, frame, private, eff_alpha, ref_frame, ref_w, rep, self.k_moms, o.owner
        )
        jac_eng = None
        if self._jacobian is not None:
            kk = self.k_moms * self.k_params
            jac_fn = self._jacobian

            def flat(p: FloatArray, f: pd.DataFrame) -> FloatArray:
                arr = np.asarray(jac_fn(p, f), dtype=float)
                if arr.shape != (len(f), self.k_moms, self.k_params):
                    raise DataMismatchError(
                        f"{o.owner}: jacobian(params, frame) must return shape (len(frame), "
                        f"{self.k_moms}, {self.k_params}); got {arr.shape}."
                    )
                return arr.reshape(len(f), kk)

            jac_eng = GenericMoments(
                flat, frame, private, eff_alpha, ref_frame, ref_w, rep, kk, o.owner
            )

        def jacobian(th: FloatArray) -> FloatArray:
            if jac_eng is not None:
                return jac_eng.mean(th).reshape(self.k_moms, self.k_params)
            D = np.empty((self.k_moms, self.k_params))
            for j in range(self.k_params):
                h = 6e-6 * max(1.0, abs(th[j]))
                e = np.zeros(self.k_params)
                e[j] = h
                D[:, j] = (eng.mean(th + e) - eng.mean(th - e)) / (2 * h)
            return D

        A = np.eye(self.k_moms) if o.initial_weight is None else o.initial_weight
        notes: list[str] = []
        theta = self._gauss_newton(eng, jacobian, A, start, o, notes)
        efficient = o.weighting != "one-step"
        exactly = self.k_moms == self.k_params
        n_steps = 1
        if efficient and not exactly:
            for _ in range(1 if o.weighting == "two-step" else o.max_iter):
                A = _inv_cov(
                    moment_covariance(eng.rows(theta), o.codes, center=o.center),
                    [f"moment {j}" for j in range(self.k_moms)],
                    o.owner,
                )
                new = self._gauss_newton(eng, jacobian, A, theta, o, notes)
                n_steps += 1
                done = np.max(np.abs(new - theta)) <= max(o.tol, 1e-8) * (1 + np.max(np.abs(theta)))
                theta = new
                if done:
                    break
        rows = eng.rows(theta)
        D = jacobian(theta)
        Phi = moment_covariance(rows, o.codes, center=o.center)
        cov, bread = sandwich(D, A, Phi, len(frame))
        infl = rows @ bread.T
        gbar = rows.mean(axis=0)
        tests = {"j_test": j_statistic(gbar, A, len(frame), self.k_params, efficient=efficient)}
        ref_err: dict[str, float] = {}
        if rep is not None:
            g_err = eng.reference_error(theta)
            # delta method: theta moves by bread @ (error of the mean moment)
            se = np.sqrt((bread**2) @ (g_err**2))
            ref_err = dict(zip(self.param_names, se.tolist(), strict=True))
        facts = [
            ("Model:", "GMM (user moments)"),
            ("Weighting:", o.weighting),
            ("Covariance:", o.label),
            ("Moments / params:", f"{self.k_moms} / {self.k_params}"),
            ("Distinct public rows:", str(eng.n_distinct)),
        ]
        return self._results(
            theta, cov, infl, tests, facts, [], notes, ref_err, n_ref, exact, n_steps
        )

    def _gauss_newton(
        self,
        eng: GenericMoments,
        jacobian: Callable[[FloatArray], FloatArray],
        A: FloatArray,
        start: FloatArray,
        o: _Options,
        notes: list[str],
    ) -> FloatArray:
        theta = start.copy()
        g = eng.mean(theta)
        obj = float(g @ A @ g)
        names = self.param_names
        for _ in range(o.max_iter):
            D = jacobian(theta)
            H = D.T @ A @ D
            check_nonsingular(H, names, "moment Jacobian D'AD", o.owner)
            step = -np.linalg.solve(H, D.T @ A @ g)
            lam = 1.0
            while True:
                cand = theta + lam * step
                g_new = eng.mean(cand)
                obj_new = float(g_new @ A @ g_new)
                if obj_new <= obj or lam < 1e-8:
                    break
                lam *= 0.5
            theta, g, obj = cand, g_new, obj_new
            if np.max(np.abs(lam * step)) <= o.tol * (1 + np.max(np.abs(theta))):
                return theta
        msg = f"Gauss-Newton stopped after max_iter={o.max_iter} steps (objective {obj:.3g})."
        notes.append(msg)
        warnings.warn(f"{o.owner}: {msg}", PrivinferWarning, stacklevel=4)
        return theta

    # -- results -----------------------------------------------------------------------
    def _results(
        self,
        theta: FloatArray,
        cov: FloatArray,
        infl: FloatArray,
        tests: dict[str, TestResult],
        facts: list[tuple[str, str]],
        repairs: list[GramRepair],
        notes: list[str],
        ref_err: dict[str, float],
        n_ref: int,
        exact: bool,
        n_steps: int,
    ) -> PrivateResults:
        names = list(self.param_names)
        cov_diag = np.diag(np.asarray(cov, dtype=float))
        if not np.all(np.isfinite(theta)) or not np.all(np.isfinite(cov_diag)) or np.any(
            cov_diag < 0
        ):
            bad = [n for n, v in zip(names, cov_diag, strict=True) if not v >= 0]
            raise SingularDesignError(
                f"{_OWNER}.fit: the estimate or its sandwich covariance is not finite and "
                f"positive (parameters {bad!r}); the private design is (near-)singular or the "
                f"outcome is separated on {len(infl)} row(s). Use more rows, fewer "
                "regressors or drop constant/collinear columns."
            )
        j = tests.get("j_test")
        if j is not None and j.valid:
            facts.append(("J stat (p-value):", f"{j.stat:.3f} ({j.pvalue:.3f})"))
        fs = [t for k, t in tests.items() if k.startswith("first_stage[")]
        if fs:
            facts.append(("Min. 1st-stage F:", f"{min(t.stat for t in fs):.2f}"))
        if n_steps > 1:
            facts.append(("Weighting steps:", str(n_steps)))
        notes = [*notes, "Covariance: GMM sandwich with private D and Phi (seed 003, Prop. 2)."]
        diag = Diagnostics(
            gram_repairs=tuple(repairs),
            reference_error=ref_err,
            reference_points=n_ref,
            reference_exact=exact,
            notes=tuple(notes),
        )
        record = ResultsRecord(
            model="PrivateGMM",
            dep_variable=self.dep_variable,
            params=pd.Series(theta, index=names),
            influence=np.asarray(infl),
            mechanism=self.mechanism.to_dict(),
            guarantees=_guarantees(self.mechanism),
            facts=tuple(facts),
            diagnostics=diag,
            rep_params=pd.DataFrame([theta], columns=names),
            cov_override=pd.DataFrame(cov, index=names, columns=names),
            tests=tests,
        )
        return PrivateResults(record)

    def __repr__(self) -> str:
        what = self.formula if self.formula is not None else f"{self.k_moms} user moments"
        return f"PrivateGMM({self.kind}: {what}, alpha={self.mechanism.alpha:g})"


class _Options:
    """Validated fit options (loop state stays in locals, never on the model)."""

    def __init__(
        self,
        weighting: str,
        codes: Any,
        center: bool,
        initial_weight: FloatArray | None,
        max_iter: int,
        tol: float,
        owner: str,
    ) -> None:
        self.weighting = weighting
        self.codes = codes
        self.center = center
        self.initial_weight = initial_weight
        self.max_iter = max_iter
        self.tol = tol
        self.owner = owner

    @property
    def label(self) -> str:
        """Covariance label for the summary header."""
        base = "cluster-robust" if self.codes is not None else "robust"
        return base + (" (centred)" if self.center else "")


def _check_inputs(data: Any, mechanism: AlphaIdentity | None, owner: str) -> AlphaIdentity:
    if not isinstance(data, pd.DataFrame):
        raise DataMismatchError(f"{owner} expects a pandas DataFrame; got {type(data).__name__}.")
    if len(data) == 0:
        raise DataMismatchError(f"{owner}: the data frame is empty.")
    if mechanism is None:
        mechanism = AlphaIdentity.from_released(data)
    if not isinstance(mechanism, AlphaIdentity):
        raise MechanismMismatchError(
            f"{owner}: mechanism must be an AlphaIdentity; got {type(mechanism).__name__}."
        )
    return mechanism


def _guarantees(mechanism: AlphaIdentity) -> Any:
    ref = mechanism.reference
    if ref.is_discrete and ref.n_support > 100_000:
        return None
    return mechanism.guarantees()


def _inv_cov(Phi: FloatArray, names: Sequence[str], owner: str) -> FloatArray:
    r"""Efficient weight :math:`\hat{\bar\Phi}^{-1}`; a singular estimate is an error."""
    check_nonsingular(Phi, names, "covariance of the moment conditions (efficient weight)", owner)
    return np.linalg.inv(Phi)


def _chunked_cov(
    d: LinearDesign,
    w: FloatArray,
    cols: Any,
    table: FloatArray,
    alpha: float,
    codes: Any,
    center: bool,
    gbar: FloatArray,
    *,
    bread: FloatArray | None = None,
) -> Any:
    """Moment covariance (and influence values ``rows @ bread'``) in one chunked pass."""
    k = len(cols)
    n = d.n_obs
    infl = None if bread is None else np.empty((n, bread.shape[0]))
    mu = gbar if center else np.zeros(k)
    acc = np.zeros((k, k)) if codes is None else np.zeros((int(codes.max()) + 1, k))
    bread_t = None if bread is None else np.ascontiguousarray(bread.T)
    for rows in d.chunks():
        r = d.moment_rows(w, cols, table, alpha, rows)
        if infl is not None:
            np.dot(r, bread_t, out=infl[rows])
        if center:
            r -= mu
        if codes is None:
            acc += r.T @ r
        else:
            c = codes[rows]
            for j in range(k):
                acc[:, j] += np.bincount(c, weights=r[:, j], minlength=acc.shape[0])
    Phi = acc / n if codes is None else acc.T @ acc / n
    if infl is None:
        return Phi
    return Phi, infl
