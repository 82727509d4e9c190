r"""The cross-fitted private one-step template of the treatment-effect estimators.

Kormos and van der Vaart (2026), "Private rate-double-robust inference"
(arXiv:2606.20427), sec. 3-5. ``fit`` runs four stages, each handing the next a frozen
object:

1. **splits** (:mod:`privinfer.models._crossfit`): folds stratified by treatment, whole
   clusters when clustered; the reference sample
   (:func:`privinfer.inversion.reference_design`) and the series basis
   (:func:`~privinfer.models._nuisances.choose_basis`);
2. **nuisances** (:mod:`privinfer.models._suffstats`, :mod:`privinfer.models._nuisances`):
   per fold x arm sufficient statistics, deconvolved Gram matrices of the training folds
   (:class:`~privinfer.models._suffstats.FoldFit`), outcome regressions and Riesz
   representers, all through :math:`Q_X^{-1}`;
3. **scores** (:mod:`privinfer.models.scores`): the :math:`Q_X^{-1}`-transformed score of
   each held-out row, from the nuisances' values and reference expectations;
4. **aggregate**: the estimand's algebra (declared by the subclass), influence values
   :math:`\varphi_i` with ``SE = sd(phi)/sqrt(n)``, the median over repeated splits, and
   the diagnostics.

Nuisances: outcome regression :math:`\mu(k, x) = \beta_k'\varphi(w, x)` per treatment
level, :math:`\beta_k = G_k^{-1}c_k`, :math:`G_k = \frac1n\sum Q_X^{-1}[1\{d=k\}\varphi\varphi']`
(or a private kernel fit); Riesz representer of :math:`E\mu(k, X)`: automatic,
:math:`\rho_k(d, x) = 1\{d=k\}\theta_k'\varphi`, :math:`\theta_k = G_k^{-1}\frac1n\sum
Q_X^{-1}[\varphi]`, or :math:`1\{d=k\}/\pi_k(x)` from a private logit with clipping.

Sampling weights :math:`\omega_i` (public, normalised to mean one) target the weighted
population :math:`E[\omega s]/E[\omega]`; because :math:`\omega` is public,
:math:`Q_X^{-1}[\omega s] = \omega Q_X^{-1}[s]` row by row, so the weights multiply the
transformed scores and enter every Gram matrix and moment of the nuisance fits as public
row weights. Public clusters keep whole clusters within folds and make the covariance and
bootstrap cluster-robust.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from privinfer._frames import MODEL_ARRAY_HINT, as_pandas, frame_from_arrays
from privinfer._threads import blas_threads, small_matrix_blas
from privinfer._typing import ArrayLike, FloatArray, IntArray, RandomStateLike
from privinfer._validation import spawn_generators
from privinfer.covariance import warn_few_clusters
from privinfer.exceptions import (
    DataMismatchError,
    NuisanceNoiseWarning,
    ReferenceAccuracyWarning,
    RegularizationBiasWarning,
)
from privinfer.formula import parse_treatment_formula
from privinfer.inversion import ReferenceDesign, ReferenceMoments, reference_design
from privinfer.mechanisms.alpha_identity import AlphaIdentity
from privinfer.models import scores
from privinfer.models._backend import (
    PandasRows,
    RowSource,
    dask_treatment_data,
    is_dask_frame,
)
from privinfer.models._crossfit import (
    fold_spread_se,
    median_aggregate,
    training_folds,
)
from privinfer.models._diagnose import diagnose, warn_few_weighted_rows, weights_n_eff_fact
from privinfer.models._foldboot import (
    MAX_EFFECTIVE_N,
    N_BLOCKS,
    N_DRAWS,
    BootstrapSE,
    bootstrap_se,
    collapse,
    dominating_cov,
    series_estimates,
)
from privinfer.models._inputs import (
    TreatmentData,
    TreatmentOptions,
    check_arm_sizes,
    check_frame,
    mechanism_record,
    release_guarantees,
    resolve_mechanism,
    treatment_data,
    with_options_signature,
)
from privinfer.models._nuisances import (
    KernelOutcome,
    PropensityRiesz,
    SeriesFits,
    SeriesOutcome,
    SeriesRiesz,
    arm_caps,
    choose_basis,
    fit_series,
    kernel_outcome,
    noiseless_functions,
    propensity_riesz,
    series_outcome,
    series_riesz,
)
from privinfer.models._reduce import ComponentReducer, LazyInfluence
from privinfer.models._splitfit import (
    FoldNuisances,
    FoldScores,
    HeldOutPass,
    SplitFit,
    check_fixed_ridge,
    describe_fits,
    floor_records,
    indefinite,
    reference_riesz_moments,
    reference_share,
)
from privinfer.models._suffstats import (
    FoldFit,
    FoldStats,
    check_fold_counts,
    held_out_fits,
    sum_stats,
)
from privinfer.models.scores import ReferenceTerms
from privinfer.nuisance import regularize
from privinfer.nuisance.basis import PolynomialBasis
from privinfer.nuisance.kernel import KernelReference
from privinfer.nuisance.regularize import bias_aware_critical_value
from privinfer.nuisance.sieve import SieveBasis
from privinfer.results import PrivateResults, ResultsRecord, influence_cov

__all__ = ["FoldNuisances", "FoldScores", "HeldOutPass", "SplitFit", "TreatmentModel"]

#: Reference (quasi-Monte Carlo) error targeted, as a share of the standard error: the
#: reference sample grows (x4, twice at most) while the error exceeds it and a refit is
#: cheap (at most _REF_REFIT_ROWS rows) ...
_REF_TARGET_SHARE = 0.01
_REF_REFIT_ROWS = 200_000
_REF_MAX_POINTS = 131_072
#: ... and from _REF_EARLY_ROWS rows the first fit already takes 4 x reference_size
#: points: the share grows like sqrt(n) (the standard error shrinks, the reference error
#: does not), and at 8192 points it was 0.8% to 4.4% of the SE from 5e4 to 2e5 rows
#: (``benchmarks/speed_adaptive.py``'s data, with and without public covariates), so the
#: loop above refitted: a second pass over the rows for what 0.3 s of reference work buys
_REF_EARLY_ROWS = 50_000
#: ... and a ReferenceAccuracyWarning fires above this share.
_REF_WARN_SHARE = 0.05
#: The interval is widened when the estimated regularisation bias exceeds this share of the
#: standard error (below it the bias-aware critical value is under 1.99: 1.5% wider) ...
_BIAS_NOTE_SHARE = 0.25
#: A NuisanceNoiseWarning fires when the bootstrap SE exceeds the influence one by this
#: factor; the message names the n at which the factor would fall to the target.
_NOISE_WARN_RATIO = 1.5
#: Standard errors this close (relatively) to the influence-function ones are reported as
#: those: the dominating covariance reproduces the influence one only up to round-off.
_SAME_SE_RTOL = 1e-9
#: Below alpha = 1 and under this effective sample size n * alpha^2 a NuisanceNoiseWarning
#: names the n needed. Measured at n = 4000 (``benchmarks/validate.py``, 100 replications
#: per cell): at n * alpha^2 = 1000 (alpha = 0.5) the limited-overlap design missed its
#: bands in three of four cells, the releases that erred reporting the small standard
#: errors; at 1440 (alpha = 0.6, 60 replications) it and the product-propensity design
#: passed all eight, and at 1960 (alpha = 0.7) all four. Tables of 16-48 replications had
#: not shown the miss at 1000. The line is drawn between 1000 and 1440.
_MIN_EFFECTIVE_N = 1200
_NOISE_TARGET_RATIO = 1.1
#: ... and a RegularizationBiasWarning fires above this share (the bias-aware interval is
#: then at least 1.3 times the usual one).
_BIAS_WARN_SHARE = 0.5
#: Bias/SE considered negligible when the warning states the effective sample size needed.
_BIAS_TARGET_SHARE = 0.15
#: The bias bound also asks how much the estimate moves when every fit's sieve cap
#: (:func:`~privinfer.models._nuisances.arm_caps`) is halved, refitting the nuisances
#: from the same statistics. Where the CV's choices sit below half the cap the move is
#: exactly zero; where it is not, the estimate rests on the finest structure the sample
#: affords at this alpha, and the regularisation bias there, which the looser comparison
#: fit cannot show (it is as shrunk as the chosen one in the directions the privatisation
#: noise swamps, and no richer than the cap), may be of the order of that move. Measured
#: at n = 4000 (12 designs, 8 releases a cell; validation page of the user guide): the
#: move exceeded 0.25 SE in every release of the held-out ``wiggle_confound`` at alpha
#: 0.7 and 0.5 (biases of 0.4 to 1.1 SE that no other diagnostic saw), in none at
#: alpha = 1, and in 0 to 38% of the releases of the eleven other designs at 0.7. At
#: alpha = 1 it matters at small n, where the caps are small: ``wiggle_confound`` at
#: n = 1000 (biases of 0.4 to 1 SE, unwarned) now warns in 93-100% of the fits; at
#: n = 4000 and 16000 the intervals of the hard designs move by at most 0.5%. A detector
#: more than an estimate: on ``wiggle_confound`` at 0.7 it is about half the bias. A
#: research switch of the validation suite (``--no-cap-sensitivity``).
_CAP_SENSITIVITY = True
#: Below alpha = 1 the bound also asks how much the estimate moves when the noise guard
#: of every fit (:func:`~privinfer.nuisance.regularize.noise_guard`) is multiplied by
#: ``_GUARD_SCALE``, refitting the nuisances from the same statistics. The guard is one
#: ridge per fit, sized by the noise of the whole Gram matrix, so it also shrinks small
#: but well-measured directions (the products of two private factors' rare cells), and
#: the comparison fit, floored at the same guard, cannot show that shrinkage's bias. On
#: the held-out ``factor_cells`` at n = 16000 and alpha = 0.5 the ATT was biased by 2 SE
#: with no fit warned; halving the guard moved the estimate by 1.7 SE. Its noise is the
#: larger of its spread over the held-out folds and, where the fold-block bootstrap runs,
#: the robust scale of its bootstrap draws (the fold spread alone was a half to a third
#: of its spread over releases).
_GUARD_SENSITIVITY = True
_GUARD_SCALE = 0.5
#: The halved-guard move counts this many times in the bound. The move is the bias of the
#: guard less the bias of half of it; with both fits shrunk by :math:`g/(\lambda_j + g)` in
#: direction ``j``, the one-step estimate's bias there is of order
#: :math:`(g/(\lambda_j + g))^2`, and the move is 3/4 of it where :math:`\lambda_j \gg g`,
#: 0.56 of it at :math:`\lambda_j = g` and less still below (Richardson's view of a
#: halving: the bias is the move over :math:`1 - b(g/2)/b(g)`). A research switch
#: (``benchmarks/validate.py --guard-extrapolation``); measured with 4/3 and 2
#: (``benchmarks/guard_extrapolation.py``, validation page): no cell changes its verdict,
#: since the bias itself fails the band where the guard bites, so it stays 1.
_GUARD_EXTRAPOLATION = 1.0
#: Per-fit switch between the two noise guards (a research option; None: off). With a
#: share :math:`t`, a split fitted under the common guard (one ridge per fit) whose
#: halved-guard move, less its spread over the held-out folds, exceeds :math:`t` influence
#: standard errors for some parameter is fitted again, bootstrap and bias bound included,
#: with one guard per eigen-direction
#: (:data:`~privinfer.nuisance.regularize.GUARD_DIRECTIONS`, the CV on that guard too).
#: The common guard reports where it biases (the move), and the per-direction guard, which
#: removes that bias on the products of rare factor cells, gives up elsewhere the variance
#: the common guard saves. The rule uses only what the common fit reports, before any
#: bootstrap, so a fit and its bootstrap pass decide alike. Measured on the validation
#: designs (``benchmarks/validate.py --guard-switch``; validation page).
_GUARD_SWITCH: float | None = None


#: Research option (not the default): read the fold-block bootstrap's draws studentized,
#: each draw's deviation from the draws' mean divided by how much its refitted nuisances
#: amplify the held-out noise relative to the estimate's own fits
#: (:meth:`TreatmentModel._block_se` on the same blocks). A draw whose CV took fits that
#: the estimate itself would report with a large standard error then counts by its
#: t-value, as in the bootstrap-t (Efron and Tibshirani, 1993, ch. 12). ``"record"``
#: reports the plain reading and keeps the others on the model (``_stud_record``: the
#: plain, the one-sided and the two-sided studentized bootstrap standard errors and the
#: influence one of the last split) for the validation study.
_STUDENTIZE: bool | str = False


def _studentized(out: BootstrapSE, P: int, one_sided: bool = True) -> BootstrapSE:
    """The draws with their first ``P`` columns studentized by the last ``P`` (ratios of
    the draws' block standard errors to the estimate's), the ratios dropped.

    ``one_sided``: a ratio below 1 counts as 1, so that no draw's deviation grows; only
    draws whose fits amplify the noise more than the estimate's own are shrunk.
    """
    assert out.draws is not None  # internal invariant: bootstrap_se keeps its draws
    arr = out.draws[:, :-P].copy()
    r = out.draws[:, -P:]
    r = np.where(np.isfinite(r) & (r > 0), r, 1.0)
    if one_sided:
        r = np.maximum(r, 1.0)
    centre = arr[:, :P].mean(axis=0)
    arr[:, :P] = centre + (arr[:, :P] - centre) / r
    cov = np.atleast_2d(np.cov(arr, rowvar=False, ddof=1))
    return BootstrapSE(arr.std(axis=0, ddof=1), out.n_draws, cov, arr, out.counts)


def _net_move(move: FloatArray, noise: FloatArray) -> FloatArray:
    r"""A move's size less its own noise, :math:`\sqrt{\max(0, \Delta^2 - s^2)}`."""
    return np.sqrt(np.maximum(move**2 - noise**2, 0.0))


