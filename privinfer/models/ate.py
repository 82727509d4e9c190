r"""PrivateATE and PrivatePOM: average treatment effects and potential-outcome means."""

from __future__ import annotations

import numpy as np

from privinfer._typing import FloatArray
from privinfer.models._onestep import TreatmentModel
from privinfer.models.scores import ate_contrast, mean_estimate

__all__ = ["PrivateATE", "PrivatePOM"]


class PrivateATE(TreatmentModel):
    r"""Average treatment effect from data with private covariates.

    A cross-fitted one-step (double/debiased) estimator in which every nuisance and the
    score are passed through :math:`Q_X^{-1}` (Kormos and van der Vaart, 2026), so the
    estimate is unbiased for the true-data ATE and the interval covers at its nominal
    level. Cost
    O(n J^2 + M J^2) for a basis of J functions and M reference points.

    Parameters
    ----------
    data : DataFrame or dask DataFrame
        Released data (outcome and treatment public; covariates private or public). A
        Dask frame is fitted partition by partition with the same results (see the user
        guide's page on working at scale).
    outcome, treatment : str
        Column names.
    covariates : str or list of str
        Formulaic right-hand side (``"x1 + x2 + C(g)"``) or a list of columns.
    mechanism : AlphaIdentity, optional
        Defaults to the description carried by ``data.attrs``.
    degree : int, "cv" or None, default=None
        Series basis of the nuisances (fitted per treatment level). ``None`` (or ``"cv"``):
        the adaptive sieve (:class:`privinfer.nuisance.sieve.SieveBasis`), a nested ladder
        of Legendre polynomials and hierarchical cubic B-splines on the deconvolved-CDF
        scale of each covariate, from which the outcome regression and the Riesz
        representer each choose their own size by private cross-validation; its largest
        candidate has at most ``n_k * alpha**2 / 10`` functions and 160, where ``n_k``
        counts the rows of the arm whose Gram matrix the fit solves (the control arm
        for the ATT's odds). An integer: the polynomial series of that degree.
    ridge : float, "cv" or None, default=None
        Ridge of the series fits, relative to the mean eigenvalue of each Gram matrix (the
        constant is not penalised). ``"cv"``: each fit chooses its own by its own private
        CV loss (outcome: out-of-fold squared error; Riesz: :math:`E[\rho^2 - 2m(\rho)]`),
        never below the estimated privatisation noise of the Gram matrix. ``None``:
        ``"cv"``, except ordinary least squares (``0``) with an integer ``degree`` at
        ``alpha = 1``. Below ``alpha = 1`` a fixed ridge must lift every deconvolved Gram
        matrix above its estimated privatisation noise, or the fit raises
        :class:`~privinfer.exceptions.SingularDesignError` naming the ridge that would.
        When the estimated regularisation bias is not negligible the
        intervals widen (bias-aware critical value; see the user guide page on
        regularisation) and a :class:`~privinfer.exceptions.RegularizationBiasWarning`
        names the sample size needed. A fixed ridge heavier than the one the private CV
        would choose has its bias estimated against that CV choice.
    outcome_model : {"series", "kernel"}, default="series"
        Outcome regression: the polynomial series of ``degree``, or the private
        Nadaraya–Watson fit (binned, Scott bandwidth on the private spread; Kormos and
        van der Vaart, 2026, Example 11) whose reference terms come from evaluating the
        fit at the reference points. ``"kernel"`` needs ``riesz="auto"``, continuous
        private covariates only and no sampling weights; the Riesz representer stays the
        automatic series one.
    kernel_bandwidth : float, "scott" or "cv", default="scott"
        Bandwidth of the kernel outcome route: a number (on the covariates' scale),
        Scott's rule on the private spread, or private cross-validation over multiples
        of it (:func:`privinfer.nuisance.private_cv_kernel`; about 20x slower).
    riesz : {"auto", "propensity"}, default="auto"
        Automatic Riesz representer from the same basis (no propensity), or inverse
        propensity weights from a private logistic regression clipped at ``clip``.
    n_folds : int, default=5
        Cross-fitting folds, stratified by treatment.
    n_rep : int, default=1
        Repeated splits, aggregated by the median (the standard error takes in the spread
        between the splits, as in DoubleML). Measured below ``alpha = 1`` on the
        validation designs (n = 4000, the same releases), three splits took 3.5 times the
        computing time, lowered the spread of the estimates by a median 3% and moved no
        bias by more than 0.13 SE: the spread that matters there comes from the
        release's privatisation noise, which every split shares.
    clip : float, default=0.01
        Propensity clipping threshold (as DoubleML), propensity route only.
    reference_level : optional
        Control level for multi-valued treatments (default: the first level).
    reference_size : int, default=8192
        Quasi-Monte Carlo reference sample size (ignored for finite references): the
        first fit's from 50,000 rows is four times this, and up to 200,000 rows the fit
        is repeated with four times as many points (at most 131,072) while the reference
        error exceeds 1% of the standard error.
    split_nuisances : bool or None, default=None
        Fit the outcome regression and the Riesz representer on disjoint halves of the
        training folds (double cross-fitting). Both come from deconvolved Gram matrices
        whose privatisation noise is shared when they use the same rows; the held-out
        score then has a second-order bias :math:`-E[(\hat\theta-\theta)'G(\hat\beta-\beta)]`
        of order :math:`J/(\alpha^2 n)`. Splitting makes the two errors independent but
        fits each nuisance on half the rows. ``None``: no split. Measured below
        ``alpha = 1`` on 16 validation designs (24 design-alpha pairs, n = 4000, the same
        releases), splitting made the estimates less spread in 60 of 96 cells and the
        intervals a median 5% shorter, and it removed most of the bias under strong
        confounding through a private covariate; but with half the rows each fit is
        regularised harder where the data are sparse, and the biases in skewed tails and
        under a public overlap problem grew (88 of 96 cells pass without it, 82 with it).
    cluster : str or list of str, optional
        Public cluster column (or two, for two-way clustering). Whole clusters of the
        first column are kept within folds (each cluster dealt by its majority treatment
        level, so folds stay roughly balanced by treatment); the covariance sums the
        influence values within clusters (two-way: Cameron-Gelbach-Miller) and
        :meth:`PrivateResults.bootstrap` draws one multiplier per cluster.
    weights : str, optional
        Public column of non-negative sampling weights :math:`\omega` (normalised to mean
        one). The target is the weighted population mean, e.g.
        :math:`E[\omega(Y(1) - Y(0))]/E[\omega]`; the transformed scores are multiplied
        by :math:`\omega` (valid row by row because :math:`\omega` is public) and the
        nuisances are weighted series fits. Needs ``riesz="auto"``. The summary reports
        Kish's effective sample size of the weights,
        :math:`n_{\mathrm{eff}} = (\sum_i \omega_i)^2 / \sum_i \omega_i^2`.
    variance : {"auto", "influence", "bootstrap"}, default="auto"
        How the standard error is computed. ``"influence"``: from the influence values
        (the nuisances treated as fixed). ``"bootstrap"``: the larger of that and a
        fold-block bootstrap of the whole estimator, private CV of the nuisances included
        (the first pass sums the statistics per random block of rows; each of 30 draws
        reweights the blocks and re-runs the nuisance stage, no row is read again). Below
        ``alpha = 1`` the nuisances come from noisy deconvolved Gram matrices and, at small
        :math:`n\alpha^2`, add variance the influence values do not see. ``"auto"``:
        ``"bootstrap"`` when ``alpha < 1`` and :math:`n\alpha^2 \le 20{,}000` with the
        automatic series route, else ``"influence"`` (pandas and Dask alike).

    Raises
    ------
    MechanismMismatchError
        Outcome or treatment covered by the mechanism; private columns missing.
    DataMismatchError, MissingValueError
        Bad columns, NaN, a non-categorical treatment.
    ClusterError, WeightsError
        Fewer than two clusters, a private cluster or weights column, negative or all-zero
        weights.
    SingularDesignError
        (from ``fit``) Below ``alpha = 1``, a fixed ``ridge`` that leaves a deconvolved Gram
        matrix below its estimated privatisation noise.

    Warns
    -----
    RegularizationBiasWarning
        (from ``fit``) The estimated regularisation bias exceeds half a standard error;
        the interval is widened and the message names the ``n`` needed.
    NuisanceNoiseWarning
        (from ``fit``) The bootstrap standard error exceeds the influence one by half:
        the nuisance fits are too noisy at this :math:`n\alpha^2` for a first-order
        interval; the message names the ``n`` needed.
    OverlapWarning
        (from ``fit``) Large Riesz second moments on the released rows, or at the
        reference draws (poor private overlap; ``alpha < 1``).
    ReferenceAccuracyWarning
        (from ``fit``) The reference error exceeds 5% of the standard error after the
        automatic growth of the reference sample.
    IndefiniteGramWarning
        (from ``fit``) A deconvolved Gram matrix needed a last-resort eigenvalue floor. An
        indefinite one that the ridges regularise (most fits below ``alpha = 1``) is a
        note in the summary, not a warning.
    FewEffectiveRowsWarning
        (when the model is built) Kish's effective sample size of ``weights`` is below
        200: a few heavily weighted rows carry the estimate (Kish, 1965).

    See Also
    --------
    PrivateATT : effect on the treated.
    PrivatePOM : potential-outcome means.

    Notes
    -----
    With :math:`\mu(d, x) = E[Y|D=d, X=x]` and Riesz representer
    :math:`r(d, x) = d/\pi(x) - (1-d)/(1-\pi(x))`, the score is
    :math:`s = \mu(1,x) - \mu(0,x) + r(d,x)(y - \mu(d,x))` and the estimate
    :math:`\hat\psi = \frac1n\sum_i (Q_X^{-1}\hat s)(V_i, Z_i)` with nuisances from the other
    folds; SE is :math:`\mathrm{sd}(\varphi)/\sqrt n`. Multi-valued
    treatments give one effect per level against ``reference_level``.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import privinfer as pi
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-1, 1, 2000)
    >>> d = (rng.random(2000) < 1 / (1 + np.exp(-x))).astype(int)
    >>> raw = pd.DataFrame({"x": x, "d": d, "y": 1.0 * d + x + rng.normal(size=2000)})
    >>> mech = pi.AlphaIdentity(0.7, {"x": pi.reference.Uniform(-1, 1)})
    >>> released = mech.privatize(raw, public=["d", "y"], random_state=1)
    >>> res = pi.PrivateATE.from_formula("y ~ d | x", released,
    ...                                  mechanism=mech).fit(random_state=2)
    >>> bool(abs(res.params["ATE"] - 1.0) < 4 * res.bse["ATE"])
    True
    """

    _name = "PrivateATE"

    def _param_names(self) -> list[str]:
        lv = self.inputs.levels
        if len(lv) == 2:
            return ["ATE"]
        return [f"ATE[{v} vs {lv[0]}]" for v in lv[1:]]

    def _combine(
        self, pom_phi: FloatArray, att_phi: FloatArray, wt: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray | None]:
        """Each level's mean minus the reference level's."""
        contrast = ate_contrast(self.inputs.n_levels)
        est, phi = mean_estimate(pom_phi, wt, contrast)
        return est, phi, contrast

    def _from_means(self, m: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray | None]:
        """Estimates from the arm means; their influence contrast; the contrast of means."""
        contrast = ate_contrast(self.inputs.n_levels)
        return m @ contrast, contrast, contrast


