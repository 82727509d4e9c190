r"""Differentially private optimal transport (DPOT; Le Tien, Habrard and Sebban, 2019, Algorithm 1).

The source party projects its rows with a public Johnson-Lindenstrauss matrix
:math:`M \sim N(0, 1/\ell)^{k\times\ell}` and adds Gaussian noise; it publishes only
:math:`(M, X_s M + \Delta)`. The target party builds the debiased squared-Euclidean cost
to its own projected rows :math:`X_t M` and solves optimal transport with POT.

The module is a functional core (:func:`draw_projection`, :func:`publish_rows`,
:func:`debiased_cost`, :func:`solve_transport`, :func:`dpot`, :func:`dpot_minibatch`)
and two thin sklearn-like classes: :class:`DPOTSource` (source side) and :class:`DPOT`
(target side). No object of this module ever stores the raw source rows.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import Literal, NamedTuple

import numpy as np
from scipy import stats
from scipy.optimize import brentq

from privinfer._typing import FloatArray, RandomStateLike
from privinfer._validation import (
    check_in_interval,
    check_int,
    check_no_nan,
    check_random_state,
    spawn_generators,
)
from privinfer.exceptions import (
    DataMismatchError,
    NotFittedError,
    TransportConvergenceError,
    TransportConvergenceWarning,
    TransportNoiseWarning,
    WeightsError,
)
from privinfer.transport._deconvolution import (
    MAX_COMPONENTS,
    MixturePrior,
    n_parameters,
    posterior_draws,
    row_space,
    select_mixture,
)
from privinfer.transport._extrapolation import fit_hyperbolic, hyperbolic_curves
from privinfer.transport._pot import import_ot
from privinfer.transport._release import SummaryText, shape_text, warn_if_seeded
from privinfer.transport.accounting import (
    NeighbourRelation,
    PrivacyStatement,
    _check_relation,
    minibatch_privacy,
)
from privinfer.transport.calibration import (
    analytic_gaussian_sigma,
    max_row_norm,
    record_sensitivity,
    theorem2_sigma,
)

__all__ = [
    "DPOT",
    "CostEstimate",
    "DPOTResult",
    "DPOTSource",
    "MinibatchDPOTResult",
    "PublishedMinibatches",
    "PublishedSource",
    "debiased_cost",
    "dpot",
    "dpot_minibatch",
    "draw_projection",
    "estimate_transport_cost",
    "publish_rows",
    "solve_transport",
]

Method = Literal["emd", "sinkhorn"]
Estimator = Literal["extrapolation", "deconvolution", "auto"]


# ----------------------------------------------------------------------------------------
# Records
# ----------------------------------------------------------------------------------------
#: Two-sided level of the reported cost interval.
_DEFAULT_LEVEL = 0.95
#: Folds of the column partition that sets the noise levels of the extrapolation.
_SIMEX_FOLDS = 4
#: Largest noise ratio (noise variance over the source's spread) at which
#: ``estimator="auto"`` deconvolves.
_AUTO_NOISE_RATIO = 1.0


@dataclass(frozen=True, eq=False, repr=False)
class PublishedSource:
    r"""What the source party publishes: the projection and the noisy projected rows.

    It holds nothing else; in particular never the raw source rows :math:`X_s` and never
    the seed of the release.

    Attributes
    ----------
    projection : ndarray of shape (n_features, ell)
        The public matrix :math:`M`.
    rows : ndarray of shape (n_source, ell)
        :math:`Z_s = X_s M + \Delta` (rows clipped first under the ``"record"`` relation).
    sigma : float
        Standard deviation of every entry of :math:`\Delta`.
    privacy : PrivacyStatement
        The guarantee of this publication.

    Examples
    --------
    >>> Xs = np.random.default_rng(0).normal(size=(30, 5))
    >>> pub = DPOTSource(eps=5.0, delta=1e-3, ell=50, random_state=0).publish(Xs)
    >>> pub.n_samples, pub.n_features, pub.ell
    (30, 5, 50)
    >>> pub.rows.shape, pub.projection.shape
    ((30, 50), (5, 50))
    >>> bool(pub.sigma > 0), pub.privacy.eps, pub.privacy.neighbour
    (True, 5.0, 'entry')
    >>> print(repr(pub).splitlines()[0])
    PublishedSource(n_source=30, n_features=5, ell=50,
    """

    projection: FloatArray
    rows: FloatArray
    sigma: float
    privacy: PrivacyStatement

    @property
    def ell(self) -> int:
        r"""Projection dimension :math:`\ell`."""
        return int(self.projection.shape[1])

    @property
    def n_features(self) -> int:
        """Number of original features :math:`k`."""
        return int(self.projection.shape[0])

    @property
    def n_samples(self) -> int:
        """Number of published source rows."""
        return int(self.rows.shape[0])

    def __repr__(self) -> str:
        p = self.privacy
        return (
            f"PublishedSource(n_source={self.n_samples}, n_features={self.n_features}, "
            f"ell={self.ell},\n                eps={p.eps:.4g}, delta={p.delta:.3g}, "
            f"neighbour={p.neighbour!r}, sigma={self.sigma:.4g})"
        )


@dataclass(frozen=True, eq=False, repr=False)
class PublishedMinibatches:
    """A sequence of Poisson-sampled minibatch publications sharing one projection.

    Attributes
    ----------
    batches : tuple of PublishedSource
        One publication per step (rows in random order; a batch may be empty).
    sampling_probability : float
        Poisson rate :math:`q` of a source row in a step.
    privacy : PrivacyStatement
        Guarantee of the whole sequence (PLD composition in ``dp_accounting``).

    Examples
    --------
    Four Poisson-sampled batches of 50 expected rows out of 200, within eps = 1 in total:

    >>> import warnings
    >>> Xs = np.random.default_rng(0).normal(size=(200, 5))
    >>> src = DPOTSource(eps=1.0, delta=1e-3, ell=20, random_state=1)
    >>> with warnings.catch_warnings():  # a seed, for a reproducible example only
    ...     warnings.simplefilter("ignore")
    ...     pubs = src.publish_minibatches(Xs, batch_size=50, n_batches=4)
    >>> len(pubs.batches), pubs.sampling_probability
    (4, 0.25)
    >>> [batch.n_samples for batch in pubs.batches]  # random sizes around 50
    [47, 48, 47, 44]
    >>> bool(pubs.privacy.eps <= 1.0), all(b.privacy is pubs.privacy for b in pubs.batches)
    (True, True)
    """

    batches: tuple[PublishedSource, ...]
    sampling_probability: float
    privacy: PrivacyStatement

    def __repr__(self) -> str:
        p = self.privacy
        sizes = [b.n_samples for b in self.batches]
        ell = self.batches[0].ell if self.batches else 0
        return (
            f"PublishedMinibatches(n_batches={len(sizes)}, q={self.sampling_probability:.4g}, "
            f"rows per batch {min(sizes, default=0)}..{max(sizes, default=0)}, ell={ell},\n"
            f"                     eps={p.eps:.4g}, delta={p.delta:.3g}, "
            f"neighbour={p.neighbour!r}, sigma={p.sigma:.4g})"
        )


def _studentized_bound(terms: FloatArray, alpha: float, upper: bool) -> float:
    r"""One-sided ``1 - alpha/2`` bound for the mean of i.i.d. ``terms``, skew-corrected.

    The Student-t bound is shifted by the first Edgeworth term of the studentized mean
    (Hall, 1992): its :math:`p`-quantile is
    :math:`t_p - \hat\gamma (2t_p^2 + 1)/(6\sqrt{L})` with :math:`\hat\gamma` the sample
    skewness, so right-skewed terms get a longer upper and a shorter lower side. The
    correction is capped at half the t quantile.
    """
    L = terms.shape[0]
    mean = float(terms.mean())
    sd = float(terms.std(ddof=1)) if L > 1 else 0.0
    if not np.isfinite(sd) or sd == 0.0:
        return mean
    q = float(stats.t.ppf(1.0 - alpha / 2.0, L - 1))
    centred = (terms - mean) / sd
    skew = float(np.mean(centred**3)) if L > 2 else 0.0
    shift = float(np.clip(skew * (2.0 * q**2 + 1.0) / (6.0 * np.sqrt(L)), -q / 2, q / 2))
    se = sd / np.sqrt(L)
    return mean + (q + shift) * se if upper else mean - (q - shift) * se


@dataclass(frozen=True, eq=False, repr=False)
class CostEstimate:
    r"""Estimate of the squared-Euclidean transport cost :math:`W` from a DPOT release.

    Built by :func:`estimate_transport_cost` (and by :func:`dpot` / :class:`DPOT`). The
    in-sample value :math:`\tilde W` of the private plan (biased downward) and the
    held-out value of plans chosen on fewer columns (biased upward) are computed at
    several noise levels and extrapolated to zero noise (SIMEX by column subsampling);
    the bracket joins a lower confidence bound of the first, an upper confidence bound of
    the second and a t-interval around the extrapolated value.

    Attributes
    ----------
    estimate : float
        The extrapolated cost :math:`\hat W` (``extrapolation="hyperbolic"``), or the
        cross-fitted value ``crossfit`` when no extrapolation was done.
    std_error : float
        Delta-method standard error of :math:`\hat W` over the projection and the noise
        (from the :math:`\ell` i.i.d. column terms, plans held fixed); it does not include
        the error of the extrapolation model.
    lower, upper : float
        The bracket at ``level`` (see :meth:`conf_int`). Lower end: the largest of 0, a
        lower confidence bound of the mean part :math:`\lVert m_s - m_t\rVert^2 \le W`,
        and the smaller of a lower confidence bound of :math:`E\tilde W \le W` and
        :math:`\hat W - t\,\mathrm{se}`. Upper end: the larger of an upper confidence
        bound of :math:`E\hat W_{\text{out}} \ge W` and :math:`\hat W + t\,\mathrm{se}`.
        The bounds are model-free; each side errs with probability at most
        :math:`(1 - \text{level})/2`.
    level : float
        Two-sided level of ``(lower, upper)``.
    in_sample : float
        :math:`\tilde W = \langle\tilde\gamma, \tilde C\rangle` (the paper's estimate).
    held_out : float
        :math:`\hat W_{\text{out}}`, unbiased for the mean true cost of the cross-fitted
        plans.
    plan_excess : float
        Estimated excess of the true cost of the private plan over the optimal cost
        (:math:`\langle\tilde\gamma, C\rangle - W`), a measure of plan quality: the
        fitted :math:`h(1) - \hat W` (or :math:`(\hat W_{\text{out}} - \tilde W)/(1 + r)`
        without extrapolation).
    n_folds : int
        Number :math:`K` of column folds of ``held_out``.
    in_terms, out_terms : ndarray of shape (ell,)
        The per-column terms :math:`u^{\text{in}}_l`, :math:`u^{\text{out}}_l`
        (means: ``in_sample``, ``held_out``), kept for :meth:`conf_int`.
    crossfit : float
        :math:`(r\tilde W + \hat W_{\text{out}})/(1 + r)`, :math:`r = K/(K-1)`: the
        first-order bias correction (about half the bias of :math:`\tilde W` is left when
        the noise dominates).
    extrapolation : str
        ``"hyperbolic"``, ``"none"`` (``extrapolate=False``, ``ell < 4`` or a failed fit)
        or ``"deconvolution"`` (``estimator="deconvolution"``: ``estimate`` is then the
        posterior mean of the cost, ``std_error`` its posterior standard deviation).
    noise_levels, curve_in, curve_out : ndarray
        Noise variances :math:`\tau` relative to the release (1, 4/3, 2, 4), the mean
        in-sample values :math:`\hat g(\tau)` and held-out values :math:`\hat h(\tau)`
        (NaN at :math:`\tau = 1`) that the extrapolation was fitted to.
    row_noise : float
        The mean-zero, signal-free term :math:`N` removed from ``estimate`` when the
        projection has fewer source features than columns (0 otherwise): the published
        rows' squared norm outside the row space of :math:`M`, less its mean.
    row_noise_terms : ndarray of shape (ell,) or (0,)
        Its column parts :math:`n_l` (mean ``row_noise``), taken off the column terms
        by :meth:`conf_int`; empty when nothing was removed.
    mean_terms : ndarray of shape (ell,) or (0,)
        Column terms of the mean part, :math:`\ell\,(\bar z_l - \bar w_l)^2 - \ell
        \sigma^2\sum_i a_i^2` (weights normalised, times the total mass), whose mean is
        unbiased for :math:`\lVert m_s - m_t\rVert^2`, a lower bound of :math:`W` for
        any coupling; used by :meth:`conf_int` (empty: not used).
    mean_noise : float
        The constant :math:`c = \ell\sigma^2\sum_i a_i^2` (times the total mass) taken
        off each of ``mean_terms``.
    n_components : int
        Components of the deconvolved Gaussian-mixture prior (0 unless
        ``extrapolation == "deconvolution"``).
    noise_ratio : float
        :math:`\operatorname{tr}\Sigma/\hat v`: the variance of the privacy noise of a
        source point (in the row space of the projection) over the estimated spread
        :math:`\hat v` of the source points; NaN when the source has ``n_features >= ell``
        or too few rows for the deconvolution. ``estimator="auto"`` deconvolves when it
        is at most 1.

    See Also
    --------
    estimate_transport_cost : the construction, with the derivation.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Xs, Xt = rng.normal(size=(40, 3)), rng.normal(1.0, 1.0, size=(40, 3))
    >>> pub = DPOTSource(eps=10.0, delta=1e-5, ell=32, random_state=0).publish(Xs)
    >>> est = estimate_transport_cost(pub, Xt, estimator="extrapolation", random_state=0)
    >>> bool(est.lower <= est.estimate <= est.upper), est.n_folds, est.in_terms.shape
    (True, 4, (32,))
    >>> est.extrapolation, est.noise_levels.round(2).tolist()
    ('hyperbolic', [1.0, 1.33, 2.0, 4.0])
    >>> auto = estimate_transport_cost(pub, Xt, random_state=0)  # low noise: deconvolved
    >>> auto.extrapolation, bool(auto.noise_ratio <= 1.0), auto.n_components >= 1
    ('deconvolution', True, True)
    >>> lo, hi = est.conf_int(alpha=0.5)  # a narrower bracket
    >>> bool(est.lower <= lo <= hi <= est.upper)
    True
    """

    estimate: float
    std_error: float
    lower: float
    upper: float
    level: float
    in_sample: float
    held_out: float
    plan_excess: float
    n_folds: int
    in_terms: FloatArray
    out_terms: FloatArray
    crossfit: float = float("nan")
    extrapolation: str = "none"
    noise_levels: FloatArray = field(default_factory=lambda: np.ones(1))
    curve_in: FloatArray = field(default_factory=lambda: np.full(1, np.nan))
    curve_out: FloatArray = field(default_factory=lambda: np.full(1, np.nan))
    curve_terms: FloatArray = field(default_factory=lambda: np.zeros((2, 1, 0)))
    row_noise: float = 0.0
    row_noise_terms: FloatArray = field(default_factory=lambda: np.zeros(0))
    mean_terms: FloatArray = field(default_factory=lambda: np.zeros(0))
    mean_noise: float = 0.0
    n_components: int = 0
    noise_ratio: float = float("nan")

    def _with_bracket(self, alpha: float) -> CostEstimate:
        lo, hi = self.conf_int(alpha)
        return replace(self, lower=lo, upper=hi)

    def conf_int(self, alpha: float = 0.05) -> tuple[float, float]:
        r"""Bracket of :math:`W` at level ``1 - alpha`` (``alpha`` is the error rate).

        Upper end: the larger of the skew-corrected Student-t upper bound (one-sided
        error :math:`\alpha/2`) of the held-out column terms and
        :math:`\hat W + t_{\ell-1,1-\alpha/2}\,\mathrm{se}`. Lower end: the largest of

        * 0 (a transport cost is never negative);
        * an exact lower bound (error :math:`\alpha/4`) of the mean part
          :math:`\lVert m_s - m_t\rVert^2` (times the total mass): every coupling of
          the two measures costs at least that much, since
          :math:`\sum_{ij}\gamma_{ij}\lVert x_i - y_j\rVert^2 = \lVert m_s -
          m_t\rVert^2 + \sum_{ij}\gamma_{ij}\lVert (x_i - m_s) - (y_j - m_t)\rVert^2`
          for marginals of mass one. With the Gaussian projection of
          :func:`draw_projection` the column differences of the means,
          :math:`(\bar z - \bar w)_l = (m_s - m_t)m_l + \bar\Delta_l`, are i.i.d.
          :math:`N(0, \lVert m_s - m_t\rVert^2/\ell + \sigma^2\sum_i a_i^2)`, so their
          sum of squares over that variance is :math:`\chi^2_\ell` and
          :math:`\ell(\sum_l(\bar z - \bar w)_l^2/\chi^2_{\ell,1-\alpha/4} -
          \sigma^2\sum_i a_i^2)` is the bound (a Student-t bound of these very skewed
          terms undercovers when the noise is small);
        * the smaller of the lower bound (error :math:`\alpha/4`) of the in-sample
          column terms and :math:`\hat W - t\,\mathrm{se}`.

        The Student-t bounds are valid whatever the noise level and whatever the
        extrapolation model, because :math:`E\tilde W \le W \le E\hat W_{\text{out}}`,
        so each side errs with probability at most :math:`\alpha/2`; the t-interval
        widens the bracket where the estimate is near or past one of them. Where the
        noise dominates, the in-sample bound lies far below zero and the mean part sets
        the lower end (an estimate below it is then outside the bracket). The in-sample
        and held-out terms are taken net of ``row_noise_terms`` (mean zero, so the
        inequalities still hold, with much less noise when the source has fewer features
        than :math:`\ell`).

        Parameters
        ----------
        alpha : float, default=0.05
            Error rate in (0, 1) (not a privacy parameter).

        Returns
        -------
        tuple of float
            ``(lower, upper)``.
        """
        a = check_in_interval(alpha, "alpha", "CostEstimate.conf_int", 0.0, 1.0,
                              low_open=True, high_open=True)
        noise = self.row_noise_terms if self.row_noise_terms.size else 0.0
        # _studentized_bound(terms, e) is one-sided with error e/2
        with_mean = self.mean_terms.size > 0
        lo = _studentized_bound(self.in_terms - noise, a / 2 if with_mean else a,
                                upper=False)
        hi = _studentized_bound(self.out_terms - noise, a, upper=True)
        ell = self.in_terms.shape[0]
        if ell > 1 and np.isfinite(self.std_error):
            q = float(stats.t.ppf(1.0 - a / 2.0, ell - 1))
            lo = min(lo, self.estimate - q * self.std_error)
            hi = max(hi, self.estimate + q * self.std_error)
        if with_mean:
            L = self.mean_terms.shape[0]
            q_chi = float(stats.chi2.ppf(1.0 - a / 4.0, L))
            total = float(self.mean_terms.sum()) + L * self.mean_noise
            lo = max(lo, total / q_chi - self.mean_noise)
        return float(max(lo, 0.0)), float(max(hi, 0.0))

    def __repr__(self) -> str:
        return (
            f"CostEstimate(estimate={self.estimate:.5g}, std_error={self.std_error:.3g}, "
            f"{100 * self.level:.0f}% bracket=[{self.lower:.5g}, {self.upper:.5g}],\n"
            f"             in_sample={self.in_sample:.5g}, held_out={self.held_out:.5g}, "
            f"plan_excess={self.plan_excess:.3g}, n_folds={self.n_folds},\n"
            f"             crossfit={self.crossfit:.5g}, extrapolation={self.extrapolation!r})"
        )


@dataclass(frozen=True, eq=False, repr=False)
class DPOTResult:
    r"""Outcome of one DPOT solve (Le Tien, Habrard and Sebban, 2019, Algorithm 1).

    Attributes
    ----------
    plan : ndarray of shape (n_source, n_target)
        The coupling :math:`\tilde\gamma_0`.
    cost : ndarray of shape (n_source, n_target)
        The debiased cost :math:`\tilde C = \lVert Z_s - X_t M\rVert^2 - \ell\sigma^2`.
    w_tilde : float
        :math:`\tilde W = \langle \tilde\gamma_0, \tilde C\rangle`, the paper's estimate
        of the squared-Euclidean (2-Wasserstein squared) transport cost. It is the
        minimum over couplings of a noisy cost, hence **biased downward**; use
        ``estimate`` instead.
    privacy : PrivacyStatement
        The guarantee of the publication the result was computed from.
    estimate : CostEstimate or None, default=None
        Bias-corrected cost with standard error and bracket; None when it was not
        requested (``n_folds=None``) or ``ell < 2``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Xs, Xt = rng.normal(size=(30, 5)), rng.normal(1.0, 1.0, size=(40, 5))
    >>> pub = DPOTSource(eps=5.0, delta=1e-3, ell=50, random_state=0).publish(Xs)
    >>> res = dpot(pub, Xt, random_state=0)
    >>> res.plan.shape, res.cost.shape
    ((30, 40), (30, 40))
    >>> bool(np.allclose(res.plan.sum(axis=1), 1 / 30))  # uniform source marginal
    True
    >>> bool(np.allclose(res.plan.sum(axis=0), 1 / 40))  # uniform target marginal
    True
    >>> bool(np.isclose(res.w_tilde, np.sum(res.plan * res.cost))), res.privacy is pub.privacy
    (True, True)
    >>> bool(res.estimate.lower <= res.estimate.estimate <= res.estimate.upper)
    True
    >>> len(str(res.summary()).splitlines()) <= 15
    True
    """

    plan: FloatArray
    cost: FloatArray
    w_tilde: float
    privacy: PrivacyStatement
    estimate: CostEstimate | None = None

    def __repr__(self) -> str:
        n, m = self.plan.shape
        est = self.estimate
        value = ("estimate=None" if est is None else
                 f"estimate={est.estimate:.5g} (se {est.std_error:.3g}, "
                 f"{100 * est.level:.0f}% bracket [{est.lower:.5g}, {est.upper:.5g}])")
        return (
            f"DPOTResult(n_source={n}, n_target={m}, {value},\n"
            f"           w_tilde={self.w_tilde:.5g}, eps={self.privacy.eps:.4g}, "
            f"delta={self.privacy.delta:.3g}, sigma={self.privacy.sigma:.4g}; "
            f"plan, cost: {shape_text(self.plan)})"
        )

    def summary(self) -> SummaryText:
        """Short text: sizes, privacy, the cost estimate with its uncertainty, plan quality.

        Returns
        -------
        SummaryText
            A ``str`` (it is returned, never printed) of at most 15 lines.
        """
        n, m = self.plan.shape
        p = self.privacy
        lines = [
            "DPOT transport cost (squared Euclidean)",
            "=" * 56,
            f"{'Source rows (published):':<30}{n:>26}",
            f"{'Target rows:':<30}{m:>26}",
            f"{'Privacy (eps, delta):':<30}{f'({p.eps:.4g}, {p.delta:.3g})':>26}",
            f"{'Neighbour relation:':<30}{p.neighbour:>26}",
            # with the noise ratio (tr Sigma over the source's estimated spread) when known:
            # above 1, one point's noise exceeds the spread of the whole source
            f"{'Noise sigma (noise/spread):':<30}"
            f"{f'{p.sigma:.4g} ({self.estimate.noise_ratio:.2g})':>26}"
            if self.estimate is not None and np.isfinite(self.estimate.noise_ratio)
            else f"{'Noise sigma:':<30}{p.sigma:>26.4g}",
            "-" * 56,
        ]
        est = self.estimate
        if est is None:
            lines.append(f"{'W~ (biased downward):':<30}{self.w_tilde:>26.5g}")
            lines.append("No bias-corrected estimate (n_folds=None or ell < 2).")
        else:
            bracket = f"[{est.lower:.5g}, {est.upper:.5g}]"
            rel = (f"{100 * est.plan_excess / est.estimate:.1f}%" if est.estimate > 0
                   else "rel. n/a")
            lines += [
                f"{'Cost estimate (se):':<30}{f'{est.estimate:.5g} ({est.std_error:.3g})':>26}",
                f"{f'{100 * est.level:.0f}% bracket of W:':<30}{bracket:>26}",
                f"{'W~ in-sample (biased down):':<30}{est.in_sample:>26.5g}",
                f"{'Held-out (biased up):':<30}{est.held_out:>26.5g}",
                f"{'Estimator:':<30}"
                f"{f'{est.extrapolation}, cross-fit {est.crossfit:.4g}':>26}",
                f"{'Plan excess cost (rel.):':<30}"
                f"{f'{est.plan_excess:.4g} ({rel})':>26}",
            ]
            if est.upper - est.lower > abs(est.estimate):
                lines.append("Noise-dominated: the release pins W down only to the bracket.")
        return SummaryText("\n".join(lines))


@dataclass(frozen=True, eq=False, repr=False)
class MinibatchDPOTResult:
    r"""Outcome of minibatch DPOT: one solve per published minibatch.

    Attributes
    ----------
    w_tilde : float
        Mean of the per-batch :math:`\tilde W` (non-empty batches only).
    batch_w_tilde : ndarray of shape (n_used_batches,)
        The per-batch estimates.
    privacy : PrivacyStatement
        Guarantee of the whole sequence of publications.
    diagnostics : dict
        ``n_empty_batches`` (batches skipped because the Poisson sample was empty).

    Examples
    --------
    >>> import warnings
    >>> rng = np.random.default_rng(0)
    >>> Xs, Xt = rng.normal(size=(200, 5)), rng.normal(1.0, 1.0, size=(200, 5))
    >>> src = DPOTSource(eps=1.0, delta=1e-3, ell=20, random_state=0)
    >>> pubs = src.publish_minibatches(Xs, batch_size=50, n_batches=4)
    >>> res = dpot_minibatch(pubs, Xt, random_state=2)
    >>> res.batch_w_tilde.shape[0] + res.diagnostics["n_empty_batches"]
    4
    >>> bool(np.isclose(res.w_tilde, res.batch_w_tilde.mean())), res.privacy is pubs.privacy
    (True, True)
    """

    w_tilde: float
    batch_w_tilde: FloatArray
    privacy: PrivacyStatement
    diagnostics: dict[str, int] = field(default_factory=dict)

    def __repr__(self) -> str:
        return (
            f"MinibatchDPOTResult(w_tilde={self.w_tilde:.5g} over "
            f"{self.batch_w_tilde.shape[0]} batches, eps={self.privacy.eps:.4g}, "
            f"delta={self.privacy.delta:.3g}, diagnostics={self.diagnostics})"
        )


# ----------------------------------------------------------------------------------------
# Functional core
# ----------------------------------------------------------------------------------------
def _as_matrix(
    X: object, name: str, owner: str, what: str = "array of shape (n_samples, n_features)"
) -> FloatArray:
    """``X`` as a finite, non-empty 2-D float array (``what`` names it in messages)."""
    try:
        arr = np.asarray(X, dtype=float)
    except (TypeError, ValueError) as exc:
        raise DataMismatchError(
            f"{owner}: {name!r} must be a numeric 2-D {what}; "
            f"got {type(X).__name__} that does not convert to float ({exc})."
        ) from exc
    if arr.ndim != 2 or arr.shape[0] < 1 or arr.shape[1] < 1:
        raise DataMismatchError(
            f"{owner}: {name!r} must be a non-empty 2-D {what}. Got shape {arr.shape}."
        )
    check_no_nan(arr, name, owner)
    return arr


def draw_projection(
    n_features: int, ell: int, random_state: RandomStateLike = None
) -> FloatArray:
    r"""Draw the Johnson-Lindenstrauss matrix :math:`M \sim N(0, 1/\ell)^{k\times\ell}`.

    Entries are i.i.d. with **variance** :math:`1/\ell`, so
    :math:`E\lVert xM\rVert^2 = \lVert x\rVert^2` and row norms concentrate around 1.
    Cost O(k l).

    Parameters
    ----------
    n_features : int
        Number :math:`k \ge 1` of original features.
    ell : int
        Projection dimension :math:`\ell \ge 1`.
    random_state : int, SeedSequence, Generator or None, default=None
        Source of randomness; None draws fresh OS entropy.

    Returns
    -------
    ndarray of shape (n_features, ell)
        The projection matrix.

    Raises
    ------
    ValueError
        If ``n_features < 1`` or ``ell < 1``.

    Examples
    --------
    >>> M = draw_projection(5, 3, random_state=0)
    >>> M.shape
    (5, 3)
    """
    k = check_int(n_features, "n_features", "draw_projection", 1)
    ell_i = check_int(ell, "ell", "draw_projection", 1)
    rng = check_random_state(random_state)
    return rng.normal(0.0, 1.0 / np.sqrt(ell_i), size=(k, ell_i))


def publish_rows(
    Xs: FloatArray, M: FloatArray, sigma: float, random_state: RandomStateLike = None
) -> FloatArray:
    r"""Noisy projected source rows :math:`X_s M + \Delta`, :math:`\Delta\sim N(0,\sigma^2)`.

    This is step 2 of Le Tien, Habrard and Sebban (2019), Algorithm 1. The caller is
    responsible for calibrating ``sigma`` (see :mod:`privinfer.transport.calibration`) and for
    clipping rows under the
    ``"record"`` relation; :class:`DPOTSource` does both. Cost O(n k l).

    Parameters
    ----------
    Xs : ndarray of shape (n_source, n_features)
        Source rows.
    M : ndarray of shape (n_features, ell)
        Projection matrix.
    sigma : float
        Noise standard deviation (``0`` gives the non-private projection).
    random_state : int, SeedSequence, Generator or None, default=None
        Source of the noise; None draws fresh OS entropy.

    Returns
    -------
    ndarray of shape (n_source, ell)
        The rows to publish.

    Raises
    ------
    DataMismatchError
        If ``Xs`` and ``M`` have different numbers of features.
    ValueError
        If ``sigma`` is negative.

    Examples
    --------
    >>> import numpy as np
    >>> M = draw_projection(4, 2, random_state=0)
    >>> publish_rows(np.ones((3, 4)), M, sigma=1.0, random_state=1).shape
    (3, 2)
    """
    owner = "publish_rows"
    X = _as_matrix(Xs, "Xs", owner)
    M_arr = _as_matrix(M, "M", owner)
    if X.shape[1] != M_arr.shape[0]:
        raise DataMismatchError(
            f"{owner}: Xs has {X.shape[1]} features but M has {M_arr.shape[0]} rows."
        )
    s = check_in_interval(sigma, "sigma", owner, 0.0, np.inf, high_open=True)
    rng = check_random_state(random_state)
    return X @ M_arr + rng.normal(0.0, s, size=(X.shape[0], M_arr.shape[1]))


def debiased_cost(Zs: FloatArray, Xt: FloatArray, M: FloatArray, sigma: float) -> FloatArray:
    r"""Debiased squared-Euclidean cost between published rows and projected targets.

    Step 3 of Le Tien, Habrard and Sebban (2019), Algorithm 1. Each entry is unbiased for
    the projected squared distance (over :math:`\Delta`), hence for the original squared
    distance (over
    :math:`M` and :math:`\Delta`). Entries can be negative. Cost O(n m l).

    Parameters
    ----------
    Zs : ndarray of shape (n_source, ell)
        Published rows :math:`X_s M + \Delta`.
    Xt : ndarray of shape (n_target, n_features)
        Target rows (held by the target party).
    M : ndarray of shape (n_features, ell)
        The published projection.
    sigma : float
        Noise standard deviation of the publication.

    Returns
    -------
    ndarray of shape (n_source, n_target)
        :math:`\tilde C`.

    Raises
    ------
    DataMismatchError
        If the dimensions of ``Zs``, ``Xt`` and ``M`` do not match.

    Notes
    -----
    .. math:: \tilde C_{ij} = \lVert z_i - x^t_j M\rVert_2^2 - \ell\sigma^2,\qquad
              E_\Delta \tilde C_{ij} = \lVert (x^s_i - x^t_j) M\rVert_2^2,\qquad
              E_{M,\Delta}\tilde C_{ij} = \lVert x^s_i - x^t_j\rVert_2^2 .

    Examples
    --------
    >>> import numpy as np
    >>> M = np.eye(2)
    >>> debiased_cost(np.zeros((1, 2)), np.ones((1, 2)), M, sigma=0.5)
    array([[1.5]])
    """
    owner = "debiased_cost"
    Z = _as_matrix(Zs, "Zs", owner)
    T = _as_matrix(Xt, "Xt", owner)
    M_arr = _as_matrix(M, "M", owner)
    if T.shape[1] != M_arr.shape[0]:
        raise DataMismatchError(
            f"{owner}: Xt has {T.shape[1]} features but the projection M has "
            f"{M_arr.shape[0]} rows; source and target must share the feature space."
        )
    if Z.shape[1] != M_arr.shape[1]:
        raise DataMismatchError(
            f"{owner}: the published rows have {Z.shape[1]} columns but M has "
            f"{M_arr.shape[1]} (ell)."
        )
    s = check_in_interval(sigma, "sigma", owner, 0.0, np.inf, high_open=True)
    ot = import_ot()
    C = ot.dist(Z, T @ M_arr, metric="sqeuclidean")
    C -= M_arr.shape[1] * s**2
    return C


def _as_cost(C: object, owner: str) -> FloatArray:
    """A cost matrix as a finite, non-empty 2-D float array."""
    return _as_matrix(C, "C", owner, "cost matrix of shape (n_source, n_target)")


def _only_coupling(a: FloatArray, b: FloatArray) -> FloatArray:
    r"""The only coupling of ``a`` and ``b`` when one of them has a single atom.

    With one source row it moves ``b_j`` to every target row (and symmetrically), so the
    plan is :math:`a b^T / \sum_j b_j`, of total mass ``sum(a)``, whatever that mass is.
    """
    return np.outer(a, b) / b.sum()


def _emd_max_iter(n: int, m: int) -> int:
    return int(max(100_000, 50 * n * m))


def solve_transport(
    C: FloatArray,
    a: FloatArray | None = None,
    b: FloatArray | None = None,
    *,
    method: Method = "emd",
    reg: float | None = None,
    max_iter: int | None = None,
) -> FloatArray:
    r"""Optimal plan for a cost matrix with POT (``ot.emd`` or ``ot.sinkhorn``).

    The exact solver is POT's network simplex with an iteration cap raised to
    ``max(1e5, 50 n m)``; reaching the cap raises instead of returning a non-optimal
    plan. The entropic solver is ``ot.sinkhorn(method="sinkhorn")`` on the cost shifted
    to a zero minimum (the plan is unchanged by a constant shift; the shift prevents
    overflow in :math:`e^{-C/\mathrm{reg}}` for debiased costs).

    Parameters
    ----------
    C : ndarray of shape (n_source, n_target)
        Cost matrix.
    a, b : ndarray of shape (n_source,) / (n_target,), default=None
        Marginal weights with equal sums (POT's ``a``, ``b``); None means uniform.
    method : {"emd", "sinkhorn"}, default="emd"
        Exact or entropic transport.
    reg : float or None, default=None
        Entropic regularisation (in units of the cost), required for ``"sinkhorn"``.
    max_iter : int or None, default=None
        Iteration cap; None uses ``max(1e5, 50 n m)`` for EMD and 1000 for Sinkhorn.

    Returns
    -------
    ndarray of shape (n_source, n_target)
        The transport plan.

    Raises
    ------
    TransportConvergenceError
        If the network simplex stops before optimality.
    DataMismatchError
        If ``C`` is not a non-empty 2-D array.
    MissingValueError
        If ``C`` holds NaN or infinite entries.
    WeightsError
        If ``a`` or ``b`` is malformed or their sums differ.
    ValueError
        For an unknown ``method`` or a missing/non-positive ``reg``.

    Warns
    -----
    TransportConvergenceWarning
        If Sinkhorn stops before its threshold.

    Examples
    --------
    >>> import numpy as np
    >>> solve_transport(np.array([[0.0, 1.0], [1.0, 0.0]]))
    array([[0.5, 0. ],
           [0. , 0.5]])
    """
    owner = "solve_transport"
    C_arr = np.ascontiguousarray(_as_cost(C, owner))
    n, m = C_arr.shape
    a_arr, b_arr = _check_marginals(a, b, n, m, owner)
    ot = import_ot()
    if method == "emd":
        n_iter = _emd_max_iter(n, m) if max_iter is None else check_int(
            max_iter, "max_iter", owner, 1)
        if n == 1 or m == 1:
            return _only_coupling(a_arr, b_arr)
        if a_arr.sum() != b_arr.sum():
            # POT asserts equal sums to 6 decimals *absolutely*, then rescales b; sums
            # that agree to the relative tolerance of _check_marginals are rescaled here
            b_arr = b_arr * (a_arr.sum() / b_arr.sum())
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*numItermax.*")
            # shifted to be >= 0 (the optimal plan is unchanged: the marginals are fixed);
            # POT's network simplex reports all-negative cost matrices, which the debiased
            # cost can be, as "infeasible". Scaled to a maximum of 1 (the plan is unchanged
            # again): the simplex's tolerances are absolute, and costs below about 1e-9
            # (squared distances of data in units of 1e-5 or less) gave non-optimal plans.
            shifted = C_arr - C_arr.min()
            top = float(shifted.max())
            if top > 0.0:
                shifted /= top
            plan, log = ot.emd(a_arr, b_arr, shifted, numItermax=n_iter, log=True)
        if log.get("result_code", 1) != 1:
            raise TransportConvergenceError(
                f"{owner}: ot.emd stopped before optimality ({log.get('warning')!r}) "
                f"with max_iter={n_iter}. Increase max_iter."
            )
        return plan
    if method == "sinkhorn":
        if reg is None:
            raise ValueError(f"{owner}: method='sinkhorn' needs 'reg' > 0. Got None.")
        reg_f = check_in_interval(reg, "reg", owner, 0.0, np.inf, low_open=True,
                                  high_open=True)
        n_iter = 1000 if max_iter is None else check_int(max_iter, "max_iter", owner, 1)
        if n == 1 or m == 1:
            return _only_coupling(a_arr, b_arr)
        stop_thr = 1e-9
        with np.errstate(divide="ignore", over="ignore", under="ignore", invalid="ignore"):
            # an underflowing kernel exp(-C/reg) is reported below as an error, not a warning
            plan, log = ot.sinkhorn(a_arr, b_arr, C_arr - C_arr.min(), reg_f,
                                    method="sinkhorn", numItermax=n_iter, stopThr=stop_thr,
                                    log=True, warn=False)
        errs = log.get("err", [])
        if not np.all(np.isfinite(plan)):
            raise TransportConvergenceError(
                f"{owner}: Sinkhorn produced non-finite values; increase 'reg' "
                f"(got {reg_f}) relative to the cost range {np.ptp(C_arr):.4g}."
            )
        if len(errs) and errs[-1] > stop_thr:
            warnings.warn(
                f"{owner}: Sinkhorn stopped after {n_iter} iterations with marginal error "
                f"{errs[-1]:.3g} > {stop_thr}; increase max_iter or reg.",
                TransportConvergenceWarning,
                stacklevel=2,
            )
        return plan
    raise ValueError(
        f"The 'method' parameter of {owner} must be 'emd' or 'sinkhorn'. Got {method!r}."
    )


def _check_weights(
    w: object, size: int, name: str, owner: str
) -> FloatArray:
    """Validate marginal weights (POT's ``a`` / ``b``); None means uniform."""
    if w is None:
        return np.full(size, 1.0 / size)
    try:
        arr = np.asarray(w, dtype=float)
    except (TypeError, ValueError) as exc:
        raise WeightsError(
            f"{owner}: {name!r} must be a 1-D numeric array of {size} weights; got "
            f"{type(w).__name__} that does not convert to float."
        ) from exc
    if arr.ndim != 1 or arr.shape[0] != size:
        raise WeightsError(
            f"{owner}: {name!r} must have shape ({size},), one weight per row. Got shape "
            f"{arr.shape}."
        )
    if not np.all(np.isfinite(arr)) or np.any(arr < 0) or arr.sum() <= 0:
        raise WeightsError(
            f"{owner}: {name!r} must hold finite, nonnegative weights with a positive sum."
        )
    return arr


def _check_marginals(
    a: object, b: object, n: int, m: int, owner: str
) -> tuple[FloatArray, FloatArray]:
    a_arr = _check_weights(a, n, "a", owner)
    b_arr = _check_weights(b, m, "b", owner)
    if not np.isclose(a_arr.sum(), b_arr.sum(), rtol=1e-6, atol=0.0):
        raise WeightsError(
            f"{owner}: the weights 'a' and 'b' must have the same total mass (as in POT's "
            f"ot.emd). Got sum(a) = {a_arr.sum():.6g} and sum(b) = {b_arr.sum():.6g}."
        )
    return a_arr, b_arr


def _column_terms(plan: FloatArray, Z: FloatArray, W: FloatArray, sigma: float,
                  ell: int) -> FloatArray:
    r"""Column terms :math:`\ell\langle\gamma, (z_{\cdot l} - w_{\cdot l})^2 - \sigma^2\rangle`.

    O(n m L) for L columns.
    """
    rows, cols = plan.sum(axis=1), plan.sum(axis=0)
    return ell * (rows @ Z**2 - 2.0 * np.sum(Z * (plan @ W), axis=0) + cols @ W**2
                  - sigma**2 * plan.sum())


def _mean_part_terms(Z: FloatArray, W: FloatArray, sigma: float, a: FloatArray,
                     b: FloatArray) -> tuple[FloatArray, float]:
    r"""Column terms :math:`\mu\,\ell\,(\bar z - \bar w)_l^2 - c` of the mean part and
    the constant :math:`c = \mu\,\ell\,\sigma^2\sum_i a_i^2` taken off them (weights
    normalised, :math:`\mu` the total mass): i.i.d. over the columns, with mean
    :math:`\mu\lVert m_s - m_t\rVert^2` over the noise and the projection
    (:math:`E\,\ell (vM)_l^2 = \lVert v\rVert^2`). O((n + m) ell).
    """
    mass = float(a.sum())
    a_n, b_n = a / mass, b / float(b.sum())
    diff = a_n @ Z - b_n @ W
    c = mass * Z.shape[1] * sigma**2 * float(np.sum(a_n**2))
    return mass * Z.shape[1] * diff**2 - c, c


def _row_space_noise(Z: FloatArray, M: FloatArray, sigma: float, a: FloatArray
                     ) -> tuple[float, FloatArray]:
    r"""Pure-noise part of the row terms, outside the row space of the projection.

    With :math:`P_\perp` the projector onto the orthogonal complement of the row space
    of :math:`M` (rank :math:`k < \ell`), :math:`z_i P_\perp = \Delta_i P_\perp` holds no
    signal, and :math:`N = \sum_i a_i(\lVert z_i P_\perp\rVert^2 - (\ell - k)\sigma^2)` has
    mean zero. Returns :math:`N` and its column parts
    :math:`n_l = \ell\sum_i a_i((z_i P_\perp)_l^2 - \sigma^2 (P_\perp)_{ll})` (mean
    :math:`N`); ``(0, zeros)`` when :math:`k = \ell`. O(n ell k).
    """
    ell = M.shape[1]
    _, sv, vt = np.linalg.svd(M, full_matrices=False)
    k = int(np.sum(sv > sv[0] * max(M.shape) * np.finfo(float).eps)) if sv.size else 0
    if k >= ell:
        return 0.0, np.zeros(ell)
    Q = vt[:k].T  # (ell, k): orthonormal basis of the row space
    Z_perp = Z - (Z @ Q) @ Q.T
    parts = ell * (a @ (Z_perp**2 - sigma**2 * (1.0 - np.sum(Q**2, axis=1))[None, :]))
    return float(parts.mean()), parts


def estimate_transport_cost(
    published: PublishedSource,
    Xt: FloatArray,
    *,
    a: FloatArray | None = None,
    b: FloatArray | None = None,
    n_folds: int = 4,
    level: float = _DEFAULT_LEVEL,
    method: Method = "emd",
    reg: float | None = None,
    max_iter: int | None = None,
    plan: FloatArray | None = None,
    extrapolate: bool = True,
    estimator: Estimator = "auto",
    n_draws: int = 10,
    random_state: RandomStateLike = None,
) -> CostEstimate:
    r"""Bias-corrected squared-Euclidean transport cost from a DPOT release, with a bracket.

    The private plan minimises a *noisy* cost, so its in-sample value :math:`\tilde W`
    is biased downward, while the true cost of a plan chosen on independent noise is
    biased upward. Both are computed on the columns of the published projection, which
    are i.i.d.: plans are chosen on some columns and evaluated on the others. Using fewer
    columns simulates a noisier release, so both values are computed at several noise
    levels and extrapolated back to zero noise (simulation-extrapolation, Cook and
    Stefanski, 1994); the one-sided bounds of the two values bracket :math:`W` whatever
    the extrapolation model. Everything is post-processing of the release (no privacy
    cost).

    Use it to report a transport cost at moderate privacy, where :math:`\tilde W` alone
    is unusable. Cost: 11 transport solves with the default ``n_folds=4`` (10 when
    ``plan`` is given; ``n_folds`` more for another ``n_folds``; ``n_folds + 1`` with
    ``extrapolate=False``), O(n m ell) and a three-parameter least-squares fit.

    Parameters
    ----------
    published : PublishedSource
        The source party's publication (``ell >= 2``).
    Xt : ndarray of shape (n_target, n_features)
        Target rows.
    a, b : ndarray of shape (n_source,) / (n_target,), default=None
        Public marginal weights with equal sums, as in POT; None means uniform.
    n_folds : int, default=4
        Number :math:`K \ge 2` of column folds of ``held_out`` and ``crossfit`` (capped
        at ``ell``); the extrapolation always uses folds of 1/4 and 1/2 of the columns.
    level : float, default=0.95
        Two-sided level of the bracket ``(lower, upper)``.
    method : {"emd", "sinkhorn"}, default="emd"
        Solver of every plan (see :func:`solve_transport`).
    reg : float or None, default=None
        Entropic regularisation (``"sinkhorn"`` only).
    max_iter : int or None, default=None
        Iteration cap of the solver.
    plan : ndarray of shape (n_source, n_target), optional
        The plan on all columns if already solved (:func:`dpot` passes it).
    extrapolate : bool, default=True
        Extrapolate to zero noise (needs ``ell >= 4``); False returns the cross-fitted
        value as ``estimate``. Ignored with ``estimator="deconvolution"``.
    estimator : {"auto", "extrapolation", "deconvolution"}, default="auto"
        How ``estimate`` is obtained: simulation-extrapolation over column subsets, or
        the posterior mean of the cost under a Gaussian-mixture prior of the source
        points fitted by deconvolution in the row space of the projection (needs fewer
        source features than ``ell``; see Notes), or ``"auto"``: the deconvolution
        where it is available and the estimated ``noise_ratio`` is at most 1, the
        extrapolation otherwise. The bracket's model-free ends are the same for all.
    n_draws : int, default=10
        Posterior draws of the source points when the deconvolution is used, one
        transport solve each.
    random_state : int, SeedSequence, Generator or None, default=None
        Source of the mixture's starting values and of the posterior draws (only used
        by the deconvolution; the extrapolation is deterministic); None draws fresh OS
        entropy.

    Returns
    -------
    CostEstimate
        Estimate, standard error, bracket, in-sample and held-out values, plan excess,
        and the curves the extrapolation was fitted to.

    Raises
    ------
    DataMismatchError
        If ``ell < 2`` (no column is left to hold out) or the dimensions do not match.
    WeightsError
        If ``a`` or ``b`` is malformed or their sums differ.
        With ``estimator="deconvolution"``: if the source has ``n_features >= ell`` or
        too few rows for one full-covariance Gaussian.
    ValueError
        If ``n_folds < 2``, ``n_draws < 2``, ``level`` is outside (0, 1) or
        ``estimator`` is unknown.

    See Also
    --------
    dpot : the solve that calls it.
    CostEstimate : the returned record.

    Notes
    -----
    **Column terms.** With :math:`m_l` the l-th column of :math:`M` and
    :math:`z_{il} = x^s_i m_l + \Delta_{il}`, the matrices
    :math:`T^{(l)}_{ij} = \ell\,[(z_{il} - x^t_j m_l)^2 - \sigma^2]` are i.i.d. over
    :math:`l` with :math:`E\,T^{(l)}_{ij} = \lVert x^s_i - x^t_j\rVert^2 = C_{ij}`
    (:math:`m_l \sim N(0, I/\ell)`), and the debiased cost is their mean,
    :math:`\tilde C = \ell^{-1}\sum_l T^{(l)}`. So the projection error and the noise
    are both averaged over :math:`\ell` i.i.d. columns.

    **In-sample and held-out values.** :math:`\tilde\gamma = \arg\min_{\gamma\in\Pi(a,b)}
    \langle\gamma,\tilde C\rangle`, :math:`\tilde W = \langle\tilde\gamma,\tilde C\rangle
    = \ell^{-1}\sum_l u^{\text{in}}_l`, :math:`u^{\text{in}}_l = \langle\tilde\gamma,
    T^{(l)}\rangle`. By Jensen, :math:`E\tilde W \le \min_\gamma E\langle\gamma,\tilde
    C\rangle = W`. Split the columns into K folds; :math:`\tilde\gamma_{-k}` solves on
    the columns outside fold k, and :math:`u^{\text{out}}_l = \langle\tilde\gamma_{-k(l)},
    T^{(l)}\rangle`. Given the plan the held-out columns are independent of it, so
    :math:`E[u^{\text{out}}_l\mid\tilde\gamma_{-k}] = \langle\tilde\gamma_{-k}, C\rangle
    \ge W` and :math:`\hat W_{\text{out}} = \ell^{-1}\sum_l u^{\text{out}}_l` is biased
    upward by the excess cost of the fold plans.

    **Noise levels.** Let :math:`g(t) = E\min_\gamma\langle\gamma, C + tE\rangle` with
    :math:`E = \tilde C - C`, and :math:`h(t)` the mean true cost of the plan chosen at
    noise level :math:`t`. By the envelope theorem :math:`h(t) = g(t) - t g'(t)`;
    :math:`g` is concave, :math:`g(0) = h(0) = W`, and :math:`E\tilde W = g(1)`. A plan
    chosen on a fraction :math:`f` of the columns sees the variance of the column noise
    multiplied by :math:`\tau = t^2 = 1/f` (projection error and privacy noise alike:
    adding Gaussian noise to the published rows would scale only the second), and its
    in-sample and held-out values are unbiased for :math:`g` and :math:`h` at that
    level. With a partition of the columns into 4 folds and one into 2 halves, plans on
    3/4, 1/2 and 1/4 of the columns give :math:`\hat g(\tau), \hat h(\tau)` at
    :math:`\tau = 4/3, 2, 4`, and the plan on all columns gives :math:`\hat g(1) =
    \tilde W`.

    **Extrapolation.** The release determines :math:`g` only for :math:`t \ge 1`: less
    noise cannot be simulated, and without a model :math:`W` is only known to lie in
    :math:`[g(1),\ g(1) - g'(1)] = [E\tilde W,\ h(1)]` (every concave :math:`g` with
    :math:`g'(0) = 0` fits). In the small-noise regime the optimum moves by
    :math:`O(t)` along a locally quadratic cost and :math:`g(t) = W - \beta t^2`,
    :math:`h(t) = W + \beta t^2` (optimism equals excess cost, as training and test
    error straddle the truth in least squares; Efron, 2004). In the noise-dominated
    regime the plan is chosen by the noise: :math:`g` becomes linear in :math:`t` and
    :math:`h` saturates at the cost of a plan chosen on noise alone. The hyperbolic
    extrapolant joins the two regimes with one scale :math:`a`,

    .. math:: g(t) = W - c\bigl(\sqrt{t^2 + a^2} - a\bigr), \qquad
              h(t) = W + c\Bigl(a - \frac{a^2}{\sqrt{t^2 + a^2}}\Bigr),

    which satisfies :math:`h = g - t g'` exactly (:math:`c \ge 0`, :math:`a > 0`), is
    quadratic for :math:`t \ll a` and linear for :math:`t \gg a`. Its three parameters
    are fitted by least squares to the seven values :math:`\hat g(1), \hat g(\tau),
    \hat h(\tau)`, and :math:`\hat W` is the fitted :math:`W = g(0)`. (A polynomial in
    :math:`\tau`, the usual SIMEX extrapolant, cannot follow the :math:`\sqrt\tau`
    growth of the noise-dominated regime and keeps about half of the bias there.)
    ``crossfit`` is the older first-order correction
    :math:`(r\tilde W + \hat W_{\text{out}})/(1 + r)`, :math:`r = K/(K-1)`, exact when
    :math:`g` is quadratic.

    **Signal-free noise.** Every curve value contains the same row term
    :math:`\sum_i a_i(\lVert z_i\rVert^2 - \ell\sigma^2)` (a plan with row sums
    :math:`a` pays it whatever it is), so it enters :math:`\hat W` with coefficient one
    and moves no plan. When the source has :math:`k < \ell` features, the part of
    :math:`z_i` outside the row space of :math:`M` is pure noise,
    :math:`z_i P_\perp = \Delta_i P_\perp`, and
    :math:`N = \sum_i a_i(\lVert z_i P_\perp\rVert^2 - (\ell - k)\sigma^2)` has mean
    zero and variance :math:`2(\ell - k)\sigma^4\sum_i a_i^2`; the estimate is
    :math:`\hat W - N` (``row_noise``), with the same mean and, at strong noise, several
    times less spread (the in-sample and held-out values keep it; the bracket uses their
    column terms net of it). The standard error uses the column terms less the column
    parts :math:`n_l` of :math:`N`; their sum of variances overstates the variance of
    the projected part somewhat, so it errs on the wide side.

    **Uncertainty.** Every curve value is a mean of column terms, so :math:`\hat W` is,
    to first order, a mean of :math:`\ell` i.i.d. terms :math:`\psi_l = \ell\sum_j
    (\partial\hat W/\partial y_j)\,q_{jl}` (:math:`y_j = \sum_l q_{jl}` the curve
    values, the gradient by central differences of the fit); ``std_error`` is their
    standard deviation over :math:`\sqrt\ell` (plans held fixed). The bracket is the
    union of :math:`[\,\tilde W - q_-\,s_{\text{in}}/\sqrt\ell,\ \hat W_{\text{out}} +
    q_+\,s_{\text{out}}/\sqrt\ell\,]` (skew-corrected Student-t quantiles, Hall 1992)
    and :math:`\hat W \pm t_{\ell-1}\,\mathrm{se}`. Its first part covers :math:`W` with
    probability about ``level`` or more whatever the shape of :math:`g`, since each end
    is a one-sided bound for a mean on the correct side of :math:`W`; the second part
    widens it where the extrapolated value lies near or past one of those ends.
    With ``method="sinkhorn"`` the target is the cost of the entropic plan, and the
    extrapolation is a heuristic (the envelope identity holds only for exact plans).

    **Deconvolution** (``estimator="deconvolution"``). With the thin SVD
    :math:`M = USV'` (:math:`k < \ell`), :math:`\hat x_i = z_i V S^{-1} U' = x^s_i + e_i`,
    :math:`e_i \sim N(0, \Sigma)`, :math:`\Sigma = \sigma^2 (MM')^{-1}`: the release
    is, exactly, the source points observed with Gaussian noise of *known* covariance
    (the part of :math:`z_i` outside the row space of :math:`M` holds no signal), with
    no projection error. A prior :math:`G = \sum_c \pi_c N(\mu_c, V_c)` is fitted to
    the :math:`\hat x_i` by maximum likelihood under the marginal
    :math:`\sum_c \pi_c N(\mu_c, V_c + \Sigma)` (EM of extreme deconvolution, Bovy,
    Hogg and Roweis, 2011; the Gaussian-mixture counterpart of the Kiefer and
    Wolfowitz (1956) NPMLE, computed by Koenker and Mizera (2014) as a convex
    program), with 1 to 5 components, full or spherical (:math:`V_c = v_cI`)
    covariances, the family and the number chosen together by AIC. Given :math:`\hat x_i`, the
    posterior of :math:`x^s_i` is a Gaussian mixture. With weights :math:`a` summing to
    one (the estimate scales with their total), the squared-Euclidean cost splits
    exactly into a mean part and the cost between the centred measures,
    :math:`W = \lVert m_s - m_t\rVert^2 + W_c`. The mean part is estimated without
    bias by :math:`\lVert\hat m - m_t\rVert^2 - \operatorname{tr}\Sigma\sum_i a_i^2`
    (:math:`\hat m = \sum_i a_i\hat x_i`). For :math:`d = 1..D` a posterior draw
    :math:`x^{(d)}` of all points is centred and rescaled so that its spread
    :math:`\sum_i a_i\lVert x^{(d)}_i - \bar x^{(d)}\rVert^2` equals the unbiased
    :math:`\hat v = \sum_i a_i\lVert\hat x_i - \hat m\rVert^2 -
    \operatorname{tr}\Sigma\,(1 - \sum_i a_i^2)` (0 when negative): the first two
    moments of the ensemble are matched, as in the constrained Bayes estimates of a
    population of parameters (Louis, 1984), since a fitted prior is too dispersed when
    the noise is strong. :math:`W_c^{(d)}` is the optimal cost from the calibrated draw
    to the centred target, and ``estimate`` is :math:`\hat W = \text{mean part} +
    D^{-1}\sum_d W_c^{(d)}`, a Monte Carlo approximation of the posterior mean of
    :math:`W`. ``std_error`` joins the spread of the :math:`W_c^{(d)}` (times
    :math:`\sqrt{1 + 1/D}`) and the delta-method variance of the mean part; it ignores
    the error of the fitted prior's shape, so the bracket keeps the model-free ends
    above. ``plan_excess`` is the mean over draws of the excess cost of the private
    plan over the draw's optimal plan. The discrete NPMLE itself (atoms at the data)
    was tried and not kept: with few points per dimension it overfits (its support is
    rougher than the source's) and its posterior draws duplicate atoms, both of which
    bias :math:`W` upward. The estimate is accurate when the noise is small against the
    spread of the source (there, much more accurate than the extrapolation, which
    carries the projection error); when the noise variance is comparable to the spread
    or larger, the shape of the source (its clusters, the anisotropy of its covariance)
    cannot be recovered, a smoother prior costs more to transport, and the estimate is
    biased upward. ``estimator="auto"`` therefore deconvolves only where
    :math:`\operatorname{tr}\Sigma \le \hat v` (``noise_ratio`` at most 1).

    References
    ----------
    .. [1] Le Tien, Habrard, Sebban (2019). Differentially private optimal transport:
       application to domain adaptation. IJCAI.
    .. [2] Efron (2004). The estimation of prediction error: covariance penalties and
       cross-validation. JASA 99, 619-632.
    .. [3] Hall (1992). The Bootstrap and Edgeworth Expansion. Springer.
    .. [4] Cook and Stefanski (1994). Simulation-extrapolation estimation in parametric
       measurement error models. JASA 89, 1314-1328.
    .. [5] Kiefer and Wolfowitz (1956). Consistency of the maximum likelihood estimator
       in the presence of infinitely many incidental parameters. Ann. Math. Statist.
       27, 887-906.
    .. [6] Koenker and Mizera (2014). Convex optimization, shape constraints, compound
       decisions, and empirical Bayes rules. JASA 109, 674-685.
    .. [7] Bovy, Hogg and Roweis (2011). Extreme deconvolution: inferring complete
       distribution functions from noisy, heterogeneous and incomplete observations.
       Ann. Appl. Stat. 5, 1657-1677.
    .. [8] Louis (1984). Estimating a population of parameter values using Bayes and
       empirical Bayes methods. JASA 79, 393-398.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Xs, Xt = rng.normal(size=(50, 4)), rng.normal(1.0, 1.0, size=(50, 4))
    >>> pub = DPOTSource(eps=4.0, delta=1e-5, ell=32, random_state=0).publish(Xs)
    >>> est = estimate_transport_cost(pub, Xt, n_folds=4, random_state=0)
    >>> est.n_folds, bool(est.lower < est.upper), bool(est.std_error > 0)
    (4, True, True)
    >>> dec = estimate_transport_cost(pub, Xt, estimator="deconvolution", random_state=0)
    >>> dec.extrapolation, bool(dec.lower <= dec.estimate <= dec.upper)
    ('deconvolution', True)
    """
    owner = "estimate_transport_cost"
    if not isinstance(published, PublishedSource):
        raise TypeError(
            f"{owner}: 'published' must be a PublishedSource (from DPOTSource.publish). "
            f"Got {type(published).__name__}."
        )
    T = _as_matrix(Xt, "Xt", owner)
    M = published.projection
    Z = published.rows
    ell = published.ell
    if T.shape[1] != M.shape[0]:
        raise DataMismatchError(
            f"{owner}: Xt has {T.shape[1]} features but the projection M has "
            f"{M.shape[0]} rows; source and target must share the feature space."
        )
    if ell < 2:
        raise DataMismatchError(
            f"{owner}: the publication has ell = {ell} projection column(s); the held-out "
            "estimate needs ell >= 2 (publish with a larger ell)."
        )
    K = min(check_int(n_folds, "n_folds", owner, 2), ell)
    lev = check_in_interval(level, "level", owner, 0.0, 1.0, low_open=True, high_open=True)
    a_arr, b_arr = _check_marginals(a, b, Z.shape[0], T.shape[0], owner)
    sigma = published.sigma
    if estimator not in ("extrapolation", "deconvolution", "auto"):
        raise ValueError(
            f"The 'estimator' parameter of {owner} must be 'extrapolation', "
            f"'deconvolution' or 'auto'. Got {estimator!r}."
        )
    space, why_not = _deconvolution_space(Z, M, sigma, a_arr, owner)
    noise_ratio = float("nan") if space is None else space.noise_ratio
    if estimator == "deconvolution" and space is None:
        raise DataMismatchError(why_not)
    deconvolve = space is not None and (
        estimator == "deconvolution"
        or (estimator == "auto" and noise_ratio <= _AUTO_NOISE_RATIO))
    if estimator != "extrapolation":
        D = check_int(n_draws, "n_draws", owner, 2)
        rng = check_random_state(random_state)
    if deconvolve:
        extrapolate = False
    W = T @ M
    ot = import_ot()
    raw = ot.dist(Z, W, metric="sqeuclidean")
    if plan is None:
        plan = solve_transport(raw - ell * sigma**2, a_arr, b_arr, method=method, reg=reg,
                               max_iter=max_iter)
    u_in = _column_terms(plan, Z, W, sigma, ell)

    # squared distances over the columns of each quarter (l mod 4), summed for any union
    q4 = np.arange(ell) % _SIMEX_FOLDS
    quarters = q4[None, :] == np.arange(_SIMEX_FOLDS)[:, None]
    quarter_dist = ([ot.dist(Z[:, cols], W[:, cols], metric="sqeuclidean")
                     for cols in quarters] if ell >= _SIMEX_FOLDS else [])

    def partial_cost(cols: np.ndarray) -> FloatArray:
        """Sum over the columns ``cols`` of the squared coordinate differences."""
        if cols.all():
            return raw
        if quarter_dist:
            used = [bool(cols[quarters[q]].all()) for q in range(_SIMEX_FOLDS)]
            if cols.sum() == sum(int(quarters[q].sum()) for q in range(_SIMEX_FOLDS)
                                 if used[q]):
                return sum((quarter_dist[q] for q in range(_SIMEX_FOLDS) if used[q]),
                           start=np.zeros_like(raw))
        return ot.dist(Z[:, cols], W[:, cols], metric="sqeuclidean")

    def plans_on(train: np.ndarray) -> FloatArray:
        """Column terms (all columns) of the plans solved on each row of ``train``."""
        terms = np.empty(train.shape, dtype=float)
        for k, cols in enumerate(train):
            n_train = int(cols.sum())
            part = partial_cost(cols)
            cost_k = (part - n_train * sigma**2) * (ell / n_train)
            plan_k = solve_transport(cost_k, a_arr, b_arr, method=method, reg=reg,
                                     max_iter=max_iter)
            terms[k] = _column_terms(plan_k, Z, W, sigma, ell)
        return terms

    # the columns are i.i.d., so any fixed split is valid
    folds = np.arange(ell) % K
    fold_sets = folds[None, :] == np.arange(K)[:, None]  # (K, ell): fold k's columns
    cross_terms = plans_on(~fold_sets)
    u_out = cross_terms[folds, np.arange(ell)]  # each column under the plan that left it out
    r = K / (K - 1.0)
    combined = (r * u_in + u_out) / (1.0 + r)
    alpha = 1.0 - lev
    w_in, w_out = float(u_in.mean()), float(u_out.mean())
    crossfit = float(combined.mean())
    est_terms = combined
    estimate, excess = crossfit, float((w_out - w_in) / (1.0 + r))
    kind = "none"
    levels = np.array([1.0])
    curve_in, curve_out = np.array([w_in]), np.array([np.nan])
    curve_terms = np.stack([u_in[None, :] / ell, np.full((1, ell), np.nan)])
    if extrapolate and ell >= _SIMEX_FOLDS:
        # noise levels: plans on 3/4, 1/2 and 1/4 of the columns (plus all of them)
        sets4 = quarters
        sets2 = (q4 % 2)[None, :] == np.arange(2)[:, None]
        designs = [~sets4, sets2, sets4]
        terms = [cross_terms if K == _SIMEX_FOLDS else plans_on(~sets4),
                 plans_on(sets2), plans_on(sets4)]
        q_in, q_out = [u_in / ell], [np.full(ell, np.nan)]
        for train, t_k in zip(designs, terms, strict=True):
            n_tr = train.sum(axis=1, keepdims=True)
            n_ho = ell - n_tr
            q_in.append(np.sum(np.where(train, t_k / n_tr, 0.0), axis=0) / train.shape[0])
            q_out.append(np.sum(np.where(train, 0.0, t_k / np.maximum(n_ho, 1)), axis=0)
                         / train.shape[0])
            levels = np.append(levels, np.mean(ell / n_tr))
        qi, qo = np.asarray(q_in), np.asarray(q_out)
        curve_in, curve_out = qi.sum(axis=1), qo.sum(axis=1)
        curve_terms = np.stack([qi, qo])
        params, grad = fit_hyperbolic(levels, curve_in, curve_out)
        if np.all(np.isfinite(params)) and np.all(np.isfinite(grad)):
            d_in, d_out = np.split(grad, 2)
            # delta method over the columns: W^ ~ const + sum_l psi_l / ell
            est_terms = ell * (d_in @ qi + d_out[1:] @ qo[1:])
            estimate = float(params[0])
            excess = float(hyperbolic_curves(params, np.array([1.0]))[1][0] - estimate)
            kind = "hyperbolic"
    # remove the pure-noise row term outside the row space of M (n_features < ell): it
    # enters every curve value, hence the estimate, with coefficient one, has mean zero,
    # and does not move any plan
    noise, noise_parts = _row_space_noise(Z, M, sigma, a_arr)
    estimate -= noise
    est_terms = est_terms - noise_parts
    std_error = float(est_terms.std(ddof=1) / np.sqrt(ell))
    n_components = 0
    if deconvolve:
        estimate, std_error, excess, n_components = _deconvolution_estimate(
            space, T, a_arr, b_arr, plan, D, rng, method, reg, max_iter)
        kind = "deconvolution"
    mean_terms, mean_noise = _mean_part_terms(Z, W, sigma, a_arr, b_arr)
    if noise_ratio > _AUTO_NOISE_RATIO:
        warnings.warn(
            f"{owner}: the variance of a source point's privacy noise is {noise_ratio:.2g} "
            "times the spread of the source points (noise_ratio), so the release cannot show "
            "the source's structure (its clusters, its shape) that sets W. On structured "
            "sources (clusters, a ring, heavy tails) the point estimate was then off by 15% "
            "to 150% in either direction (Gaussian sources: within 10%), while the bracket "
            "(lower, upper) kept its level: report the bracket, or publish with a larger "
            "eps.",
            TransportNoiseWarning,
            stacklevel=2,
        )
    return CostEstimate(
        estimate=estimate,
        std_error=std_error,
        lower=float("nan"),
        upper=float("nan"),
        level=lev,
        in_sample=w_in,
        held_out=w_out,
        plan_excess=excess,
        n_folds=K,
        in_terms=u_in,
        out_terms=u_out,
        crossfit=crossfit,
        extrapolation=kind,
        noise_levels=levels,
        curve_in=curve_in,
        curve_out=curve_out,
        curve_terms=curve_terms,
        row_noise=noise,
        row_noise_terms=noise_parts if noise != 0.0 else np.zeros(0),
        mean_terms=mean_terms,
        mean_noise=mean_noise,
        n_components=n_components,
        noise_ratio=noise_ratio,
    )._with_bracket(alpha)


class _DeconvolutionSpace(NamedTuple):
    """The release in the row space of the projection (see :func:`_deconvolution_space`)."""

    x_hat: FloatArray
    Sigma: FloatArray
    spread: float  # unbiased estimate of the source's spread sum_i a_i ||x_i - m||^2

    @property
    def noise_ratio(self) -> float:
        """``tr Sigma / spread`` (infinite when the spread is not positive)."""
        return float(np.trace(self.Sigma)) / self.spread if self.spread > 0 else float("inf")


def _deconvolution_space(
    Z: FloatArray, M: FloatArray, sigma: float, a: FloatArray, owner: str
) -> tuple[_DeconvolutionSpace | None, str]:
    r"""``(space, "")``, or ``(None, reason)`` when the deconvolution is not available.

    ``space.spread`` is :math:`\hat v = \sum_i a_i\lVert\hat x_i - \hat m\rVert^2 -
    \operatorname{tr}\Sigma\,(1 - \sum_i a_i^2)`, unbiased for the source's spread
    (weights normalised to one).
    """
    k, ell = M.shape
    space = row_space(Z, M, sigma)
    if space is None:
        return None, (
            f"{owner}: estimator='deconvolution' needs fewer source features than "
            f"projection columns and a projection of full rank (got n_features = {k}, "
            f"ell = {ell}); use estimator='extrapolation' or publish with a larger ell."
        )
    a_n = a / a.sum()
    n_eff = 1.0 / float(np.sum(a_n**2))
    if n_parameters(1, k) >= n_eff:
        return None, (
            f"{owner}: estimator='deconvolution' fits a Gaussian with a full covariance "
            f"to the {k} source features, which needs more than {n_parameters(1, k)} "
            f"(effective) source rows; got {n_eff:.4g}. Use estimator='extrapolation'."
        )
    x_hat, Sigma = space
    return _DeconvolutionSpace(x_hat, Sigma, _source_spread(x_hat, Sigma, a_n)), ""


def _source_spread(x_hat: FloatArray, Sigma: FloatArray, a_n: FloatArray) -> float:
    r"""Unbiased :math:`\hat v = \sum_i a_i\lVert\hat x_i - \hat m\rVert^2 -
    \operatorname{tr}\Sigma\,(1 - \sum_i a_i^2)` (``a_n`` sums to one).
    """
    return float(a_n @ np.sum((x_hat - a_n @ x_hat) ** 2, axis=1)
                 - np.trace(Sigma) * (1.0 - float(np.sum(a_n**2))))


def _deconvolution_estimate(
    space: _DeconvolutionSpace, T: FloatArray, a: FloatArray,
    b: FloatArray,
    plan: FloatArray, n_draws: int, rng: np.random.Generator, method: Method,
    reg: float | None, max_iter: int | None, prior: MixturePrior | None = None,
) -> tuple[float, float, float, int]:
    """Calibrated posterior-mean cost, its standard error, plan excess and components
    (the prior selected by AIC unless one is given).
    """
    x_hat, Sigma, spread = space
    mass = float(a.sum())
    a_n, b_n = a / mass, b / float(b.sum())
    if prior is None:
        prior = select_mixture(x_hat, a_n, Sigma, MAX_COMPONENTS, rng)
    draws = posterior_draws(x_hat, Sigma, prior, n_draws, rng)
    # unbiased mean part and spread of the source (the ensemble's first two moments)
    s2 = float(np.sum(a_n**2))
    m_hat, m_t = a_n @ x_hat, b_n @ T
    delta = m_hat - m_t
    mean_part = float(delta @ delta - np.trace(Sigma) * s2)
    T_c = T - m_t
    ot = import_ot()
    values = np.empty(n_draws)
    excess = np.empty(n_draws)
    for d in range(n_draws):
        centred = draws[d] - a_n @ draws[d]
        v_d = float(a_n @ np.sum(centred**2, axis=1))
        scale = np.sqrt(max(spread, 0.0) / v_d) if v_d > 0 else 0.0
        C_d = ot.dist(scale * centred, T_c, metric="sqeuclidean")
        plan_d = solve_transport(C_d, a, b, method=method, reg=reg, max_iter=max_iter)
        values[d] = mass * mean_part + float(np.sum(plan_d * C_d))
        excess[d] = float(np.sum((plan - plan_d) * C_d))
    estimate = float(values.mean())
    Sigma_m = Sigma * s2  # covariance of m_hat
    var_mean = float(4.0 * delta @ Sigma_m @ delta + 2.0 * np.sum(Sigma_m**2)) * mass**2
    std_error = float(np.sqrt(values.var(ddof=1) * (1.0 + 1.0 / n_draws) + var_mean))
    return estimate, std_error, float(excess.mean()), prior.n_components


def dpot(
    published: PublishedSource,
    Xt: FloatArray,
    *,
    a: FloatArray | None = None,
    b: FloatArray | None = None,
    method: Method = "emd",
    reg: float | None = None,
    max_iter: int | None = None,
    n_folds: int | None = 4,
    estimator: Estimator = "auto",
    random_state: RandomStateLike = None,
) -> DPOTResult:
    r"""Target side of DPOT: debiased cost, transport plan, :math:`\tilde W` and a usable cost.

    Steps 3-4 of Le Tien, Habrard and Sebban (2019), Algorithm 1, on a
    :class:`PublishedSource`, followed by :func:`estimate_transport_cost`, which
    corrects the downward bias of :math:`\tilde W` and brackets the transport cost.
    Cost: 11 POT solves with the default ``n_folds=4`` (``ot.emd`` is roughly O(n^3) in
    practice) plus O(n m l); ``n_folds=None`` solves once and skips the estimate.

    Parameters
    ----------
    published : PublishedSource
        What the source party published.
    Xt : ndarray of shape (n_target, n_features)
        Target rows.
    a, b : ndarray of shape (n_source,) / (n_target,), default=None
        Marginal weights with equal sums, as POT's ``a`` and ``b``; None means uniform.
        ``a`` weighs the published rows in their published order and must be public
        (the mechanism does not protect it).
    method : {"emd", "sinkhorn"}, default="emd"
        Exact or entropic transport.
    reg : float or None, default=None
        Entropic regularisation in units of the cost (``"sinkhorn"`` only).
    max_iter : int or None, default=None
        Iteration cap of the solver (see :func:`solve_transport`).
    n_folds : int or None, default=4
        Column folds of the cost estimate; None skips it. No estimate when ``ell < 2``;
        no extrapolation to zero noise when ``ell < 4``.
    estimator : {"auto", "extrapolation", "deconvolution"}, default="auto"
        How the cost estimate is obtained (see :func:`estimate_transport_cost`).
    random_state : int, SeedSequence, Generator or None, default=None
        Source of the deconvolution's randomness (posterior draws); None draws fresh
        OS entropy.

    Returns
    -------
    DPOTResult
        ``plan``, ``cost``, ``w_tilde``, ``privacy`` and ``estimate``.

    Raises
    ------
    DataMismatchError
        If ``Xt`` does not have the source's number of features.
    WeightsError
        If ``a`` or ``b`` is malformed or their sums differ.
    TypeError
        If ``published`` is not a :class:`PublishedSource`.

    Warns
    -----
    TransportConvergenceWarning
        If a fold plan of the cost estimate fails (entropic plans with a ``reg`` too small
        for the noisier fold costs); ``estimate`` is then None.

    See Also
    --------
    DPOT : the same as an estimator with fitted attributes.
    estimate_transport_cost : the bias-corrected cost and its bracket.

    Notes
    -----
    .. math:: \tilde\gamma_0 = \arg\min_{\gamma\in\Pi(a,b)}\langle\gamma,\tilde C\rangle,
              \qquad \tilde W = \langle \tilde\gamma_0, \tilde C\rangle .

    Subtracting :math:`\ell\sigma^2` from every entry changes
    :math:`\langle\gamma,\tilde C\rangle` by the same constant for every coupling, so the
    exact plan is the plan for the uncorrected noisy cost. :math:`\tilde W` is the
    minimum over couplings of an unbiased noisy cost, so
    :math:`E\tilde W \le W`: at moderate privacy it can be far below W, even negative.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs, Xt = rng.normal(size=(30, 5)), rng.normal(1.0, 1.0, size=(40, 5))
    >>> pub = DPOTSource(eps=5.0, delta=1e-3, ell=50, random_state=0).publish(Xs)
    >>> res = dpot(pub, Xt, random_state=0)
    >>> res.plan.shape
    (30, 40)
    >>> b = np.r_[np.full(20, 1.5), np.full(20, 0.5)] / 40  # POT-style target weights
    >>> bool(np.allclose(dpot(pub, Xt, b=b, n_folds=None).plan.sum(axis=0), b))
    True
    """
    if not isinstance(published, PublishedSource):
        raise TypeError(
            f"dpot: 'published' must be a PublishedSource (from DPOTSource.publish). "
            f"Got {type(published).__name__}."
        )
    C = debiased_cost(published.rows, Xt, published.projection, published.sigma)
    a_arr, b_arr = _check_marginals(a, b, C.shape[0], C.shape[1], "dpot")
    plan = solve_transport(C, a_arr, b_arr, method=method, reg=reg, max_iter=max_iter)
    estimate = None
    if n_folds is not None and published.ell >= 2:
        try:
            estimate = estimate_transport_cost(
                published, Xt, a=a_arr, b=b_arr, n_folds=n_folds, method=method, reg=reg,
                max_iter=max_iter, plan=plan, estimator=estimator,
                random_state=random_state)
        except TransportConvergenceError as exc:
            warnings.warn(
                f"dpot: the cost estimate was skipped (estimate=None) because a fold plan "
                f"failed: {exc}",
                TransportConvergenceWarning,
                stacklevel=2,
            )
    return DPOTResult(plan=plan, cost=C, w_tilde=float(np.sum(plan * C)),
                      privacy=published.privacy, estimate=estimate)


def dpot_minibatch(
    published: PublishedMinibatches,
    Xt: FloatArray,
    *,
    target_batch_size: int | None = None,
    method: Method = "emd",
    reg: float | None = None,
    random_state: RandomStateLike = None,
) -> MinibatchDPOTResult:
    r"""Minibatch DPOT: pair each published batch with a random target batch and average.

    The estimate targets the minibatch transport cost (the mean of batch-to-batch
    transport costs), not the full-data :math:`W`; use it when the budget only allows
    Poisson-sampled publications. Cost: one POT solve per batch.

    Parameters
    ----------
    published : PublishedMinibatches
        From :meth:`DPOTSource.publish_minibatches`.
    Xt : ndarray of shape (n_target, n_features)
        Target rows.
    target_batch_size : int or None, default=None
        Size of each target batch, drawn without replacement; None uses the size of the
        source batch it is paired with (capped at ``n_target``).
    method : {"emd", "sinkhorn"}, default="emd"
        Exact or entropic transport.
    reg : float or None, default=None
        Entropic regularisation (``"sinkhorn"`` only).
    random_state : int, SeedSequence, Generator or None, default=None
        Randomness of the target batches (not a privacy mechanism).

    Returns
    -------
    MinibatchDPOTResult
        Mean and per-batch :math:`\tilde W`, with the privacy of the whole sequence.

    Raises
    ------
    DataMismatchError
        If ``Xt`` does not match the source's feature count, or every batch is empty.
    TypeError
        If ``published`` is not a :class:`PublishedMinibatches`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs, Xt = rng.normal(size=(200, 5)), rng.normal(1.0, 1.0, size=(200, 5))
    >>> src = DPOTSource(eps=5.0, delta=1e-3, ell=20, random_state=1)
    >>> pubs = src.publish_minibatches(Xs, batch_size=20, n_batches=5)
    >>> res = dpot_minibatch(pubs, Xt, random_state=2)
    >>> res.batch_w_tilde.shape[0] <= 5
    True
    """
    owner = "dpot_minibatch"
    if not isinstance(published, PublishedMinibatches):
        raise TypeError(
            f"{owner}: 'published' must be a PublishedMinibatches (from "
            f"DPOTSource.publish_minibatches); use dpot for a PublishedSource. Got "
            f"{type(published).__name__}."
        )
    T = _as_matrix(Xt, "Xt", owner)
    rng = check_random_state(random_state)
    values = []
    n_empty = 0
    for batch in published.batches:
        if batch.n_samples == 0:
            n_empty += 1
            continue
        size = batch.n_samples if target_batch_size is None else check_int(
            target_batch_size, "target_batch_size", owner, 1)
        idx = rng.choice(T.shape[0], size=min(size, T.shape[0]), replace=False)
        values.append(dpot(batch, T[idx], method=method, reg=reg, n_folds=None).w_tilde)
    if not values:
        raise DataMismatchError(f"{owner}: every published batch is empty.")
    vals = np.asarray(values)
    return MinibatchDPOTResult(w_tilde=float(vals.mean()), batch_w_tilde=vals,
                               privacy=published.privacy,
                               diagnostics={"n_empty_batches": n_empty})


# ----------------------------------------------------------------------------------------
# Classes
# ----------------------------------------------------------------------------------------
class DPOTSource:
    r"""Source party of DPOT: calibrates, projects, adds noise and publishes.

    ``publish(Xs)`` returns a :class:`PublishedSource` holding only
    :math:`(M, X_s M + \Delta)`, :math:`\sigma` and the privacy statement; the object
    keeps nothing about ``Xs``. Use it on the data owner's side, then send the
    publication to the target party (:class:`DPOT`). Cost O(n k l).

    Parameters
    ----------
    eps : float
        Privacy parameter :math:`\varepsilon > 0` of the publication (of the whole run for
        :meth:`publish_minibatches`).
    delta : float
        Privacy parameter :math:`\delta \in (0, 1/2)` (Theorem 2 needs
        :math:`\delta < 1/2`; larger values are refused for both relations).
    ell : int
        Projection dimension :math:`\ell \ge 1` (the cost estimate of :func:`dpot` needs
        :math:`\ell \ge 2`; a few dozen columns average out the projection error).
    neighbour : {"entry", "record"}, default="entry"
        ``"entry"``: neighbours differ in one entry of one row by at most 1 (Le Tien,
        Habrard and Sebban, 2019, Theorem 2; the feature scale matters: the bound is one *unit*
        of a feature).
        ``"record"``: one row, clipped to ``clip_norm``, is replaced by any other row;
        sensitivity :math:`2C\lVert M\rVert_2` and analytic Gaussian calibration.
    clip_norm : float or None, default=None
        Public bound :math:`C` on row norms, required for ``neighbour="record"``.
    random_state : int, SeedSequence, Generator or None, default=None
        Source of ``M`` and of the noise; None draws fresh OS entropy (use that for real
        releases). An int or a ``SeedSequence`` issues :class:`SeedReleaseWarning`:
        ``M`` is published, so a guessed seed is confirmed by regenerating ``M`` and
        then reveals the noise. A pickled source object drops the seed.

    See Also
    --------
    DPOT : the target party.
    privinfer.transport.calibration.theorem2_sigma : the ``"entry"`` calibration.

    Notes
    -----
    Le Tien, Habrard and Sebban (2019), Algorithm 1, steps 1-2:
    :math:`M\sim N(0,1/\ell)^{k\times\ell}`, :math:`\Delta\sim N(0,\sigma^2)^{n_s\times\ell}`,
    publish :math:`(M, X_sM+\Delta)`,
    with

    .. math:: \sigma = \frac{w\sqrt{2(\ln\frac1{2\delta}+\varepsilon)}}{\varepsilon}
              \ (\text{entry}),\qquad
              \sigma = \sigma_{\text{analytic}}(\varepsilon,\delta;\,2C\lVert M\rVert_2)
              \ (\text{record}).

    Examples
    --------
    >>> import numpy as np
    >>> Xs = np.random.default_rng(0).normal(size=(50, 8))
    >>> pub = DPOTSource(eps=2.0, delta=1e-5, ell=16, random_state=0).publish(Xs)
    >>> pub.rows.shape, round(pub.sigma, 3) > 0
    ((50, 16), True)
    """

    def __init__(
        self,
        eps: float,
        delta: float,
        ell: int,
        *,
        neighbour: NeighbourRelation = "entry",
        clip_norm: float | None = None,
        random_state: RandomStateLike = None,
    ) -> None:
        self.eps = eps
        self.delta = delta
        self.ell = ell
        self.neighbour = neighbour
        self.clip_norm = clip_norm
        self.random_state = random_state

    def __getstate__(self) -> dict[str, object]:
        # a seed must not travel with a shared object: it regenerates M and the noise
        state = self.__dict__.copy()
        state["random_state"] = None
        return state

    def _validated(self, owner: str) -> tuple[float, float, int, NeighbourRelation,
                                              float | None]:
        """The hyperparameters, checked; ``owner`` is the class named in the messages."""
        eps = check_in_interval(self.eps, "eps", owner, 0.0, np.inf, low_open=True,
                                high_open=True)
        delta = check_in_interval(self.delta, "delta", owner, 0.0, 0.5, low_open=True,
                                  high_open=True)
        ell = check_int(self.ell, "ell", owner, 1)
        rel = _check_relation(self.neighbour, owner)
        clip = None
        if rel == "record":
            if self.clip_norm is None:
                raise ValueError(
                    f"{owner}: neighbour='record' needs a public 'clip_norm' > 0. Got None."
                )
            clip = check_in_interval(self.clip_norm, "clip_norm", owner, 0.0, np.inf,
                                     low_open=True, high_open=True)
        return eps, delta, ell, rel, clip

    def _prepare(self, Xs: object, owner: str, rng: np.random.Generator
                 ) -> tuple[FloatArray, FloatArray, float, NeighbourRelation, float, float]:
        """Checked hyperparameters, (clipped) rows, ``M`` and the sensitivity; ``owner``
        is ``"Class.method"`` of the public call, whose class the messages name.
        """
        eps, delta, ell, rel, clip = self._validated(owner.split(".")[0])
        X = _as_matrix(Xs, "Xs", owner)
        M = draw_projection(X.shape[1], ell, random_state=rng)
        if rel == "record":
            norms = np.linalg.norm(X, axis=1, keepdims=True)
            scale = np.ones_like(norms)
            over = norms > clip
            scale[over] = clip / norms[over]  # rows inside the ball are left as they are
            X = X * scale
            sens = record_sensitivity(M, float(clip or 0.0))
        else:
            sens = max_row_norm(M)
        return X, M, sens, rel, eps, delta

    def publish(self, Xs: FloatArray) -> PublishedSource:
        r"""Publish :math:`(M, X_sM+\Delta)` with noise calibrated to ``(eps, delta)``.

        Parameters
        ----------
        Xs : ndarray of shape (n_source, n_features)
            The private source rows (not kept).

        Returns
        -------
        PublishedSource
            Projection, noisy rows, :math:`\sigma` and the privacy statement.

        Raises
        ------
        ValueError
            If a hyperparameter is out of range (``eps <= 0``, ``delta`` outside
            (0, 1/2), ``ell < 1``, missing ``clip_norm`` for ``"record"``), or the
            calibrated noise is zero (the rows would be published exactly).

        Warns
        -----
        SeedReleaseWarning
            If ``random_state`` is an int or a ``SeedSequence``.
        DataMismatchError
            If ``Xs`` is not a non-empty 2-D array.
        """
        return self._publish(Xs, f"{type(self).__name__}.publish")

    def _publish(self, Xs: FloatArray, owner: str) -> PublishedSource:
        """:meth:`publish` with its messages naming ``owner`` (``"Class.method"``), so
        that a class publishing through this one (DPDA's source) names itself.
        """
        rng_m, rng_noise = spawn_generators(self.random_state, 2)
        X, M, sens, rel, eps, delta = self._prepare(Xs, owner, rng_m)
        warn_if_seeded(self.random_state, owner)
        if rel == "entry":
            sigma = theorem2_sigma(eps, delta, sens)
            mech = ("JL projection + Gaussian noise, Theorem 2 calibration "
                    "(Le Tien, Habrard and Sebban, 2019)")
        else:
            sigma = analytic_gaussian_sigma(eps, delta, sens)
            mech = "clipped rows, JL projection + Gaussian noise, analytic Gaussian calibration"
        _check_sigma(sigma, sens, owner)
        rows = publish_rows(X, M, sigma, random_state=rng_noise)
        stmt = PrivacyStatement(eps=eps, delta=delta, neighbour=rel, mechanism=mech,
                                sigma=sigma, sensitivity=sens)
        return PublishedSource(projection=M, rows=rows, sigma=sigma, privacy=stmt)

    def publish_minibatches(
        self, Xs: FloatArray, *, batch_size: float, n_batches: int
    ) -> PublishedMinibatches:
        r"""Publish ``n_batches`` Poisson-sampled minibatches within the total budget.

        Every row enters each batch independently with probability
        :math:`q = \text{batch\_size}/n_s`; the kept rows are shuffled, projected with one
        shared :math:`M` and noised. :math:`\sigma` is the smallest noise (found by root
        finding on :func:`~privinfer.transport.accounting.minibatch_privacy`) for which
        the whole sequence is ``(eps, delta)``-DP under ``dp_accounting``'s PLD
        accountant.

        Parameters
        ----------
        Xs : ndarray of shape (n_source, n_features)
            The private source rows (not kept).
        batch_size : float
            Expected batch size :math:`q n_s`, in (0, n_source].
        n_batches : int
            Number of publications :math:`T \ge 1`.

        Returns
        -------
        PublishedMinibatches
            The batches and the statement for the whole run.

        Raises
        ------
        ValueError
            If a hyperparameter is out of range.
        """
        owner = f"{type(self).__name__}.publish_minibatches"
        rng_m, rng_sample = spawn_generators(self.random_state, 2)
        X, M, sens, rel, eps, delta = self._prepare(Xs, owner, rng_m)
        warn_if_seeded(self.random_state, owner)
        n = X.shape[0]
        q = check_in_interval(batch_size, "batch_size", owner, 0.0, float(n),
                              low_open=True) / n
        steps = check_int(n_batches, "n_batches", owner, 1)
        nm = _calibrate_noise_multiplier(eps, delta, q, steps)
        sigma = nm * sens
        _check_sigma(sigma, sens, owner)
        batches = []
        for _ in range(steps):
            keep = np.flatnonzero(rng_sample.random(n) < q)
            rng_sample.shuffle(keep)
            rows = publish_rows(X[keep], M, sigma, rng_sample) if keep.size else np.empty(
                (0, M.shape[1]))
            batches.append((rows, keep.size))
        stmt = PrivacyStatement(
            eps=minibatch_privacy(nm, q, steps, delta), delta=delta, neighbour=rel,
            mechanism=(f"{steps} Poisson-sampled (q={q:.4g}) JL + Gaussian publications, "
                       "PLD accounting (dp_accounting), membership treated as public"),
            sigma=sigma, sensitivity=sens,
        )
        pubs = tuple(PublishedSource(projection=M, rows=r, sigma=sigma, privacy=stmt)
                     for r, _ in batches)
        return PublishedMinibatches(batches=pubs, sampling_probability=q, privacy=stmt)


def _check_sigma(sigma: float, sensitivity: float, owner: str) -> None:
    """Refuse a calibration that publishes the rows without noise."""
    if not (np.isfinite(sigma) and sigma > 0.0) or sigma < 1e-12 * sensitivity:
        raise ValueError(
            f"{owner}: the calibrated noise is sigma = {sigma!r} (sensitivity "
            f"{sensitivity:.4g}); the rows would be published without protection. Lower "
            "delta or eps."
        )


def _calibrate_noise_multiplier(eps: float, delta: float, q: float, steps: int) -> float:
    """Smallest noise multiplier whose run is (eps, delta)-DP (PLD from dp_accounting).

    Bracket: one subsampled step alone is the Gaussian at ``delta / q`` (lower bound);
    ``steps`` unsampled steps are one Gaussian with ``nm / sqrt(steps)`` (upper bound).
    """
    from privinfer.transport.calibration import _import_dp_accounting

    dpa = _import_dp_accounting()
    lo = float(dpa.get_sigma_gaussian(eps, min(delta / q, 0.5)))
    hi = float(np.sqrt(steps) * dpa.get_sigma_gaussian(eps, delta)) * 1.01
    if q >= 1.0:
        lo = hi / 1.02

    def gap(log_nm: float) -> float:
        return minibatch_privacy(float(np.exp(log_nm)), q, steps, delta,
                                 value_discretization_interval=1e-3) - eps

    if gap(np.log(lo)) >= 0:
        log_nm = float(np.log(lo)) if gap(np.log(hi)) >= 0 else brentq(
            gap, np.log(lo), np.log(hi), xtol=2e-3)
    else:  # pragma: no cover - lo is a lower bound, kept for safety
        log_nm = float(np.log(lo))
    nm = float(np.exp(log_nm))
    # the pessimistic fine-grid epsilon must be within budget
    while minibatch_privacy(nm, q, steps, delta) > eps:
        nm *= 1.005
    return nm


class DPOT:
    r"""Target party of DPOT: fits the private plan and a usable transport cost.

    ``fit(published, Xt)`` builds the debiased cost between the published source rows
    and the projected target rows, solves OT with POT, and estimates the transport cost
    with a bias correction and a bracket (:func:`estimate_transport_cost`). Use it when
    the source has published through :class:`DPOTSource`. Cost: 11 POT solves with the
    default ``n_folds=4`` (one with ``n_folds=None``).

    Parameters
    ----------
    method : {"emd", "sinkhorn"}, default="emd"
        Exact (``ot.emd``) or entropic (``ot.sinkhorn``) transport.
    reg : float or None, default=None
        Entropic regularisation in units of the cost (``"sinkhorn"`` only).
    max_iter : int or None, default=None
        Solver iteration cap (see :func:`solve_transport`).
    n_folds : int or None, default=4
        Column folds of the cost estimate; None skips it (one solve).
    estimator : {"auto", "extrapolation", "deconvolution"}, default="auto"
        How the cost estimate is obtained (see :func:`estimate_transport_cost`).
    random_state : int, SeedSequence, Generator or None, default=None
        Source of the deconvolution's randomness; None draws fresh OS entropy.

    Attributes
    ----------
    plan_ : ndarray of shape (n_source, n_target)
        The private coupling :math:`\tilde\gamma_0`.
    cost_ : ndarray of shape (n_source, n_target)
        The debiased cost :math:`\tilde C`.
    w_tilde_ : float
        The paper's private transport cost :math:`\tilde W` (biased downward).
    estimate_ : CostEstimate or None
        The bias-corrected cost, its standard error and bracket.
    privacy_ : PrivacyStatement
        The guarantee of the publication.
    result_ : DPOTResult
        All of the above as one frozen record.

    See Also
    --------
    dpot : the functional form.
    DPOTSource : the source party.
    estimate_transport_cost : the cost estimate and its derivation.

    Notes
    -----
    Le Tien, Habrard and Sebban (2019), Algorithm 1, steps 3-4:
    :math:`\tilde C = c(X_sM+\Delta, X_tM) - \ell\sigma^2`, then
    :math:`\tilde\gamma_0 = \arg\min_{\gamma\in\Pi}\langle\gamma,\tilde C\rangle`.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs, Xt = rng.normal(size=(40, 6)), rng.normal(2.0, 1.0, size=(40, 6))
    >>> pub = DPOTSource(eps=5.0, delta=1e-3, ell=30, random_state=0).publish(Xs)
    >>> est = DPOT(random_state=0).fit(pub, Xt)
    >>> est.plan_.shape
    (40, 40)
    >>> lo, hi = est.estimate_.conf_int()
    >>> bool(lo <= est.estimate_.estimate <= hi)
    True
    """

    def __init__(
        self,
        *,
        method: Method = "emd",
        reg: float | None = None,
        max_iter: int | None = None,
        n_folds: int | None = 4,
        estimator: Estimator = "auto",
        random_state: RandomStateLike = None,
    ) -> None:
        self.method = method
        self.reg = reg
        self.max_iter = max_iter
        self.n_folds = n_folds
        self.estimator = estimator
        self.random_state = random_state

    def fit(
        self,
        published: PublishedSource,
        Xt: FloatArray,
        *,
        a: FloatArray | None = None,
        b: FloatArray | None = None,
    ) -> DPOT:
        """Fit the private plan and the cost estimate; returns ``self``.

        Parameters
        ----------
        published : PublishedSource
            The source party's publication.
        Xt : ndarray of shape (n_target, n_features)
            Target rows.
        a, b : ndarray of shape (n_source,) / (n_target,), default=None
            Marginal weights with equal sums, as POT's ``a`` and ``b`` (``a`` in the
            published row order, public); None means uniform.

        Returns
        -------
        DPOT
            The fitted estimator.
        """
        res = dpot(published, Xt, a=a, b=b, method=self.method, reg=self.reg,
                   max_iter=self.max_iter, n_folds=self.n_folds, estimator=self.estimator,
                   random_state=self.random_state)
        self.result_ = res
        self.plan_ = res.plan
        self.cost_ = res.cost
        self.w_tilde_ = res.w_tilde
        self.estimate_ = res.estimate
        self.privacy_ = res.privacy
        return self

    def summary(self) -> SummaryText:
        """Short text of the fitted result (see :meth:`DPOTResult.summary`)."""
        if not hasattr(self, "result_"):
            raise NotFittedError("DPOT.summary: call fit(published, Xt) first.")
        return self.result_.summary()