class TreatmentModel:
    """Shared engine of :class:`PrivateATE`, :class:`PrivateATT`, :class:`PrivatePOM` and
    :class:`PrivateFunctional`; subclasses declare their estimand (names and algebra).
    """

    _name = "TreatmentModel"
    #: the estimand needs a binary treatment (the phrase names it in the error)
    _binary_reason: str | None = None
    #: fit the ATT's odds and its numerator score
    _odds = False
    #: public weights c_k(v) (n x L) and offsets c0(v) of a user functional; None otherwise
    C: FloatArray | None = None
    c0: FloatArray | None = None
    #: score components whose weighted means give the estimates (see models._reduce)
    _components = "pom"

    @with_options_signature
    def __init__(
        self,
        data: pd.DataFrame,
        *,
        outcome: str,
        treatment: str,
        covariates: str | list[str],
        mechanism: AlphaIdentity | None = None,
        formula: str | None = None,
        **options: Any,
    ) -> None:
        owner = self._name
        dask_input = is_dask_frame(data)
        if not dask_input:
            data = as_pandas(data, owner, array_hint=MODEL_ARRAY_HINT)
            check_frame(data, owner)
        described = data._meta if dask_input else data  # type: ignore[union-attr]
        self.mechanism = resolve_mechanism(described, mechanism, owner)
        opts = TreatmentOptions.from_keywords(owner, options)
        self.options = opts.validated(owner, self.mechanism.alpha)
        covariates = " + ".join(covariates) if isinstance(covariates, list) else covariates
        self.formula = formula or f"{outcome} ~ {treatment} | {covariates}"
        build = dask_treatment_data if dask_input else treatment_data
        built = build(
            data,
            self.mechanism,
            outcome=outcome,
            treatment=treatment,
            covariates=covariates,
            options=self.options,
            binary_reason=self._binary_reason,
            owner=owner,
        )
        self._rows: RowSource
        if isinstance(built, tuple):
            self.inputs, self._rows = built
        else:
            self.inputs, self._rows = built, PandasRows(data, built)
        n_eff = self.inputs.weights_n_eff  # None without weights
        if n_eff is not None:
            weights = str(self.inputs.weights_name)
            warn_few_weighted_rows(self._name, weights, n_eff, self.inputs.n_obs)
        #: whether the last fit's bias bound is set anywhere by the comparison fit's shift
        #: (not by the halved-cap move); see :meth:`_bias_bound`
        self._bound_from_shift = True
        #: the last fit's bias bound by source (columns ``shift``, ``cap``, ``guard``: each
        #: move less its noise, median over splits, before the note threshold), for studies
        #: of the bound (``benchmarks/validate.py`` records them)
        self._bound_parts: pd.DataFrame | None = None
        #: share of the last fit's splits fitted with one noise guard per direction
        self._guard_switched = 0.0

    @classmethod
    @with_options_signature
    def from_formula(
        cls,
        formula: str,
        data: pd.DataFrame,
        *,
        mechanism: AlphaIdentity | None = None,
        **options: Any,
    ) -> TreatmentModel:
        """Build the model from ``"y ~ d | x1 + x2 + C(g)"`` and released data.

        ``options`` are the keyword options of the class (see its docstring).
        """
        parsed = parse_treatment_formula(formula, cls._name)
        return cls(
            data,
            outcome=parsed.outcome,
            treatment=parsed.treatment,
            covariates=parsed.covariates,
            mechanism=mechanism,
            formula=formula,
            **options,
        )

    @classmethod
    def from_arrays(
        cls,
        y: ArrayLike,
        d: ArrayLike,
        x: ArrayLike,
        *,
        mechanism: AlphaIdentity,
        x_names: Sequence[str] | None = None,
        clusters: ArrayLike | None = None,
        weights: ArrayLike | None = None,
        **options: Any,
    ) -> TreatmentModel:
        """Build the model from numpy arrays (DoubleML's ``from_arrays``).

        The arrays become the columns ``y``, ``d``, ``x1 .. xk`` (``x`` for a 1-D array,
        or ``x_names``), ``cluster`` (``cluster1``, ``cluster2`` for two columns) and
        ``weights`` of a frame, and the covariates enter linearly as in
        ``"y ~ d | x1 + ... + xk"``: the mechanism's reference distributions are keyed
        by those names. Categorical covariates need :meth:`from_formula` (``C(g)``).

        Parameters
        ----------
        y : array-like of shape (n,)
            Outcome (public).
        d : array-like of shape (n,)
            Treatment (public).
        x : array-like of shape (n,) or (n, k)
            Covariates, released (private ones) or public.
        mechanism : AlphaIdentity
            The mechanism that released the private covariates.
        x_names : sequence of str, optional
            Covariate column names.
        clusters : array-like of shape (n,) or (n, 2), optional
            Public cluster labels (the ``cluster`` option).
        weights : array-like of shape (n,), optional
            Public sampling weights (the ``weights`` option).
        **options
            The other keyword options of the class.

        Returns
        -------
        TreatmentModel
            The model; call ``fit``.

        Raises
        ------
        DataMismatchError
            Arrays of different lengths or shapes, non-numeric arrays, or names that
            clash; ``cluster`` / ``weights`` given both as arrays and as column names.

        Warns
        -----
        UnverifiedReleaseWarning
            Arrays carry no release metadata, so nothing shows that they went through
            ``mechanism``.

        Examples
        --------
        >>> import warnings
        >>> import numpy as np, pandas as pd, privinfer as pi
        >>> rng = np.random.default_rng(0)
        >>> x = rng.uniform(-1, 1, (2000, 2))
        >>> d = (rng.random(2000) < 1 / (1 + np.exp(-x[:, 0]))).astype(int)
        >>> y = d + x.sum(axis=1) + rng.normal(size=2000)
        >>> mech = pi.AlphaIdentity(0.8, {"x1": pi.reference.Uniform(-1, 1)})
        >>> x_released = mech.privatize(pd.DataFrame({"x1": x[:, 0]}), shuffle=False,
        ...                             random_state=1)
        >>> X = np.column_stack([x_released["x1"], x[:, 1]])  # x1 released, x2 public
        >>> with warnings.catch_warnings():
        ...     warnings.simplefilter("ignore", pi.UnverifiedReleaseWarning)
        ...     res = pi.PrivateATE.from_arrays(y, d, X, mechanism=mech).fit(random_state=2)
        >>> bool(abs(res.params["ATE"] - 1) < 4 * res.bse["ATE"])
        True
        """
        owner = f"{cls._name}.from_arrays"
        for key in ("cluster", "weights"):
            if key in options and options[key] is not None:
                raise DataMismatchError(
                    f"{owner}: pass {key} as an array ({'clusters' if key == 'cluster' else key}"
                    "=...); there are no named columns to refer to."
                )
        names = {"x": [x_names] if isinstance(x_names, str) else x_names} if x_names else None
        frame, cols = frame_from_arrays(
            {"y": y, "d": d, "x": x, "cluster": clusters, "weights": weights},
            owner,
            names,
            labels=("cluster",),
        )
        if "cluster" in cols:
            cl = cols["cluster"]
            options["cluster"] = cl[0] if len(cl) == 1 else cl
        if "weights" in cols:
            options["weights"] = "weights"
        return cls(
            frame,
            outcome="y",
            treatment="d",
            covariates=cols["x"],
            mechanism=mechanism,
            **options,
        )

    # -- the validated inputs, by name -------------------------------------------------
    @property
    def spec(self) -> Any:
        """The covariate spec (private and public designs)."""
        return self.inputs.spec

    @property
    def U_priv(self) -> FloatArray:
        """Released private covariate design."""
        return self.inputs.U_priv

    @property
    def U_pub(self) -> FloatArray:
        """Public covariate design."""
        return self.inputs.U_pub

    @property
    def levels(self) -> list[Any]:
        """Treatment levels (``reference_level`` first)."""
        return self.inputs.levels

    # -- estimand (declared by subclasses) ---------------------------------------------
    def _param_names(self) -> list[str]:
        raise NotImplementedError

    def _combine(
        self, pom_phi: FloatArray, att_phi: FloatArray, wt: FloatArray
    ) -> tuple[FloatArray, FloatArray, FloatArray | None]:
        """Estimates, influence values and the contrast of arm means they are (or None)."""
        raise NotImplementedError

    def _from_means(self, m: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray | None]:
        """Estimates from the means of the score components.

        Also the contrast ``C`` of their influence values ``C' w (s - m)`` and the
        contrast of arm means that they are (or None).
        """
        raise NotImplementedError

    def _reference_errors(
        self,
        terms: tuple[ReferenceTerms, ...],
        contrast: Any,
        ref: ReferenceMoments,
        scale: float,
        names: list[str],
    ) -> dict[str, float]:
        """Quasi-Monte Carlo error of each estimate: a contrast of the arm scores' terms."""
        L = self.inputs.n_levels
        return {
            name: ref.error(
                lambda mm, oo, j=j: sum(
                    contrast[k, j] * (-scale * terms[k].value(mm, oo)) for k in range(L)
                )
            )
            for j, name in enumerate(names)
        }

    # -- fit ---------------------------------------------------------------------------
    def fit(
        self,
        random_state: RandomStateLike = None,
        *,
        folds: Any = None,
        progress: bool = False,
    ) -> PrivateResults:
        """Estimate by cross-fitting; returns a :class:`PrivateResults`.

        Parameters
        ----------
        random_state : int, SeedSequence, Generator or None, default=None
            Seeds the reference (Sobol) sample and the splits, from independent child
            streams; ``None`` draws fresh entropy.
        folds : array-like of shape (n,) or str, optional
            Fold label (0 .. n_folds-1) of every row, to reuse a split made elsewhere
            (e.g. by DoubleML), or the name of a public column of the data that holds
            them (pandas or Dask); only with ``n_rep=1``. With clusters, each cluster
            (first dimension) must lie within one fold. Without it the folds are drawn
            from ``random_state``; on a Dask frame without clusters each partition draws
            its own (stratified over the whole frame, but another split than pandas
            draws: give both backends a fold column to compare them).
        progress : bool, default=False
            Show a progress bar over repeated splits.

        Raises
        ------
        FoldError
            A fold lacks some treatment level, ``folds`` is malformed, or splits a cluster.
        ClusterError
            Fewer clusters than folds.
        """
        o, x, owner = self.options, self.inputs, self._name
        given = self._rows.given_folds(folds, o.n_folds, o.n_rep, self.mechanism, owner)
        if given is None:
            check_arm_sizes(x, o.n_folds, owner)
        self._rows.warn_empty_columns(owner)
        streams = spawn_generators(random_state, o.n_rep + 1)
        boot = self._bootstrap_on()
        size = o.reference_size
        if x.n_obs >= _REF_EARLY_ROWS and 4 * size <= _REF_MAX_POINTS:
            size *= 4
        # small dense products: one BLAS thread is fastest (see privinfer._threads)
        with blas_threads():
            while True:
                saved = copy.deepcopy(streams)
                # only the fit that is returned speaks: warnings of a fit that is repeated
                # (larger reference, or the bootstrap run) are dropped
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    res = self._fit_with_reference(size, streams, given, progress)
                share = reference_share(res)
                if (
                    share <= _REF_TARGET_SHARE
                    or x.n_obs > _REF_REFIT_ROWS
                    or 4 * size > _REF_MAX_POINTS
                ):
                    break
                size *= 4  # cheap here: more reference points, same splits
            if boot:  # the same fit (same streams) once more, now with its bootstrap
                res = self._fit_with_reference(size, saved, given, progress, bootstrap="se")
            elif self._shift_bootstrap_on() and res._bias_widened and self._bound_from_shift:
                # the interval would widen for the comparison fit's shift: measure its
                # noise by the bootstrap before believing it (same fit, same streams)
                res = self._fit_with_reference(size, saved, given, progress, bootstrap="shift")
            else:
                for w in caught:
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        if share > _REF_WARN_SHARE:
            warnings.warn(
                f"{owner}: the reference (quasi-Monte Carlo) error is {100 * share:.0f}% of the "
                f"standard error with {res.diagnostics.reference_points} reference points; "
                "increase reference_size, or choose a lighter-tailed reference (see the user "
                "guide page on choosing a reference).",
                ReferenceAccuracyWarning,
                stacklevel=2,
            )
        return res

    def _fit_with_reference(
        self,
        size: int,
        streams: list[np.random.Generator],
        given: IntArray | None,
        progress: bool,
        bootstrap: str | None = None,
    ) -> PrivateResults:
        """One full fit with a reference sample of ``size`` points.

        ``bootstrap``: ``"se"`` bootstraps the standard error and the noise of the
        regularisation shift, ``"shift"`` only the latter, ``None`` neither.
        """
        o, x, owner = self.options, self.inputs, self._name
        design = reference_design(self.mechanism, x.spec, size, streams[0])
        basis = choose_basis(
            o.degree,
            self._rows.basis_inputs(o.degree is None or o.degree == "cv"),
            design,
            self.mechanism.alpha,
            lambda: self._rows.draw_split(o.n_folds, streams[0]),
            o.n_folds,
            owner,
        )
        ref = design.moments(basis.private_only(design.U))
        reps = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for r in tqdm(range(o.n_rep), disable=not progress, desc=owner):
                split = given
                if split is None:
                    split = self._rows.draw_split(o.n_folds, streams[r + 1])
                rng = streams[r + 1] if bootstrap else None
                reps.append(
                    self._fit_split(split, basis, ref, design, rng, se_boot=bootstrap == "se")
                )
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return self._results(reps, basis, ref)

    def _results(
        self, reps: list[SplitFit], basis: PolynomialBasis | SieveBasis, ref: ReferenceMoments
    ) -> PrivateResults:
        """Median over splits, influence values of the median-closest split, diagnostics."""
        o, x = self.options, self.inputs
        names = self._param_names()
        est = np.array([r.est for r in reps])
        phis = [r.phi for r in reps]
        covs = [influence_cov(r.phi, x.clusters) if r.cov is None else r.cov for r in reps]
        ses = np.array([np.sqrt(np.diag(c)) for c in covs])
        ses_if = ses.copy()
        boots = [r.boot_cov for r in reps]
        total = None
        if all(b is not None for b in boots):
            # at least the bootstrap's and the influence variance of every combination
            total = [dominating_cov(b, c) for b, c in zip(boots, covs, strict=True)]
            ses = np.array([np.sqrt(np.diag(c)) for c in total])
        params, se = median_aggregate(est, ses)
        # influence values of the split closest to the median, rescaled to the aggregated SE
        # (an even number of splits has two, equally close up to rounding: the first of
        # them, not whichever the last bit favours on this machine)
        dist = np.abs(est - params).sum(axis=1)
        tol = 1e-9 * max(float(dist.max()), float(np.abs(params).sum()), np.finfo(float).tiny)
        pick = int(np.flatnonzero(dist <= dist.min() + tol)[0])
        base = ses_if[pick]
        factor = np.where(base > 0, se / np.where(base > 0, base, 1), 1.0)
        phi = phis[pick] * factor
        cov_override = None
        if total is not None:  # the bootstrap's covariance, rescaled to the aggregated SE
            s = np.sqrt(np.diag(total[pick]))
            g = np.where(s > 0, se / np.where(s > 0, s, 1.0), 1.0)
            cov_override = pd.DataFrame(
                g[:, None] * total[pick] * g[None, :], index=names, columns=names
            )
        elif reps[pick].cov is not None:  # reduced on Dask: the influence values are lazy
            cov_override = pd.DataFrame(
                factor[:, None] * covs[pick] * factor[None, :], index=names, columns=names
            )
        alpha = self.mechanism.alpha
        facts: tuple[tuple[str, str], ...] = (
            ("Cross-fit folds:", str(o.n_folds)),
            ("Repeated splits:", str(o.n_rep)),
            ("Series basis:", f"{basis.degree} ({basis.n_basis} fns)"),
            ("Riesz route:", o.riesz),
            ("n * alpha^2:", f"{x.n_obs * alpha**2:.0f}"),
            *reps[pick].regularisation,
            *self._guard_facts(reps),
            *self._variance_facts(ses, ses_if, names),
        )
        if x.cluster_names:
            facts = (*facts, ("Clusters:", " x ".join(x.cluster_names)))
            warn_few_clusters(
                self._name,
                self._rows.cluster_sizes()[: len(x.cluster_names)],
                x.n_obs,
                summed="influence values",
                worst_case="whole clusters are treated",
                stacklevel=4,
            )
        if x.weights_name is not None:
            facts = (*facts, ("Weights:", str(x.weights_name)))
            if x.weights_n_eff is not None:
                facts = (*facts, weights_n_eff_fact(x.weights_n_eff, x.n_obs))
        record = ResultsRecord(
            model=self._name,
            dep_variable=x.outcome,
            params=pd.Series(params, index=names),
            influence=phi,
            mechanism=mechanism_record(self.mechanism),
            guarantees=release_guarantees(self.mechanism),
            facts=facts,
            diagnostics=diagnose(self, reps, names, ref, est),
            rep_params=pd.DataFrame(est, columns=names),
            clusters=self._rows.record_clusters(),
            fingerprint=x.fingerprint,
            bias_bound=self._bias_bound(reps, names, se),
            cov_override=cov_override,
        )
        return PrivateResults(record)

    def _guard_facts(self, reps: list[SplitFit]) -> tuple[tuple[str, str], ...]:
        """The summary's line on the noise guard, where a split took the per-direction
        guard (``_GUARD_SWITCH`` or ``GUARD_DIRECTIONS``); records the share of such
        splits on the model (``_guard_switched``).
        """
        k = sum(r.guard_directions for r in reps)
        self._guard_switched = k / len(reps)
        if not k:
            return ()
        return (("Noise guard:", f"per direction ({k} of {len(reps)} splits)"),)

    def _variance_facts(
        self, ses: FloatArray, ses_if: FloatArray, names: list[str]
    ) -> tuple[tuple[str, str], ...]:
        """Summary line on the standard error; warns when the bootstrap dominates by half."""
        alpha, n = self.mechanism.alpha, self.inputs.n_obs
        if alpha < 1.0 and n * alpha**2 < _MIN_EFFECTIVE_N:
            warnings.warn(
                f"{self._name}: the effective sample size n * alpha^2 = {n * alpha**2:.0f} is "
                f"below {_MIN_EFFECTIVE_N}, where the validation study of the package found "
                "its intervals unreliable on hard designs (noisy deconvolved nuisance fits, "
                "bootstrap standard errors that swing from too small to far too large); "
                f"about n >= {_rows_for(_MIN_EFFECTIVE_N, alpha)} rows at alpha = "
                f"{alpha:g} would be needed. Read the interval as indicative.",
                NuisanceNoiseWarning,
                stacklevel=5,
            )
        # the dominating covariance equals the influence one when it dominates the
        # bootstrap's, up to the round-off of adding and subtracting the bootstrap's
        if np.allclose(ses, ses_if, rtol=_SAME_SE_RTOL, atol=0.0):
            return (("Std. errors:", "influence function"),)
        ratio = np.median(ses / np.where(ses_if > 0, ses_if, np.inf), axis=0)
        worst = int(np.argmax(ratio))
        if ratio[worst] > _NOISE_WARN_RATIO and n * alpha**2 >= _MIN_EFFECTIVE_N:
            eff = n * alpha**2
            need_eff = eff * (ratio[worst] ** 2 - 1.0) / (_NOISE_TARGET_RATIO**2 - 1.0)
            warnings.warn(
                f"{self._name}: the nuisance fits are noisy at n * alpha^2 = {eff:.0f}: the "
                f"fold-block bootstrap standard error of {names[worst]} is "
                f"{ratio[worst]:.2f} times the influence-function one, so the bootstrap one "
                "is reported. The deconvolved nuisance fits (and their private CV choices) "
                "vary more than a first-order expansion says; their extra variance falls "
                f"like 1/(n * alpha^2): about n >= {_rows_for(need_eff, alpha)} rows "
                f"at alpha = {alpha:g} (n * alpha^2 >= {need_eff:.0f}) would bring the two "
                f"within {100 * (_NOISE_TARGET_RATIO - 1):.0f}%.",
                NuisanceNoiseWarning,
                stacklevel=5,
            )
        return (("Std. errors:", f"bootstrap (x{float(ratio.max()):.2f} influence)"),)

    def _bias_bound(self, reps: list[SplitFit], names: list[str], se: FloatArray) -> pd.Series:
        r"""Estimated bound on the regularisation bias; warns when it is large.

        The shift :math:`\Delta = \hat\psi(\hat\lambda) - \hat\psi(\tilde\lambda)` is how
        much the estimate moves when both fits are loosened to the richest sieve and
        smallest ridge the CV cannot tell from the chosen ones
        (:func:`~privinfer.nuisance.regularize.loosest_plausible`), computed exactly from
        the held-out folds' statistics (the one-step estimate is bilinear in the two fits'
        coefficients). Regularisation bias decays with the ridge and the sieve, so the move
        estimates the bias that remains at the chosen fits. The bound is the larger of that
        the move under halved sieve caps (``_CAP_SENSITIVITY``) and, below ``alpha = 1``,
        the move under a halved noise guard (``_GUARD_SENSITIVITY``), each less its own
        noise: in the directions the privatisation noise swamps the comparison fit is as
        shrunk as the chosen one (it is floored at the same guard), and it is never richer
        than the cap. It is
        itself noisy (the loosened fits are): with :math:`s^2` its variance,
        :math:`B = \sqrt{\max(0, \Delta^2 - s^2)}`
        (median over repeated splits) estimates :math:`|\mathrm{bias}|` without the
        noise's upward bias, and feeds the bias-aware interval of
        :meth:`PrivateResults.conf_int`. :math:`s` is the larger of the shift's spread over
        the held-out folds and, where the fold-block bootstrap runs, the robust scale of
        its draws. The spread alone misses the comparison fits' own noise,
        which every held-out fold shares: at ``alpha = 1``, :math:`n = 1000` on a
        limited-overlap design it was half the shift's Monte Carlo spread, and 40% of
        unbiased fits were widened. So a fit with CV-chosen nuisances that would widen is
        bootstrapped first (up to :math:`n\alpha^2` = ``MAX_EFFECTIVE_N``); below
        ``alpha = 1`` the bootstrap of the standard error measures both.
        """
        def net(pairs: list[tuple[FloatArray, FloatArray]]) -> FloatArray:
            """Median over the splits of a move's size less its own noise."""
            return np.median(np.array([_net_move(m, s) for m, s in pairs]), axis=0)

        B = net([(r.shift, r.shift_se) for r in reps])
        # the move under halved sieve caps
        capped = [(r.cap_shift, r.cap_shift_se) for r in reps if r.cap_shift is not None]
        B_cap = net(capped) if capped else np.zeros_like(B)
        # the move under a halved noise guard
        guarded = [(r.guard_shift, r.guard_shift_se) for r in reps if r.guard_shift is not None]
        B_guard = _GUARD_EXTRAPOLATION * net(guarded) if guarded else np.zeros_like(B)
        self._bound_parts = pd.DataFrame(
            {"shift": B, "cap": B_cap, "guard": B_guard}, index=pd.Index(names)
        )
        from_cap = (B_cap > B) & (B_cap >= B_guard)
        from_guard = (B_guard > B) & ~from_cap
        B = np.maximum(np.maximum(B, B_cap), B_guard)
        ratio = np.where(se > 0, B / np.where(se > 0, se, 1.0), 0.0)
        B = np.where(ratio > _BIAS_NOTE_SHARE, B, 0.0)
        # the shift's bootstrap (see fit) can only lower the comparison fit's part of
        # the bound, so it cannot change a bound that the halved-cap move sets
        self._bound_from_shift = bool(np.any((B > 0) & ~from_cap & ~from_guard))
        worst = int(np.argmax(ratio))
        if ratio[worst] > _BIAS_WARN_SHARE:
            alpha, n = self.mechanism.alpha, self.inputs.n_obs
            need_eff = n * alpha**2 * (ratio[worst] / _BIAS_TARGET_SHARE) ** 2
            need = _rows_for(need_eff, alpha)
            cv = float(bias_aware_critical_value(ratio[worst]))
            where = (
                "in directions swamped by privatisation noise"
                if alpha < 1
                else "in directions that few rows inform (limited overlap, sparse tails)"
            )
            if from_guard[worst]:
                where = (
                    "in directions that the guard against privatisation noise shrinks (the "
                    "estimate moves by that much when the guard is halved)"
                )
            if from_cap[worst]:
                where = (
                    "beyond the finest structure that the sample affords at this alpha "
                    "(the estimate moves by that much when the sieves' cap is halved)"
                )
            widened = (
                f"the estimated bound on |bias| of {names[worst]} is {ratio[worst]:.2f} "
                f"standard errors, so the interval is widened (critical value {cv:.2f} "
                "instead of 1.96; Armstrong and Kolesar, 2020)"
            )
            if self.options.ridge != "cv" and not (from_cap[worst] or from_guard[worst]):
                # a fixed ridge's bias does not fade with n: name the remedy instead
                message = (
                    f"{self._name}: the fixed ridge={float(self.options.ridge):g} biases "  # type: ignore[arg-type]
                    f"the estimate: {widened}. The estimate moves by that much when the "
                    "nuisances are refitted less regularised (with the sieve and ridge the "
                    "private CV chooses where its ridge is lighter, else with the ridge "
                    "divided by 100); use ridge='cv' (the default) or a lighter ridge."
                )
            else:
                message = (
                    f"{self._name}: regularisation bias is not negligible at n * alpha^2 = "
                    f"{n * alpha**2:.0f}: {widened}. The data cannot resolve the nuisances "
                    f"{where}; about n >= {need} rows at alpha = {alpha:g} (n * alpha^2 >= "
                    f"{need_eff:.0f}) would make the bias negligible."
                )
            warnings.warn(message, RegularizationBiasWarning, stacklevel=5)
        return pd.Series(B, index=names)

    # -- one split ---------------------------------------------------------------------
    def _fit_split(
        self,
        folds: IntArray,
        basis: PolynomialBasis,
        ref: ReferenceMoments,
        design: ReferenceDesign,
        rng: np.random.Generator | None = None,
        se_boot: bool = True,
    ) -> SplitFit:
        """Cross-fit once: nuisances per fold, held-out scores, the estimand's algebra.

        With ``rng`` the fold-block bootstrap runs: it measures the noise of the
        regularisation shift, and with ``se_boot`` also the estimate's variance.
        """
        o, x = self.options, self.inputs
        n, L = x.n_obs, x.n_levels
        R, C = ref.outer, self.C

        def stats(inp: TreatmentData, fl: IntArray, off: int, groups: int) -> FoldStats:
            C_part = None if C is None else C[off : off + fl.size]
            return sum_stats(fl, groups, inp, basis, R, C_part)

        # the sieve's candidates, listed once for the fit and every bootstrap refit
        cands = basis.candidates() if isinstance(basis, SieveBasis) else None
        noiseless = noiseless_functions(basis, self.mechanism.alpha)
        caps = None if cands is None else arm_caps(x, self.mechanism.alpha)

        def refit(
            st: FoldStats,
            like: SeriesFits | None = None,
            loose: bool | None = None,
            caps: tuple[list[int], int] | None = caps,
            guard_scale: float = 1.0,
        ) -> SeriesFits:
            return fit_series(
                st,
                x.levels,
                ref.mean,
                ref.outer,
                self.mechanism.alpha,
                split=bool(o.split_nuisances),
                candidates=None if cands is None else [idx for _, idx in cands],
                interactions=None
                if cands is None
                else [d.endswith("interactions") for d, _ in cands],
                ridge=o.ridge,  # type: ignore[arg-type]
                riesz=o.riesz == "auto",
                functional=self.C is not None,
                odds=self._odds,
                like=like,
                with_loose=loose,
                noiseless=noiseless,
                public_lead=None if cands is None else [", public +" in d for d, _ in cands],
                caps=caps,
                guard_scale=guard_scale,
                undersmooth_riesz=o.outcome_model == "series",
            )

        # pass 1: per fold x arm sufficient statistics (per fold x block x arm when the
        # standard error is bootstrapped; the fold sums are their sums)
        fine = None
        if rng is not None:
            labels = self._rows.block_labels(folds, o.n_folds, rng)
            groups = o.n_folds * N_BLOCKS
            fine = self._rows.fold_sums(labels, lambda i, f, s: stats(i, f, s, groups))
            st = check_fold_counts(collapse(fine, o.n_folds), self._name)
        else:
            st = check_fold_counts(
                self._rows.fold_sums(folds, lambda i, f, s: stats(i, f, s, o.n_folds)),
                self._name,
            )
        with small_matrix_blas():
            fits = refit(st)
        P_ref = basis.private_only(design.U)
        kernel_ref = None
        if o.outcome_model == "kernel":
            kernel_ref = KernelReference(x=design.U, cat=None, weights=design.weights)
        with_terms = o.riesz == "auto" and o.outcome_model == "series"
        terms = [ReferenceTerms()] * (L + 1)
        if o.ridge != "cv" and self.mechanism.alpha < 1:
            check_fixed_ridge(fits, x.levels, float(o.ridge), self._name)  # type: ignore[arg-type]
        repairs = floor_records(fits, x.levels)
        interp_err = 0.0
        nuisances = []
        for f in range(o.n_folds):
            nuis = self._fold_nuisances(f, folds, fits, ref, design, P_ref, kernel_ref)
            nuisances.append(nuis)
            interp_err = max(interp_err, nuis.riesz.interp_error)
            if with_terms:
                terms = self._add_reference_terms(terms, st, f, nuis, basis.n_basis)

        held_out = HeldOutPass(basis, tuple(nuisances), C, self.mechanism.alpha, self._odds)
        # pass 2: the transformed scores of every held-out row
        cov = None
        if self._rows.reduces:
            # Dask: the scores are reduced where they are computed (see models._reduce)
            est, phi, cov, contrast, totals = self._reduce_scores(folds, held_out)
            risk_sum, riesz2_sum, n_clipped = totals
        else:
            (pom_phi, att_phi), (risk_sum, riesz2_sum, n_clipped) = self._rows.map_rows(
                folds, held_out
            )
            # sampling weights (mean one) multiply the transformed scores row by row:
            # Q_X^{-1}[w s] = w Q_X^{-1}[s] for public w
            est, phi, contrast = self._combine(pom_phi, att_phi, np.ones(n) if x.w is None else x.w)
        assert phi.shape[1] == len(self._param_names())  # internal invariant, not user input
        moves = fits.regularisation_shift(per_fold=True)  # (F, L + 1), sums to the shift
        per_fold = self._shift_terms(moves, contrast)
        shift = per_fold.sum(axis=0)
        shift_se = fold_spread_se(per_fold, st.cnt.sum(axis=1))
        guard_shift = guard_shift_se = None
        if self._guard_sensitivity_on(fits):
            with small_matrix_blas():
                soft = refit(st, loose=False, guard_scale=_GUARD_SCALE)
            guard_shift, guard_shift_se = self._move(fits, soft, st, contrast)
        bootstrapped = fine is not None and rng is not None
        se_if = None
        if bootstrapped or _GUARD_SWITCH is not None:
            se_if = np.sqrt(np.diag(influence_cov(phi, x.clusters) if cov is None else cov))
        if self._switches_guard(guard_shift, guard_shift_se, se_if):
            # before the halved-cap refit, which the switched split makes anew
            with regularize.guard_directions(True, cv=True):
                return self._fit_split(folds, basis, ref, design, rng, se_boot)
        cap_shift = cap_shift_se = None
        if self._cap_sensitivity_on(fits, caps):
            half = ([max(1, c // 2) for c in caps[0]], max(1, caps[1] // 2))  # type: ignore[index]
            with small_matrix_blas():
                coarse = refit(st, loose=False, caps=half)
            cap_shift, cap_shift_se = self._move(fits, coarse, st, contrast)
        boot = None
        if bootstrapped:
            # the draws refit the comparison fits only where the shift could widen the
            # interval: the bootstrap can only raise the shift's noise and the standard
            # error, so a bound under the note threshold now stays under it

            def widens(move: FloatArray, noise: FloatArray) -> bool:
                """Whether a move, less its noise, would enter the bias bound."""
                return o.n_rep > 1 or bool(
                    np.any(move**2 - noise**2 > (_BIAS_NOTE_SHARE * se_if) ** 2)
                )

            loose = o.ridge == "cv" and widens(shift, shift_se)
            # the halved-guard refit is bootstrapped only where its move could widen
            soft_too = guard_shift is not None and widens(guard_shift, guard_shift_se)  # type: ignore[arg-type]
            blocks = None
            if _STUDENTIZE:
                blocks = held_out_fits(
                    fine, x.levels, ref.mean, ref.outer, self.mechanism.alpha
                )
            drawn = self._bootstrap(
                fine, fits, st, est, contrast, refit, rng, loose, guard=soft_too, blocks=blocks
            )
            if drawn is not None:
                boot, boot_shift_scale, boot_guard_scale = drawn
                if _STUDENTIZE == "record" and len(getattr(self, "_stud_record", ())) == 3:
                    self._stud_record = (*self._stud_record, se_if)
                # the fold spread misses the comparison fits' own noise, which every
                # held-out fold shares; the bootstrap refits them
                if boot_shift_scale is not None:
                    shift_se = np.maximum(shift_se, boot_shift_scale)
                if boot_guard_scale is not None and guard_shift_se is not None:
                    guard_shift_se = np.maximum(guard_shift_se, boot_guard_scale)
                if not se_boot:
                    boot = None
        y_var = x.y_var
        return SplitFit(
            est=est,
            phi=phi,
            cov=cov,
            repairs=tuple(repairs),
            n_clipped=n_clipped,
            r2=1.0 - float(risk_sum / n) / y_var if y_var > 0 else float("nan"),
            riesz2=riesz2_sum / n,
            terms=tuple(terms) if with_terms else None,
            contrast=contrast,
            interp_err=interp_err,
            n=n,
            shift=shift,
            shift_se=shift_se,
            cap_shift=cap_shift,
            cap_shift_se=cap_shift_se,
            guard_shift=guard_shift,
            guard_shift_se=guard_shift_se,
            riesz_ref2=reference_riesz_moments(fits, st, ref.outer),
            regularisation=describe_fits(fits, x.levels),
            indefinite=indefinite(fits, x.levels),
            kernel_floored=sum(
                nu.outcome.n_floored for nu in nuisances if isinstance(nu.outcome, KernelOutcome)
            ),
            boot_se=None if boot is None else boot.se,
            boot_cov=None if boot is None else boot.cov,
            guard_directions=regularize.GUARD_DIRECTIONS,
        )

    @staticmethod
    def _switches_guard(
        move: FloatArray | None, noise: FloatArray | None, se: FloatArray | None
    ) -> bool:
        """Whether the per-fit guard switch (``_GUARD_SWITCH``) refits a split with one
        noise guard per eigen-direction: the common guard's halved-guard move, less its
        noise, exceeds ``_GUARD_SWITCH`` standard errors for some parameter.
        """
        if _GUARD_SWITCH is None or move is None or regularize.GUARD_DIRECTIONS:
            return False
        assert se is not None and noise is not None  # computed with the move
        return bool(np.any(_GUARD_EXTRAPOLATION * _net_move(move, noise) > _GUARD_SWITCH * se))

    def _reduce_scores(
        self, folds: IntArray, held_out: HeldOutPass
    ) -> tuple[FloatArray, LazyInfluence, FloatArray, FloatArray | None, tuple[Any, ...]]:
        """The held-out pass reduced partition by partition (Dask input).

        Returns the estimates, their lazy influence values, their covariance (clustered
        as the model asks), the contrast of arm means and the diagnostics' totals.
        """
        reducer = ComponentReducer(self._components, self._rows.cluster_sizes())
        mom, totals = self._rows.reduce_rows(folds, held_out, reducer, [self.c0])
        est, C, contrast = self._from_means(mom.mean)
        phi = self._rows.lazy_influence(folds, held_out, self._components, mom.mean, C, self.c0)
        return est, phi, mom.covariance(C), contrast, totals

    def _bootstrap_on(self) -> bool:
        """Whether the standard error includes the fold-block bootstrap (option ``variance``)."""
        o, alpha = self.options, self.mechanism.alpha
        if o.variance == "influence":
            return False
        eligible = self._series_route()
        if o.variance == "bootstrap":
            if not eligible:
                raise ValueError(
                    f"{self._name}: variance='bootstrap' needs the automatic series route "
                    "(riesz='auto', outcome_model='series') and a built-in estimand; use "
                    "variance='influence'."
                )
            return True
        return eligible and alpha < 1.0 and self.inputs.n_obs * alpha**2 <= MAX_EFFECTIVE_N

    def _cap_sensitivity_on(self, fits: SeriesFits, caps: tuple[list[int], int] | None) -> bool:
        """Whether the split measures the move of the estimate under halved sieve caps:
        CV-chosen sieves (the automatic route) only.
        """
        return (
            _CAP_SENSITIVITY
            and caps is not None
            and self.options.ridge == "cv"
            and bool(fits.riesz)
        )

    def _guard_sensitivity_on(self, fits: SeriesFits) -> bool:
        """Whether the split measures the move of the estimate under a halved noise
        guard: CV-chosen fits of the automatic route below ``alpha = 1`` (at
        ``alpha = 1`` there is no guard).
        """
        return (
            _GUARD_SENSITIVITY
            and self.mechanism.alpha < 1.0
            and self.options.ridge == "cv"
            and bool(fits.riesz)
        )

    def _move(
        self, fits: SeriesFits, other: SeriesFits, st: FoldStats, contrast: FloatArray | None
    ) -> tuple[FloatArray, FloatArray]:
        """How much every estimate changes from ``fits`` to ``other`` (the nuisances
        refitted from the same statistics, e.g. under halved caps or a halved guard), and
        that change's spread over the held-out folds.
        """
        terms = self._shift_terms(fits.fold_values("coefs") - other.fold_values("coefs"), contrast)
        return terms.sum(axis=0), fold_spread_se(terms, st.cnt.sum(axis=1))

    def _shift_terms(self, moves: FloatArray, contrast: FloatArray | None) -> FloatArray:
        """Per-fold terms of each parameter's regularisation shift, shape ``(F, P)``."""
        L, x = self.inputs.n_levels, self.inputs
        if contrast is not None:
            return moves[:, :L] @ contrast
        return moves[:, L:] / (x.treated_weight / x.n_obs)  # the ATT: over the treated share

    def _bootstrap(
        self,
        fine: FoldStats,
        fits: SeriesFits,
        st: FoldStats,
        est: FloatArray,
        contrast: FloatArray | None,
        refit: Any,
        rng: np.random.Generator,
        shift: bool = True,
        guard: bool = False,
        blocks: tuple[FoldFit, ...] | None = None,
    ) -> tuple[BootstrapSE, FloatArray | None, FloatArray | None] | None:
        """Fold-block bootstrap of ``est`` and, with ``shift``, of the regularisation
        shift (None where it does not apply).

        With ``shift`` every draw refits the chosen and the looser comparison fits, so the
        spread of the draws' shifts measures the shift's noise, including the comparison
        fits' own, which all held-out folds share and their spread cannot see. Returned:
        the bootstrap of ``est`` and the robust scale (1.4826 MAD) of the shift's draws
        (None without ``shift``), and with ``guard`` that of the halved-guard move
        (``_GUARD_SCALE``; every draw refits the nuisances once more with the guard
        scaled; None without). Not their standard deviation: a comparison fit at a
        small ridge has a few wild draws, and a shift that nearly every draw repeats is a
        bias, not noise. Used for CV-chosen fits only (see :meth:`_shift_bootstrap_on`).

        The bilinear form of the held-out statistics must reproduce the estimate (it does
        for the automatic series route; a mismatch, e.g. from a route added later, turns
        the bootstrap off rather than bootstrapping another estimator).

        With ``blocks`` (the per-block held-out statistics, ``_STUDENTIZE``) every draw's
        deviation from the draws' mean is divided by its fits' noise amplification
        :math:`r_b` (:meth:`_block_se` of the draw's fits over that of the estimate's, on
        the same blocks): a studentized reading of the draws.
        """
        L = self.inputs.n_levels

        def values(f: SeriesFits, s: FoldStats) -> FloatArray:
            v = series_estimates(f, s, self._odds)
            return v[:L] @ contrast if contrast is not None else v[L : L + 1]

        def params(pair: tuple[SeriesFits, SeriesFits | None], s: FoldStats) -> FloatArray:
            f, soft = pair
            parts = [values(f, s)]
            if shift:
                moves = f.regularisation_shift(per_fold=True)
                parts.append(self._shift_terms(moves, contrast).sum(axis=0))
            if soft is not None:
                parts.append(self._move(f, soft, s, contrast)[0])
            if blocks is not None:
                parts.append(self._block_se(f, blocks, fine, contrast) / own_block)
            return np.concatenate(parts)

        def both(s: FoldStats) -> tuple[SeriesFits, SeriesFits | None]:
            f = refit(s, fits, loose=shift)
            return f, (refit(s, loose=False, guard_scale=_GUARD_SCALE) if guard else None)

        again = values(fits, st)
        if not np.allclose(again, est, rtol=1e-8, atol=1e-10 * (1.0 + float(np.abs(est).max()))):
            return None
        if blocks is not None:
            own_block = self._block_se(fits, blocks, fine, contrast)
            if not np.all(np.isfinite(own_block) & (own_block > 0)):
                blocks = None
        with small_matrix_blas():
            out = bootstrap_se(
                fine,
                self.options.n_folds,
                both,  # type: ignore[arg-type]
                params,  # type: ignore[arg-type]
                rng,
                N_DRAWS,
            )
        if out is None:
            return None
        P = est.size
        assert out.draws is not None  # internal invariant: bootstrap_se keeps its draws
        if blocks is not None:
            stud = _studentized(out, P)
            if _STUDENTIZE == "record":  # research: report the plain reading, keep both
                both = _studentized(out, P, one_sided=False)
                self._stud_record = (out.se[:P].copy(), stud.se[:P].copy(), both.se[:P].copy())
                out = BootstrapSE(
                    out.se[:-P], out.n_draws, out.cov[:-P, :-P], out.draws[:, :-P], out.counts
                )
            else:
                out = stud
        if not shift and not guard:
            return out, None, None
        own = BootstrapSE(out.se[:P], out.n_draws, out.cov[:P, :P], out.draws[:, :P])
        scale = out.robust_scale()
        shift_scale = scale[P : 2 * P] if shift else None
        guard_scale = scale[-P:] if guard else None
        return own, shift_scale, guard_scale

    def _block_terms(
        self,
        fits: SeriesFits,
        blocks: tuple[FoldFit, ...],
        fine: FoldStats,
        contrast: FloatArray | None,
    ) -> FloatArray:
        r"""Each held-out block's term of the estimates, shape ``(F, N_BLOCKS, P)``.

        The estimate is the sum over the held-out blocks of
        :math:`T_{fb} = w_{fb}\psi_{fb}(\beta_f, \theta_f)`: the bilinear form of the
        block's own deconvolved statistics (``blocks``, means over the block's rows) with
        the fits of its fold, :math:`w_{fb}` the block's share of the rows. For the ATT,
        whose estimate is a ratio, the terms are those of its linearisation (they sum to
        zero, not to the estimate).
        """
        L = self.inputs.n_levels
        F = self.options.n_folds
        rows = fine.cnt.sum(axis=1)
        total = float(rows.sum())
        fold = np.repeat(np.arange(F), N_BLOCKS)

        def per_block(fit: Any) -> Any:
            """The fit with its fold's coefficients repeated for each of the fold's blocks."""
            return None if fit is None else replace(fit, coefs=np.asarray(fit.coefs)[fold])

        # the fits' own bilinear form, with the blocks as the held-out units
        T = replace(
            fits,
            outcome=tuple(per_block(f) for f in fits.outcome),
            riesz=tuple(per_block(f) for f in fits.riesz),
            odds=per_block(fits.odds),
            held_out=blocks,
            n_rows=rows,
        ).fold_values("coefs")
        if contrast is not None:
            P = T[:, :L] @ contrast
        else:  # the ATT, linearised in its ratio
            sy, n1 = fine.sy[:, L - 1] / total, fine.cnt[:, L - 1] / total
            p1 = float(n1.sum())
            att = (float(T[:, L].sum()) + float(sy.sum())) / p1
            P = ((T[:, L] + sy - att * n1) / p1)[:, None]
        return P.reshape(F, N_BLOCKS, -1)

    def _block_se(
        self,
        fits: SeriesFits,
        blocks: tuple[FoldFit, ...],
        fine: FoldStats,
        contrast: FloatArray | None,
    ) -> FloatArray:
        r"""Standard error of the held-out linear part of the estimates with the given
        fits, from the spread of the blocks' terms (:meth:`_block_terms`) within each fold.

        Blocks of one fold are exchangeable, so
        :math:`\sum_f\frac{B}{B-1}\sum_b(T_{fb} - \frac{n_{fb}}{n_f}T_f)^2` estimates
        the variance of the held-out part given the fits: how much these fits amplify
        the noise of the held-out rows. Only ratios of it are used (a draw's fits
        against the estimate's, on the same blocks).
        """
        P = self._block_terms(fits, blocks, fine, contrast)
        rows = fine.cnt.sum(axis=1).reshape(P.shape[:2])
        share = rows / rows.sum(axis=1, keepdims=True)
        dev = P - share[:, :, None] * P.sum(axis=1, keepdims=True)
        return np.sqrt(N_BLOCKS / (N_BLOCKS - 1) * (dev**2).sum(axis=(0, 1)))

    def _shift_bootstrap_on(self) -> bool:
        """Whether a widening for regularisation bias is checked by the bootstrap.

        The automatic series route with CV-chosen fits, up to an effective sample size of
        ``MAX_EFFECTIVE_N`` (as for the bootstrap standard error; at any ``alpha``). A
        fixed ridge keeps the fold spread as the noise of its shift: when its comparison
        fit was the full basis at the ridge divided by 100, the bootstrap draws scattered
        widely around a shift that they nearly all shared (with a relative ridge of 1 at
        ``alpha = 1`` and a bias of 6-9 SE, the robust scale of the draws exceeded the
        shift in 3 of 10 fits); a heavy fixed ridge is now compared with the CV's choice
        (:data:`~privinfer.nuisance.regularize.FIXED_COMPARE_CV`).
        """
        eligible = self._series_route() and self.options.ridge == "cv"
        return eligible and self.inputs.n_obs * self.mechanism.alpha**2 <= MAX_EFFECTIVE_N

    def _series_route(self) -> bool:
        """The automatic series route with a built-in estimand (what the bootstrap re-runs)."""
        o = self.options
        return o.riesz == "auto" and o.outcome_model == "series" and self.C is None

    def _fold_nuisances(
        self,
        f: int,
        folds: IntArray,
        fits: SeriesFits,
        ref: ReferenceMoments,
        design: ReferenceDesign,
        P_ref: FloatArray,
        kernel_ref: KernelReference | None,
    ) -> FoldNuisances:
        """Outcome regression and Riesz representer from the training folds of fold ``f``."""
        o, x, alpha = self.options, self.inputs, self.mechanism.alpha
        m, R = ref.mean, ref.outer
        mu_sel, _ = training_folds(f, o.n_folds, bool(o.split_nuisances))
        series = series_outcome(fits, f, m, R)
        outcome: SeriesOutcome | KernelOutcome = series
        if kernel_ref is not None or o.riesz != "auto":  # in-memory routes (pandas only)
            rows_f = np.flatnonzero(folds == f)
        if kernel_ref is not None:
            train = np.flatnonzero(np.isin(folds, np.flatnonzero(mu_sel)))
            outcome = kernel_outcome(
                x, train, rows_f, folds, design, kernel_ref, P_ref, o.kernel_bandwidth, alpha
            )
        riesz: SeriesRiesz | PropensityRiesz
        if o.riesz == "auto":
            riesz = series_riesz(fits, f, m, R)
        else:
            train = np.flatnonzero(folds != f)
            riesz = propensity_riesz(
                x, train, rows_f, design, P_ref, series.betas, o.clip, alpha, f
            )
        return FoldNuisances(f, outcome, series, riesz)

    def _add_reference_terms(
        self,
        terms: list[ReferenceTerms],
        st: FoldStats,
        f: int,
        nuis: FoldNuisances,
        J: int,
    ) -> list[ReferenceTerms]:
        """Add fold ``f``'s reference terms (held-out sums of the public factors)."""
        L, riesz, betas = self.inputs.n_levels, nuis.riesz, nuis.series.betas
        assert isinstance(riesz, SeriesRiesz)  # internal invariant: automatic route
        has_a = st.has_public

        def pub(arr: FloatArray | None, scalar: FloatArray, k: int) -> FloatArray:
            return arr[f, k] if arr is not None else np.full(J, scalar[f, k])

        a1_f = st.A1[f].sum(axis=0) if st.A1 is not None else np.full(J, st.cnt[f].sum())
        out = list(terms)
        for k in range(L):
            a1_k = a1_f if self.C is None else pub(st.AC, st.CW, k)  # type: ignore[arg-type]
            aa = st.AA[f, k] if st.AA is not None else st.cnt[f, k]
            ay = pub(st.Ay, st.sy, k)
            out[k] = out[k] + scores.pom_reference_terms(betas[k], riesz.thetas[k], a1_k, ay, aa)
        if self._odds:
            assert riesz.theta_w is not None
            aa0 = st.AA[f, 0] if has_a else st.cnt[f, 0]
            out[L] = out[L] + scores.att_reference_terms(
                betas[0], riesz.theta_w, pub(st.A1, st.cnt, 1), pub(st.Ay, st.sy, 0), aa0
            )
        return out


def _rows_for(effective_n: float, alpha: float) -> str:
    """Rows giving ``n * alpha**2 = effective_n``, as text for a warning.

    A tiny alpha makes ``alpha**2`` underflow to 0 or the quotient overflow; the count
    is then ``inf`` (no study reaches it) instead of a ZeroDivisionError.
    """
    need = effective_n / alpha**2 if alpha**2 > 0 else np.inf
    return str(int(np.ceil(need))) if np.isfinite(need) else "inf"