class PrivatePOM(TreatmentModel):
    r"""Potential-outcome means :math:`E[Y(d)]` for every treatment level.

    The same engine and options as :class:`PrivateATE`; one parameter per level with
    score :math:`\mu(k, x) + \rho_k(d, x)(y - \mu(k, x))`, :math:`\rho_k = 1\{d=k\}/\pi_k`.
    The influence values give the joint covariance of all means.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import privinfer as pi
    >>> rng = np.random.default_rng(0)
    >>> x = rng.uniform(-1, 1, 2000)
    >>> raw = pd.DataFrame({"x": x, "d": rng.integers(0, 2, 2000), "y": x + rng.normal(size=2000)})
    >>> mech = pi.AlphaIdentity(1.0, {"x": pi.reference.Uniform(-1, 1)})
    >>> res = pi.PrivatePOM.from_formula("y ~ d | x", raw, mechanism=mech).fit(random_state=0)
    >>> list(res.params.index)
    ['E[Y(0)]', 'E[Y(1)]']
    """

    _name = "PrivatePOM"

    def _param_names(self) -> list[str]:
        return [f"E[Y({v})]" for v in self.inputs.levels]

    def _combine(
        self, pom_phi: FloatArray, att_phi: FloatArray, wt: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray | None]:
        """The potential-outcome means themselves."""
        est, phi = mean_estimate(pom_phi, wt, None)
        return est, phi, np.eye(self.inputs.n_levels)

    def _from_means(self, m: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray | None]:
        """The arm means themselves."""
        eye = np.eye(self.inputs.n_levels)
        return m.copy(), eye, eye
