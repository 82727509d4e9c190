r"""Cross-fitted private one-step estimators of treatment effects (seed 003, sec. 3-5).

The template (STYLE.md §5): draw the splits; fit the nuisances on the training folds
from per-fold sufficient statistics; evaluate the :math:`Q_X^{-1}`-transformed score on
the held-out fold; solve for the estimate; compute the influence values
:math:`\varphi_i` and ``SE = sd(phi)/sqrt(n)``; aggregate repeated splits by the median.

Nuisances (DESIGN.md §6), all fitted through :math:`Q_X^{-1}`:

* outcome regression :math:`\mu(k, x) = \beta_k'\varphi(w, x)` per treatment level,
  :math:`\beta_k = G_k^{-1} c_k`, :math:`G_k = \frac1n\sum Q_X^{-1}[1\{d=k\}\varphi\varphi']`;
* Riesz representer of the potential-outcome mean :math:`E\mu(k, X)`:
  ``riesz="auto"``: :math:`\rho_k(d, x) = 1\{d=k\}\theta_k'\varphi`, :math:`\theta_k = G_k^{-1}
  \frac1n\sum Q_X^{-1}[\varphi]`; ``riesz="propensity"``: :math:`1\{d=k\}/\pi_k(x)` with a
  private logit and clipping;
* ATT: :math:`w(x) = \pi(x)/(1-\pi(x))`, automatic (:math:`\theta_w = G_0^{-1}
  \frac1n\sum Q_X^{-1}[d\varphi]`) or from the propensity.

Scores (DESIGN.md §5): :math:`s_k = \mu(k, x) + \rho_k(d, x)(y - \mu(k, x))` and
:math:`s_{ATT} = d(y - \mu_0(x)) - (1-d)w(x)(y - \mu_0(x))`. Each is a sum of public
weights times basis products, so :math:`\bar Q s` needs only the reference moments
(O(n J^2 + M J^2)); the propensity route uses single-index reference expectations.

Sampling weights :math:`\omega_i` (public, normalised to mean one) target the weighted
population: :math:`E[\omega\, s]/E[\omega]`. Because :math:`\omega` is public,
:math:`Q_X^{-1}[\omega s] = \omega\, Q_X^{-1}[s]` row by row, so the weights multiply the
transformed scores and enter every Gram matrix and moment of the nuisance fits as public
row weights (weighted series regression and weighted automatic Riesz representer, which
is the Riesz representer of the weighted functional). Public clusters keep whole
clusters within folds and make the covariance and bootstrap cluster-robust.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.special import expit
from tqdm.auto import tqdm

from privinfer._typing import FloatArray, IntArray, RandomStateLike
from privinfer._validation import check_in_interval, check_int, spawn_generators
from privinfer.exceptions import (
    ClusterError,
    DataMismatchError,
    EmptyLevelWarning,
    FoldError,
    IndefiniteGramWarning,
    MechanismMismatchError,
    MissingValueError,
    OverlapWarning,
    WeightsError,
)
from privinfer.formula import (
    CovariateSpec,
    build_covariate_spec,
    cast_private_categoricals,
    check_public_columns,
    parse_treatment_formula,
)
from privinfer.inversion import (
    ReferenceMoments,
    index_expectation,
    invert,
    qbar_linear,
    qbar_quadratic,
    weighted_cross,
)
from privinfer.mechanisms.alpha_identity import AlphaIdentity
from privinfer.models._crossfit import draw_cluster_folds, draw_folds, median_aggregate
from privinfer.nuisance.basis import PolynomialBasis
from privinfer.nuisance.crossval import private_cv_kernel, private_cv_series
from privinfer.nuisance.kernel import KernelReference, private_kernel_regression
from privinfer.nuisance.logit import fit_private_logit
from privinfer.nuisance.series import GramRepair, gram_noise_level, repair_gram
from privinfer.results import (
    Diagnostics,
    PrivateResults,
    ResultsRecord,
    data_fingerprint,
    influence_cov,
)

__all__ = ["TreatmentModel"]

Estimand = Literal["ate", "att", "pom", "functional"]
RieszRoute = Literal["auto", "propensity"]
OutcomeRoute = Literal["series", "kernel"]

#: Cells (rows x basis functions) of the basis built at once: about 16 MB per matrix, small
#: enough to stay in cache, large enough for efficient BLAS calls.
_CHUNK_CELLS = 2_000_000
#: Riesz second moments above this flag weak overlap (1 / DoubleML's default clip).
_OVERLAP_LIMIT = 100.0
#: Eigenvalue floor of deconvolved Gram matrices, as a multiple of the part of their
#: estimated sampling noise (operator norm) that privatisation adds: (1 - alpha) times the
#: total, since the deconvolved Gram's noise is the raw Gram's over alpha. Flooring is a
#: spectral regularisation whose bias in the one-step estimate is second order in the
#: shift; see ``benchmarks/mc_ate.py``.
_NOISE_FLOOR_SCALE = 1.0
#: Effective sample size n * alpha^2 from which the default series degree is 3.
_DEGREE3_EFFECTIVE_N = 8000
#: Rows of the smallest treatment arm required per basis function by the default degree.
_ROWS_PER_BASIS = 20
#: Grid size of single-index reference expectations (interpolation error reported).
_GRID = 129


@dataclass
class _Stats:
    """Per fold x arm sufficient statistics of the basis (sums over rows)."""

    PP: FloatArray
    Py: FloatArray
    P1: FloatArray
    cnt: FloatArray
    sy: FloatArray
    AA: FloatArray | None
    Ay: FloatArray | None
    A1: FloatArray | None
    #: sums over rows of ||phi||^4, (phi*a)' R (phi*a) and (a^2)' (R*R) (a^2): they give
    #: the sampling noise of the private Gram matrices (gram_noise_level)
    F4: FloatArray
    FR: FloatArray
    RR: FloatArray
    #: sums of c_k(v) * phi, c_k(v) * a and c_k(v) over each fold for a user functional
    #: chi = E[c0(V) + sum_k c_k(V) mu(k, X)] (None for the built-in estimands)
    PC: FloatArray | None = None
    AC: FloatArray | None = None
    CW: FloatArray | None = None

    def train(self, name: str, f: int) -> Any:
        arr = getattr(self, name)
        return arr.sum(axis=0) - arr[f]


class TreatmentModel:
    """Shared engine of :class:`PrivateATE`, :class:`PrivateATT` and :class:`PrivatePOM`."""

    _estimand: Estimand = "ate"
    _name = "TreatmentModel"
    #: public weights c_k(v) (n x L) and offsets c0(v) of a user functional; None otherwise
    C: FloatArray | None = None
    c0: FloatArray | None = None
    functional_name = "functional"

    def __init__(
        self,
        data: pd.DataFrame,
        *,
        outcome: str,
        treatment: str,
        covariates: str | list[str],
        mechanism: AlphaIdentity | None = None,
        degree: int | str | None = None,
        riesz: RieszRoute = "auto",
        outcome_model: OutcomeRoute = "series",
        kernel_bandwidth: float | Literal["scott", "cv"] = "scott",
        n_folds: int = 5,
        n_rep: int = 1,
        clip: float = 0.01,
        reference_level: Any = None,
        reference_size: int = 8192,
        split_nuisances: bool | None = None,
        cluster: str | list[str] | None = None,
        weights: str | None = None,
        formula: str | None = None,
    ) -> None:
        owner = self._name
        if not isinstance(data, pd.DataFrame):
            raise DataMismatchError(
                f"{owner} expects a pandas DataFrame; got {type(data).__name__}."
            )
        if len(data) == 0:
            raise DataMismatchError(f"{owner}: the data frame is empty.")
        if mechanism is None:
            mechanism = AlphaIdentity.from_released(data)
        if not isinstance(mechanism, AlphaIdentity):
            raise MechanismMismatchError(f"{owner}: mechanism must be an AlphaIdentity.")
        if riesz not in ("auto", "propensity"):
            raise ValueError(f"{owner}: riesz must be 'auto' or 'propensity'; got {riesz!r}.")
        if isinstance(degree, str):
            if degree != "cv":
                raise ValueError(
                    f"The 'degree' parameter of {owner} must be an integer >= 1, None or 'cv'. "
                    f"Got {degree!r} instead."
                )
            self.degree: int | str | None = degree
        else:
            self.degree = None if degree is None else check_int(degree, "degree", owner, 1)
        self.n_folds = check_int(n_folds, "n_folds", owner, 2)
        self.n_rep = check_int(n_rep, "n_rep", owner, 1)
        self.clip = check_in_interval(clip, "clip", owner, 0.0, 0.5, high_open=True)
        self.reference_size = check_int(reference_size, "reference_size", owner, 64)
        self.riesz = riesz
        if outcome_model not in ("series", "kernel"):
            raise ValueError(
                f"{owner}: outcome_model must be 'series' or 'kernel'; got {outcome_model!r}."
            )
        self.outcome_model = outcome_model
        if isinstance(kernel_bandwidth, str):
            if kernel_bandwidth not in ("scott", "cv"):
                raise ValueError(
                    f"{owner}: kernel_bandwidth must be a positive number, 'scott' or 'cv'; got "
                    f"{kernel_bandwidth!r}."
                )
        else:
            check_in_interval(
                kernel_bandwidth, "kernel_bandwidth", owner, 0.0, np.inf, low_open=True
            )
        self.kernel_bandwidth = kernel_bandwidth
        if split_nuisances is None:
            split_nuisances = mechanism.alpha < 1.0 and self.n_folds >= 3
        if not isinstance(split_nuisances, bool):
            raise TypeError(f"{owner}: split_nuisances must be a bool; got {split_nuisances!r}.")
        if split_nuisances and self.n_folds < 3:
            raise ValueError(f"{owner}: split_nuisances=True needs n_folds >= 3.")
        self.split_nuisances = split_nuisances
        self.mechanism = mechanism
        covariates = " + ".join(covariates) if isinstance(covariates, list) else covariates
        self.formula = formula or f"{outcome} ~ {treatment} | {covariates}"
        mechanism.check_data(data, owner)
        check_public_columns(
            data,
            [outcome, treatment],
            mechanism,
            {outcome: "outcome", treatment: "treatment"},
            owner,
        )
        released = cast_private_categoricals(data, mechanism)
        self.spec: CovariateSpec = build_covariate_spec(covariates, released, mechanism, owner)
        check_public_columns(data, list(self.spec.public_variables), mechanism, {}, owner)
        self.outcome, self.treatment = outcome, treatment
        y = pd.to_numeric(data[outcome], errors="coerce").to_numpy(dtype=float)
        if not np.all(np.isfinite(y)):
            raise DataMismatchError(f"{owner}: outcome {outcome!r} must be numeric and finite.")
        levels, codes = self._treatment_levels(data[treatment], reference_level, owner)
        self.levels, self.y, self.d = levels, y, codes
        if outcome_model == "kernel":
            cat = [t for t in self.spec.categorical_terms]
            if riesz != "auto" or weights is not None or self.spec.public_names or cat:
                raise ValueError(
                    f"{owner}: outcome_model='kernel' supports riesz='auto', no sampling "
                    "weights and continuous private covariates only (no public or categorical "
                    "covariate terms)."
                )
        self.U_priv = self.spec.private_design(released)
        self.U_pub = self.spec.public_design(released)
        if self.U_priv.shape[0] != len(data):
            raise DataMismatchError(f"{owner}: formulaic dropped rows; check for missing values.")
        self.cluster_names, self.clusters = _cluster_codes(data, cluster, mechanism, owner)
        self.weights_name = weights
        self.w = _sampling_weights(data, weights, mechanism, owner)
        if self.w is not None and riesz == "propensity":
            raise WeightsError(
                f"{owner}: sampling weights need riesz='auto' (the private logistic propensity "
                "fit is unweighted); got riesz='propensity'."
            )
        self._fingerprint = data_fingerprint(data.index.to_numpy(), self.d, self.w, self.clusters)

    # -- constructors ------------------------------------------------------------------
    @classmethod
    def from_formula(
        cls,
        formula: str,
        data: pd.DataFrame,
        *,
        mechanism: AlphaIdentity | None = None,
        degree: int | str | None = None,
        riesz: RieszRoute = "auto",
        outcome_model: OutcomeRoute = "series",
        kernel_bandwidth: float | Literal["scott", "cv"] = "scott",
        n_folds: int = 5,
        n_rep: int = 1,
        clip: float = 0.01,
        reference_level: Any = None,
        reference_size: int = 8192,
        split_nuisances: bool | None = None,
        cluster: str | list[str] | None = None,
        weights: str | None = None,
    ) -> TreatmentModel:
        """Build the model from ``"y ~ d | x1 + x2 + C(g)"`` and released data."""
        parsed = parse_treatment_formula(formula, cls._name)
        return cls(
            data,
            outcome=parsed.outcome,
            treatment=parsed.treatment,
            covariates=parsed.covariates,
            mechanism=mechanism,
            degree=degree,
            riesz=riesz,
            outcome_model=outcome_model,
            kernel_bandwidth=kernel_bandwidth,
            n_folds=n_folds,
            n_rep=n_rep,
            clip=clip,
            reference_level=reference_level,
            reference_size=reference_size,
            split_nuisances=split_nuisances,
            cluster=cluster,
            weights=weights,
            formula=formula,
        )

    def _treatment_levels(
        self, col: pd.Series, reference_level: Any, owner: str
    ) -> tuple[list[Any], IntArray]:
        if isinstance(col.dtype, pd.CategoricalDtype):
            levels = [lv for lv in col.cat.categories if (col == lv).any()]
        else:
            levels = sorted(pd.unique(col).tolist())
        if len(levels) < 2:
            raise DataMismatchError(
                f"{owner}: treatment {col.name!r} takes a single value {levels!r}."
            )
        if pd.api.types.is_float_dtype(col) and len(levels) > 20:
            raise DataMismatchError(
                f"{owner}: treatment {col.name!r} looks continuous ({len(levels)} distinct "
                "values); "
                "it must be binary or categorical."
            )
        if reference_level is not None:
            if reference_level not in levels:
                raise DataMismatchError(
                    f"{owner}: reference_level {reference_level!r} not in {levels!r}."
                )
            levels = [reference_level] + [lv for lv in levels if lv != reference_level]
        if self._estimand == "att" and len(levels) != 2:
            raise DataMismatchError(
                f"{owner}: the ATT needs a binary treatment; got levels {levels!r}."
            )
        if self.riesz == "propensity" and len(levels) != 2:
            raise DataMismatchError(
                f"{owner}: riesz='propensity' supports binary treatments; use riesz='auto' for "
                f"{len(levels)} levels."
            )
        mapping = {lv: i for i, lv in enumerate(levels)}
        codes = col.map(mapping).to_numpy()
        return levels, np.asarray(codes, dtype=np.int64)

    # -- parameter names ---------------------------------------------------------------
    def _param_names(self) -> list[str]:
        lv = self.levels
        if self._estimand == "att":
            return ["ATT"]
        if self._estimand == "functional":
            return [self.functional_name]
        if self._estimand == "pom":
            return [f"E[Y({v})]" for v in lv]
        if len(lv) == 2:
            return ["ATE"]
        return [f"ATE[{v} vs {lv[0]}]" for v in lv[1:]]

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
        folds : array-like of shape (n,), optional
            Fold label (0 .. n_folds-1) of every row, to reuse a split made elsewhere
            (e.g. by DoubleML); only with ``n_rep=1``. With clusters, each cluster (first
            dimension) must lie within one fold.
        progress : bool, default=False
            Show a progress bar over repeated splits.

        Raises
        ------
        FoldError
            A fold lacks some treatment level, ``folds`` is malformed, or splits a cluster.
        ClusterError
            Fewer clusters than folds.
        """
        given = None
        if folds is not None:
            given = np.asarray(folds)
            if (
                self.n_rep != 1
                or given.shape != self.y.shape
                or set(np.unique(given).tolist()) != set(range(self.n_folds))
            ):
                raise FoldError(
                    f"{self._name}.fit: folds must hold one label in 0..{self.n_folds - 1} per "
                    "row (each label used) and needs n_rep=1."
                )
            given = given.astype(np.int64)
            if self.clusters is not None:
                first = self.clusters if self.clusters.ndim == 1 else self.clusters[:, 0]
                per_cluster = pd.Series(given).groupby(first).nunique()
                if (per_cluster > 1).any():
                    raise FoldError(
                        f"{self._name}.fit: folds split {int((per_cluster > 1).sum())} "
                        "cluster(s) across folds; cluster cross-fitting keeps clusters whole."
                    )
        counts = np.bincount(self.d, minlength=len(self.levels))
        if given is None and counts.min() < self.n_folds:
            level = self.levels[int(np.argmin(counts))]
            raise FoldError(
                f"{self._name}: treatment level {level!r} has {counts.min()} row(s), fewer than "
                f"n_folds={self.n_folds}: some fold would have no unit of that level."
            )
        design = np.hstack([self.U_priv, self.U_pub])
        empty = [
            name
            for name, col in zip(
                self.spec.private_names + self.spec.public_names, design.T, strict=True
            )
            if not np.any(col)
        ]
        if empty:
            warnings.warn(
                f"{self._name}: covariate column(s) {empty} are zero in every released row "
                "(a level with no released record?); their coefficients are not identified and "
                "the Gram matrices will be repaired. Consider merging or dropping the level.",
                EmptyLevelWarning,
                stacklevel=2,
            )
        streams = spawn_generators(random_state, self.n_rep + 1)
        draw = self.mechanism.reference.draw_for_moments(
            self.reference_size, random_state=streams[0]
        )
        ref_frame = cast_private_categoricals(draw.frame, self.mechanism)
        U_ref = self.spec.private_design(ref_frame)

        def build(deg: int) -> PolynomialBasis:
            return PolynomialBasis.build(
                deg,
                U_ref,
                draw.weights,
                self.U_pub,
                self.spec.private_groups,
                self.spec.public_groups,
                self.spec.private_names + self.spec.public_names,
            )

        n_min = int(min(np.bincount(self.d)))
        if self.degree is None:
            basis = build(_default_degree(self.y.size, self.mechanism.alpha))
            while basis.n_basis > n_min / _ROWS_PER_BASIS and basis.degree > 1:
                basis = build(basis.degree - 1)
        elif self.degree == "cv":
            basis = self._degree_by_private_cv(build, U_ref, draw.weights, n_min, streams[0])
        else:
            basis = build(int(self.degree))  # type: ignore[arg-type]
        if basis.n_basis >= 0.5 * n_min:
            raise DataMismatchError(
                f"{self._name}: the series basis has {basis.n_basis} functions but the smallest "
                f"treatment arm only {n_min} rows; lower degree={basis.degree}."
            )
        P_ref = basis.private_only(U_ref)
        ref = ReferenceMoments.from_features(P_ref, draw.weights, draw.replicate)
        names = self._param_names()
        reps = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            for r in tqdm(range(self.n_rep), disable=not progress, desc=self._name):
                split = given if given is not None else self._draw_split(streams[r + 1])
                reps.append(self._fit_once(split, basis, ref, U_ref, draw.weights))
        for w in caught:
            warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        est = np.array([r["est"] for r in reps])
        phis = [r["phi"] for r in reps]
        ses = np.array([np.sqrt(np.diag(influence_cov(p, self.clusters))) for p in phis])
        params, se = median_aggregate(est, ses)
        # influence values of the split closest to the median, rescaled to the aggregated SE
        pick = int(np.argmin(np.abs(est - params).sum(axis=1)))
        phi = phis[pick] * np.where(ses[pick] > 0, se / np.where(ses[pick] > 0, ses[pick], 1), 1.0)
        diag = self._diagnostics(reps, names, ref, est)
        guarantees = (
            self.mechanism.guarantees()
            if not self.mechanism.reference.is_discrete
            or (self.mechanism.reference.n_support <= 100_000)
            else None
        )
        facts = (
            ("Cross-fit folds:", str(self.n_folds)),
            ("Repeated splits:", str(self.n_rep)),
            ("Series degree:", f"{basis.degree} ({basis.n_basis} fns)"),
            ("Riesz route:", self.riesz),
        )
        if self.clusters is not None:
            facts = (*facts, ("Clusters:", " x ".join(self.cluster_names)))
        if self.w is not None:
            facts = (*facts, ("Weights:", str(self.weights_name)))
        record = ResultsRecord(
            model=self._name,
            dep_variable=self.outcome,
            params=pd.Series(params, index=names),
            influence=phi,
            mechanism=self.mechanism.to_dict()
            if not _has_empirical(self.mechanism)
            else {"mechanism": "alpha-identity", "alpha": self.mechanism.alpha},
            guarantees=guarantees,
            facts=facts,
            diagnostics=diag,
            rep_params=pd.DataFrame(est, columns=names),
            clusters=self.clusters,
            fingerprint=self._fingerprint,
        )
        return PrivateResults(record)

    def _kernel_outcome(
        self,
        train: IntArray,
        rows: IntArray,
        U_ref: FloatArray,
        ref_weights: FloatArray,
        kernel_ref: Any,
        folds: IntArray,
    ) -> tuple[FloatArray, FloatArray]:
        r"""Private Nadaraya–Watson fits of :math:`\mu(k, \cdot)` on the training rows.

        Returns the fits at the held-out ``rows`` (n_f x L) and at the reference points
        (M x L); the latter give the reference terms :math:`E_{\bar Q}\hat\mu_k`,
        :math:`E_{\bar Q}\hat\mu_k^2` and :math:`E_{\bar Q}[p_j\hat\mu_k]` of the score
        (seed 003, Example 11). Bandwidth: ``kernel_bandwidth`` — a number, Scott's rule on
        the private spread (default), or private cross-validation over multiples of it,
        reusing the training rows' cross-fitting folds as CV folds.
        """
        L = len(self.levels)
        x_eval = np.vstack([self.U_priv[rows], U_ref])
        at_rows = np.empty((rows.size, L))
        at_ref = np.empty((U_ref.shape[0], L))
        for k in range(L):
            tr = train[self.d[train] == k]
            bandwidth: Any = self.kernel_bandwidth
            cv_folds = np.unique(folds[tr], return_inverse=True)[1]
            if bandwidth == "cv" and cv_folds.max() >= 1:
                cv = private_cv_kernel(
                    self.y[tr],
                    self.U_priv[tr],
                    alpha=self.mechanism.alpha,
                    reference=kernel_ref,
                    n_folds=int(cv_folds.max()) + 1,
                    folds=cv_folds,
                )
                bandwidth = cv.choice
            elif bandwidth == "cv":
                bandwidth = "scott"
            fit = private_kernel_regression(
                self.y[tr],
                self.U_priv[tr],
                alpha=self.mechanism.alpha,
                reference=kernel_ref,
                x_eval=x_eval,
                bandwidth=bandwidth,
                warn=False,
            )
            at_rows[:, k] = fit.predictions[: rows.size]
            at_ref[:, k] = fit.predictions[rows.size :]
        return at_rows, at_ref

    def _degree_by_private_cv(
        self,
        build: Any,
        U_ref: FloatArray,
        ref_weights: FloatArray,
        n_min: int,
        rng: np.random.Generator,
    ) -> PolynomialBasis:
        r"""Series degree (1 to 3) minimising the private out-of-fold outcome risk.

        The risk :math:`\sum_k E[1\{D=k\}(Y - \mu(k, X))^2]` is estimated through
        :math:`Q_X^{-1}` by :func:`privinfer.nuisance.private_cv_series` (unbiased for the
        true-data risk), summed over treatment levels; degrees whose basis would leave
        fewer than ``_ROWS_PER_BASIS`` rows per function in the smallest arm are skipped.
        """
        candidates = [build(deg) for deg in (1, 2, 3)]
        candidates = [
            b for b in candidates if b.degree == 1 or b.n_basis <= n_min / _ROWS_PER_BASIS
        ]
        public = self.U_pub if self.U_pub.shape[1] else None
        folds = self._draw_split(rng)
        total = np.zeros(len(candidates))
        for k in range(len(self.levels)):
            arm = (self.d == k).astype(float)
            cv = private_cv_series(
                self.y,
                self.U_priv,
                public,
                alpha=self.mechanism.alpha,
                ref_private=U_ref,
                ref_weights=ref_weights,
                bases=candidates,
                ridges=(0.0,),
                n_folds=self.n_folds,
                folds=folds,
                weights=arm if self.w is None else arm * self.w,
            )
            total += cv.table.sort_values("candidate")["risk"].to_numpy()
        return candidates[int(np.argmin(total))]

    def _draw_split(self, rng: np.random.Generator) -> IntArray:
        """Folds stratified by treatment; whole clusters (first dimension) when clustered."""
        if self.clusters is None:
            return draw_folds(self.d, self.n_folds, rng)
        first = self.clusters if self.clusters.ndim == 1 else self.clusters[:, 0]
        return draw_cluster_folds(self.d, first, self.n_folds, rng)

    # -- one split ---------------------------------------------------------------------
    def _chunks(self, idx: IntArray, n_basis: int) -> list[IntArray]:
        size = max(1024, _CHUNK_CELLS // max(n_basis, 1))
        return [idx[s : s + size] for s in range(0, idx.size, size)]

    def _design(
        self, basis: PolynomialBasis, rows: IntArray
    ) -> tuple[FloatArray | None, FloatArray]:
        A, P = basis.split(self.U_priv[rows], self.U_pub[rows] if self.U_pub.shape[1] else None)
        return A, (P if A is None else A * P)

    def _accumulate(self, folds: IntArray, basis: PolynomialBasis, R: FloatArray) -> _Stats:
        F, L, J = self.n_folds, len(self.levels), basis.n_basis
        has_a = basis.has_public
        st = _Stats(
            PP=np.zeros((F, L, J, J)),
            Py=np.zeros((F, L, J)),
            P1=np.zeros((F, L, J)),
            cnt=np.zeros((F, L)),
            sy=np.zeros((F, L)),
            AA=np.zeros((F, L, J, J)) if has_a else None,
            Ay=np.zeros((F, L, J)) if has_a else None,
            A1=np.zeros((F, L, J)) if has_a else None,
            F4=np.zeros((F, L)),
            FR=np.zeros((F, L)),
            RR=np.zeros((F, L)),
        )
        if self.C is not None:
            st.PC = np.zeros((F, L, J))
            st.AC = np.zeros((F, L, J)) if has_a else None
            st.CW = np.zeros((F, L))
        RR = R * R
        key = folds * L + self.d
        order = np.argsort(key, kind="stable")
        bounds = np.searchsorted(key[order], np.arange(F * L + 1))
        for kk in range(F * L):
            f, k = divmod(kk, L)
            rows_all = order[bounds[kk] : bounds[kk + 1]]
            for rows in self._chunks(rows_all, J):
                A, Phi = self._design(basis, rows)
                yy = self.y[rows]
                # public sampling weights are row weights of every sum (1 when unweighted)
                wr = np.ones(rows.size) if self.w is None else self.w[rows]
                w2 = wr * wr
                st.PP[f, k] += weighted_cross(Phi, wr)
                st.Py[f, k] += (wr * yy) @ Phi
                st.P1[f, k] += wr @ Phi
                st.cnt[f, k] += wr.sum()
                st.sy[f, k] += wr @ yy
                sq = np.einsum("ij,ij->i", Phi, Phi)
                st.F4[f, k] += sq @ (w2 * sq)
                if A is None:
                    # sum_i w_i^2 phi_i' R phi_i = <R, sum_i w_i^2 phi_i phi_i'>
                    st.RR[f, k] += w2.sum() * float(RR.sum())
                    if self.w is not None:
                        st.FR[f, k] += float(np.sum(weighted_cross(Phi, w2) * R))
                else:
                    pa = Phi * A
                    st.FR[f, k] += float(np.sum(weighted_cross(pa, w2) * R))
                    a2 = A * A
                    st.RR[f, k] += float(np.sum(weighted_cross(a2, w2) * RR))
                if self.C is not None:
                    wc = wr[:, None] * self.C[rows]
                    st.PC[f] += wc.T @ Phi  # type: ignore[index]
                    st.CW[f] += wc.sum(axis=0)  # type: ignore[index]
                    if A is not None:
                        st.AC[f] += wc.T @ A  # type: ignore[index]
                if A is not None:
                    st.AA[f, k] += weighted_cross(A, wr)  # type: ignore[index]
                    st.Ay[f, k] += (wr * yy) @ A  # type: ignore[index]
                    st.A1[f, k] += wr @ A  # type: ignore[index]
        if not has_a and self.w is None:
            # unweighted: sum_i phi_i' R phi_i = <R, sum_i phi_i phi_i'>, no extra pass
            st.FR[:] = np.einsum("flij,ij->fl", st.PP, R)
        return st

    def _fit_once(
        self,
        folds: IntArray,
        basis: PolynomialBasis,
        ref: ReferenceMoments,
        U_ref: FloatArray,
        ref_weights: FloatArray,
    ) -> dict[str, Any]:
        alpha = self.mechanism.alpha
        F, L, J = self.n_folds, len(self.levels), basis.n_basis
        n = self.y.size
        st = self._accumulate(folds, basis, ref.outer)
        for f in range(F):
            if np.any(st.cnt[f] == 0):
                raise FoldError(f"{self._name}: fold {f} has no unit of some treatment level.")
        repairs: list[GramRepair] = []
        n_params = len(self._param_names())
        pom_phi = np.zeros((n, L))
        att_phi = np.zeros(n)
        risk = np.zeros(n)
        riesz2 = np.zeros((n, L + 1))
        lin_terms: list[list[tuple[FloatArray, FloatArray, float]]] = [[] for _ in range(L + 1)]
        quad_terms: list[list[tuple[FloatArray, FloatArray, Any, float]]] = [
            [] for _ in range(L + 1)
        ]
        n_clipped = 0
        interp_err = 0.0
        theta_w = None
        has_a = st.AA is not None
        noisy = alpha < 1.0
        kernel_ref = (
            KernelReference(x=U_ref, cat=None, weights=ref_weights)
            if self.outcome_model == "kernel"
            else None
        )
        m, R = ref.mean, ref.outer

        def fit_on(sel: np.ndarray, f: int) -> dict[str, Any]:
            """Deconvolved Gram matrices and moments from the folds in ``sel``."""
            n_tr = st.cnt[sel].sum()
            pPP, pPy, pP1 = st.PP[sel].sum(0), st.Py[sel].sum(0), st.P1[sel].sum(0)
            pcnt, psy = st.cnt[sel].sum(0), st.sy[sel].sum(0)
            pAA = st.AA[sel].sum(0) if has_a else None
            pAy = st.Ay[sel].sum(0) if has_a else None
            pA1 = st.A1[sel].sum(0) if has_a else None
            out: dict[str, Any] = {"G": [], "c": []}
            for k in range(L):
                pub_outer = pAA[k] / n_tr if has_a else pcnt[k] / n_tr
                G = invert(pPP[k] / n_tr, pub_outer * R, alpha)
                noise = 0.0
                if noisy:
                    sq = (
                        st.F4[sel, k].sum()
                        - 2 * (1 - alpha) * st.FR[sel, k].sum()
                        + (1 - alpha) ** 2 * st.RR[sel, k].sum()
                    ) / alpha**2
                    # privatisation's share (1 - alpha) of the sampling noise: at alpha = 1
                    # the Gram matrix is an ordinary (PSD) one and is left alone
                    noise = _NOISE_FLOOR_SCALE * (1 - alpha) * gram_noise_level(sq, G, n_tr)
                Gf, info = repair_gram(
                    G, f"Gram matrix, level {self.levels[k]!r}, fold {f}", noise_floor=noise
                )
                if info is not None:
                    repairs.append(info)
                out["G"].append(Gf)
                out["c"].append(
                    invert(pPy[k] / n_tr, (pAy[k] / n_tr if has_a else psy[k] / n_tr) * m, alpha)
                )
            out["e_phi"] = invert(
                pP1.sum(axis=0) / n_tr, (pA1.sum(axis=0) / n_tr if has_a else 1.0) * m, alpha
            )
            out["e_dphi"] = invert(
                pP1[-1] / n_tr, (pA1[-1] / n_tr if has_a else pcnt[-1] / n_tr) * m, alpha
            )
            if self.C is not None:
                pPC = st.PC[sel].sum(0)  # type: ignore[index]
                pub = st.AC[sel].sum(0) if has_a else st.CW[sel].sum(0)[:, None]  # type: ignore[index]
                out["e_cphi"] = [invert(pPC[k] / n_tr, pub[k] / n_tr * m, alpha) for k in range(L)]
            return out

        for f in range(F):
            offsets = (np.arange(F) - f) % F
            if self.split_nuisances:
                # outcome and Riesz fits on disjoint training folds: their errors are
                # independent, removing the own-noise product bias (double cross-fitting)
                half = F // 2
                mu_folds = (offsets >= 1) & (offsets <= half)
                fit_mu = fit_on(mu_folds, f)
                fit_rho = fit_on(offsets > half, f)
            else:
                mu_folds = offsets >= 1
                fit_mu = fit_rho = fit_on(mu_folds, f)
            betas = [np.linalg.solve(G, c) for G, c in zip(fit_mu["G"], fit_mu["c"], strict=True)]
            if self.riesz == "auto":
                if self.C is None:
                    thetas = [np.linalg.solve(G, fit_rho["e_phi"]) for G in fit_rho["G"]]
                else:  # Riesz representer of the user functional: G_k theta_k = E[c_k phi]
                    thetas = [
                        np.linalg.solve(G, e)
                        for G, e in zip(fit_rho["G"], fit_rho["e_cphi"], strict=True)
                    ]
                if self._estimand == "att":
                    theta_w = np.linalg.solve(fit_rho["G"][0], fit_rho["e_dphi"])
            else:
                train_rows = np.flatnonzero(folds != f)
                fit = fit_private_logit(
                    (self.d[train_rows] == 1).astype(float),
                    self.U_pub[train_rows],
                    self.U_priv[train_rows],
                    U_ref,
                    ref_weights,
                    alpha,
                    label=f"private logistic propensity, fold {f}",
                )
                interp_err = max(interp_err, fit.interp_error)
                g_pub, g_priv = fit.split(self.U_pub.shape[1])
                eta_ref = U_ref @ g_priv
                P_ref1 = np.column_stack([np.ones(U_ref.shape[0]), basis.private_only(U_ref)])
            rows_f = np.flatnonzero(folds == f)
            offset = 0
            if self.outcome_model == "kernel":
                mu_rows, mu_ref = self._kernel_outcome(
                    np.flatnonzero(np.isin(folds, np.flatnonzero(mu_folds))),
                    rows_f,
                    U_ref,
                    ref_weights,
                    kernel_ref,
                    folds,
                )
                P_ref_k = basis.private_only(U_ref)
            if self.riesz == "propensity":
                t_f = np.column_stack([np.ones(rows_f.size), self.U_pub[rows_f]]) @ g_pub
                if noisy:
                    E_link = []
                    for link in _propensity_links(self.clip):
                        E, e = index_expectation(
                            t_f, eta_ref, P_ref1, ref_weights, link, grid_size=_GRID
                        )
                        E2, e2 = index_expectation(
                            t_f,
                            eta_ref,
                            P_ref1[:, :1],
                            ref_weights,
                            lambda v, g=link: g(v) ** 2,
                            grid_size=_GRID,
                        )
                        E_link.append(np.column_stack([E, E2]))
                        interp_err = max(interp_err, e, e2)
            # reference-term bookkeeping for the numerical error (sums over held-out rows)
            a1_f = st.A1[f].sum(axis=0) if has_a else np.full(J, st.cnt[f].sum())
            for rows in self._chunks(rows_f, J):
                A, Phi = self._design(basis, rows)
                yy, dd = self.y[rows], self.d[rows]
                if self.outcome_model == "kernel":
                    # a kernel fit is not a series: its reference terms come from the fit
                    # evaluated at the reference points, E[mu(X)], E[mu^2(X)], E[p_j mu(X)]
                    MU = mu_rows[offset : offset + rows.size]
                    q_mu = [np.asarray(ref_weights @ mu_ref[:, k]) for k in range(L)]

                    def q_cross(
                        theta: FloatArray,
                        k: int,
                        p_ref: FloatArray = P_ref_k,
                        mu: FloatArray = mu_ref,
                    ) -> FloatArray:
                        return np.asarray((p_ref @ theta * ref_weights) @ mu[:, k])

                    q_sq = [np.asarray(ref_weights @ mu_ref[:, k] ** 2) for k in range(L)]
                else:
                    MU = Phi @ np.column_stack(betas)
                    q_mu = [qbar_linear(b, m, A) for b in betas]

                    def q_cross(
                        theta: FloatArray,
                        k: int,
                        b: list[FloatArray] = betas,
                        a: FloatArray | None = A,
                    ) -> FloatArray:
                        return qbar_quadratic(theta, b[k], R, a)

                    q_sq = [qbar_quadratic(b, b, R, A) for b in betas]
                mu_d = MU[np.arange(rows.size), dd]
                # private out-of-fold risk E(Y - mu(D, X))^2
                qr = np.zeros(rows.size)
                for k in range(L):
                    sel = dd == k
                    qr = qr + sel * (yy**2 - 2 * yy * q_mu[k] + q_sq[k])
                risk[rows] = invert((yy - mu_d) ** 2, qr, alpha)
                if self.riesz == "auto":
                    for k in range(L):
                        isk = (dd == k).astype(float)
                        rho_fn = Phi @ thetas[k]
                        ck = 1.0 if self.C is None else self.C[rows, k]
                        s = ck * MU[:, k] + isk * rho_fn * (yy - MU[:, k])
                        qs = ck * q_mu[k] + isk * (
                            yy * qbar_linear(thetas[k], m, A) - q_cross(thetas[k], k)
                        )
                        pom_phi[rows, k] = invert(s, qs, alpha)
                        riesz2[rows, k] = invert(
                            isk * rho_fn**2, isk * qbar_quadratic(thetas[k], thetas[k], R, A), alpha
                        )
                    if self._estimand == "att":
                        d1 = (dd == 1).astype(float)
                        wv = Phi @ theta_w
                        s = d1 * (yy - MU[:, 0]) - (1 - d1) * wv * (yy - MU[:, 0])
                        qs = d1 * (yy - q_mu[0]) - (1 - d1) * (
                            yy * qbar_linear(theta_w, m, A) - q_cross(theta_w, 0)
                        )
                        att_phi[rows] = invert(s, qs, alpha)
                        riesz2[rows, L] = invert(
                            (1 - d1) * wv**2,
                            (1 - d1) * qbar_quadratic(theta_w, theta_w, R, A),
                            alpha,
                        )
                else:
                    sl = slice(offset, offset + rows.size)
                    t = t_f[sl]
                    pi_z = np.clip(expit(t + self.U_priv[rows] @ g_priv), self.clip, 1 - self.clip)
                    n_clipped += int(np.sum((pi_z <= self.clip) | (pi_z >= 1 - self.clip)))
                    d1 = (dd == 1).astype(float)
                    for k in (0, 1):
                        ind = d1 if k == 1 else 1 - d1
                        wz = 1 / pi_z if k == 1 else 1 / (1 - pi_z)
                        s = MU[:, k] + ind * wz * (yy - MU[:, k])
                        if noisy:
                            E = E_link[k][sl]
                            eb = (E[:, 1:-1] * (A if A is not None else 1.0)) @ betas[k]
                            qs = q_mu[k] + ind * (yy * E[:, 0] - eb)
                            q2 = ind * E[:, -1]
                        else:
                            qs = q2 = 0.0
                        pom_phi[rows, k] = invert(s, qs, alpha)
                        riesz2[rows, k] = invert(ind * wz**2, q2, alpha)
                    if self._estimand == "att":
                        wz = pi_z / (1 - pi_z)
                        s = d1 * (yy - MU[:, 0]) - (1 - d1) * wz * (yy - MU[:, 0])
                        if noisy:
                            E = E_link[2][sl]
                            eb = (E[:, 1:-1] * (A if A is not None else 1.0)) @ betas[0]
                            qs = d1 * (yy - q_mu[0]) - (1 - d1) * (yy * E[:, 0] - eb)
                        else:
                            qs = 0.0
                        att_phi[rows] = invert(s, qs, alpha)
                offset += rows.size
            if self.riesz == "auto":
                for k in range(L):
                    ay = st.Ay[f, k] if has_a else np.full(J, st.sy[f, k])
                    aa = st.AA[f, k] if has_a else st.cnt[f, k]
                    if self.C is None:
                        a1_k = a1_f
                    else:
                        a1_k = st.AC[f, k] if has_a else np.full(J, st.CW[f, k])  # type: ignore[index]
                    lin_terms[k] += [(betas[k], a1_k, 1.0), (thetas[k], ay, 1.0)]
                    quad_terms[k].append((thetas[k], betas[k], aa, -1.0))
                if self._estimand == "att":
                    a1_t = st.A1[f, 1] if has_a else np.full(J, st.cnt[f, 1])
                    ay0 = st.Ay[f, 0] if has_a else np.full(J, st.sy[f, 0])
                    aa0 = st.AA[f, 0] if has_a else st.cnt[f, 0]
                    lin_terms[L] += [(betas[0], a1_t, -1.0), (theta_w, ay0, -1.0)]
                    quad_terms[L].append((theta_w, betas[0], aa0, 1.0))
        # estimates and influence values; sampling weights (mean one) multiply the
        # transformed scores row by row: Q_X^{-1}[w s] = w Q_X^{-1}[s] for public w
        wt = np.ones(n) if self.w is None else self.w
        pom = wt @ pom_phi / n
        if self._estimand == "att":
            d1 = (self.d == 1).astype(float)
            p1 = float(wt @ d1) / n
            tau = float(wt @ att_phi) / float(wt @ d1)
            est = np.array([tau])
            phi = (wt * (att_phi - d1 * tau) / p1)[:, None]
            contrast = None
        else:
            centred = wt[:, None] * (pom_phi - pom)
            if self._estimand == "functional":
                total = self.c0 + pom_phi.sum(axis=1)
                chi = float(wt @ total) / n
                est, phi, contrast = np.array([chi]), (wt * (total - chi))[:, None], np.ones((L, 1))
            elif self._estimand == "pom":
                est, phi, contrast = pom, centred, np.eye(L)
            else:
                contrast = np.zeros((L, L - 1))
                contrast[0, :] = -1.0
                contrast[1:, :] = np.eye(L - 1)
                est, phi = pom @ contrast, centred @ contrast
        assert phi.shape[1] == n_params  # internal invariant, not user input
        y_var = float(self.y.var())
        return {
            "est": est,
            "phi": phi,
            "repairs": repairs,
            "n_clipped": n_clipped,
            "r2": 1.0 - float(wt @ risk / n) / y_var if y_var > 0 else float("nan"),
            "riesz2": wt @ riesz2 / n,
            "lin": lin_terms,
            "quad": quad_terms,
            "contrast": contrast,
            "interp_err": interp_err,
            "n": n,
        }

    # -- diagnostics -------------------------------------------------------------------
    def _diagnostics(
        self, reps: list[dict[str, Any]], names: list[str], ref: ReferenceMoments, est: FloatArray
    ) -> Diagnostics:
        alpha = self.mechanism.alpha
        L = len(self.levels)
        first = reps[0]
        scale = (1.0 - alpha) / alpha / first["n"]

        def ref_part(k: int, mean: FloatArray, outer: FloatArray) -> float:
            tot = sum(sgn * float(s @ (c * mean)) for c, s, sgn in first["lin"][k])
            tot += sum(
                sgn * float(np.sum(np.outer(a, b) * outer * aa))
                for a, b, aa, sgn in first["quad"][k]
            )
            return -scale * tot

        errors: dict[str, float] = {}
        notes: list[str] = []
        if self.outcome_model == "kernel":
            notes.append("Kernel outcome regression: reference error not decomposed.")
        elif self.riesz == "auto" and not ref.exact:
            if self._estimand == "att":
                wt = np.ones(self.d.size) if self.w is None else self.w
                p1 = float(np.mean(wt * (self.d == 1)))
                errors[names[0]] = ref.error(lambda mm, oo: ref_part(L, mm, oo)) / p1
            else:
                contrast = first["contrast"]
                for j, name in enumerate(names):
                    errors[name] = ref.error(
                        lambda mm, oo, j=j: sum(
                            contrast[k, j] * ref_part(k, mm, oo) for k in range(L)
                        )
                    )
        elif self.riesz == "auto":
            errors = dict.fromkeys(names, 0.0)
        else:
            notes.append(
                "Reference error of the propensity route not decomposed; index-expectation "
                f"interpolation error <= {max(r['interp_err'] for r in reps):.2g}."
            )
        riesz_names = [f"rho[{v}]" for v in self.levels] + (
            ["w (ATT)"] if self._estimand == "att" else []
        )
        r2m = {
            nm: float(v)
            for nm, v in zip(riesz_names, first["riesz2"][: len(riesz_names)], strict=True)
        }
        if self.riesz == "propensity" and self._estimand == "att":
            r2m["w (ATT)"] = float("nan")  # not computed on the propensity route
        if any(v > _OVERLAP_LIMIT for v in r2m.values() if np.isfinite(v)):
            msg = (
                f"{self._name}: the estimated Riesz second moments {r2m} exceed "
                f"{_OVERLAP_LIMIT:g}: "
                "weak overlap between treatment levels; estimates may be unstable."
            )
            warnings.warn(msg, OverlapWarning, stacklevel=3)
            notes.append("Weak overlap: large Riesz second moment.")
        repairs = tuple(g for r in reps for g in r["repairs"])
        flagged = [g for g in repairs if g.min_eigenvalue < 0 or g.ill_conditioned]
        if flagged:
            warnings.warn(
                f"{self._name}: {len(flagged)} deconvolved Gram matrix(es) were indefinite or "
                "near-singular (smallest eigenvalue "
                f"{min(g.min_eigenvalue for g in repairs):.3g}); eigenvalues were floored. "
                "See results.diagnostics.gram_repairs.",
                IndefiniteGramWarning,
                stacklevel=3,
            )
        n_clipped = int(sum(r["n_clipped"] for r in reps))
        if self.riesz == "propensity" and n_clipped > 0.01 * first["n"] * len(reps):
            warnings.warn(
                f"{self._name}: {n_clipped} released propensity value(s) hit the clip "
                f"{self.clip:g}.",
                OverlapWarning,
                stacklevel=3,
            )
        spread = {nm: float(est[:, j].max() - est[:, j].min()) for j, nm in enumerate(names)}
        return Diagnostics(
            gram_repairs=repairs,
            n_clipped=n_clipped,
            clip=self.clip if self.riesz == "propensity" else None,
            outcome_r2=float(np.median([r["r2"] for r in reps])),
            riesz_second_moment=r2m,
            reference_error=errors,
            reference_points=ref.n_points,
            reference_exact=ref.exact,
            rep_spread=spread,
            notes=tuple(notes),
        )


def _default_degree(n_obs: int, alpha: float) -> int:
    """Default series degree: 3 when the effective sample size allows, else 2.

    Rate double robustness needs the basis to grow with ``n``; privatisation inflates the
    noise of deconvolved Gram matrices by about ``1/alpha``, so the rule looks at the
    effective sample size ``n alpha^2``: degree 3 from ``n alpha^2 >= 8000`` on, else 2.
    The basis is then shrunk until each treatment arm has at least
    ``_ROWS_PER_BASIS`` rows per basis function. Pass ``degree=`` to override.
    """
    return 3 if n_obs * alpha**2 >= _DEGREE3_EFFECTIVE_N else 2


def _propensity_links(clip: float) -> list[Any]:
    """Weights of the propensity route as functions of the logistic index.

    ``1/pi``, ``1/(1-pi)`` and the odds ``pi/(1-pi)``, with ``pi`` clipped to
    ``[clip, 1 - clip]``.
    """

    def pi_c(e: FloatArray) -> FloatArray:
        return np.clip(expit(e), clip, 1 - clip)

    return [
        lambda e: 1.0 / (1.0 - pi_c(e)),
        lambda e: 1.0 / pi_c(e),
        lambda e: pi_c(e) / (1 - pi_c(e)),
    ]


def _has_empirical(mech: AlphaIdentity) -> bool:
    """Empirical references are kept out of results (they may be large)."""
    return any(type(c).__name__ == "Empirical" for _, c in mech.reference.parts)


def _cluster_codes(
    data: pd.DataFrame, cluster: str | list[str] | None, mech: AlphaIdentity, owner: str
) -> tuple[tuple[str, ...], IntArray | None]:
    """Integer codes of public cluster columns: shape (n,) one-way, (n, 2) two-way."""
    if cluster is None:
        return (), None
    names = [cluster] if isinstance(cluster, str) else list(cluster)
    if not names or len(names) > 2 or not all(isinstance(c, str) for c in names):
        raise ClusterError(
            f"{owner}: cluster must be a column name or a list of one or two column names; "
            f"got {cluster!r}."
        )
    codes = []
    for col in names:
        if col not in data.columns:
            raise ClusterError(
                f"{owner}: cluster column {col!r} is not in the data (columns: "
                f"{list(data.columns)!r})."
            )
        if col in mech.private_columns:
            raise ClusterError(
                f"{owner}: cluster column {col!r} is covered by the mechanism; cluster labels "
                "must be public (they group released rows for the variance)."
            )
        c, uniques = pd.factorize(data[col], use_na_sentinel=True)
        if np.any(c < 0):
            raise ClusterError(
                f"{owner}: cluster column {col!r} holds {int(np.sum(c < 0))} missing label(s)."
            )
        if uniques.size < 2:
            raise ClusterError(
                f"{owner}: cluster-robust inference needs at least 2 clusters; column {col!r} "
                f"has {uniques.size}."
            )
        codes.append(np.asarray(c, dtype=np.int64))
    arr = codes[0] if len(codes) == 1 else np.column_stack(codes)
    return tuple(names), arr


def _sampling_weights(
    data: pd.DataFrame, weights: str | None, mech: AlphaIdentity, owner: str
) -> FloatArray | None:
    """Public sampling weights, validated and normalised to mean one."""
    if weights is None:
        return None
    if not isinstance(weights, str) or weights not in data.columns:
        raise WeightsError(f"{owner}: weights must name a column of the data; got {weights!r}.")
    if weights in mech.private_columns:
        raise WeightsError(
            f"{owner}: the weights column {weights!r} is covered by the mechanism; sampling "
            "weights must be public."
        )
    col = data[weights]
    if not pd.api.types.is_numeric_dtype(col) or pd.api.types.is_bool_dtype(col):
        raise WeightsError(f"{owner}: weights column {weights!r} must be numeric.")
    w = col.to_numpy(dtype=float)
    if not np.all(np.isfinite(w)):
        raise MissingValueError(
            f"{owner}: weights column {weights!r} holds {int(np.sum(~np.isfinite(w)))} NaN or "
            "infinite value(s); privinfer never drops rows silently."
        )
    if np.any(w < 0):
        raise WeightsError(
            f"{owner}: weights column {weights!r} holds {int(np.sum(w < 0))} negative value(s); "
            "sampling weights must be >= 0."
        )
    if not np.any(w > 0):
        raise WeightsError(f"{owner}: weights column {weights!r} is zero everywhere.")
    return w / w.mean()
