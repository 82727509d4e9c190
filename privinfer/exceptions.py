"""Named exceptions and warnings of privinfer.

Every exception subclasses :class:`PrivinferError` *and* a built-in category, so that
``except ValueError`` keeps working in user code. Every warning is a named class; the
same event is recorded in the ``diagnostics`` of the results object it concerns.
"""

from __future__ import annotations

__all__ = [
    "AlreadyReleasedError",
    "AtomLeakWarning",
    "BasisSizeError",
    "BootstrapError",
    "ClusterError",
    "ConstraintError",
    "DataMismatchError",
    "DensityFloorWarning",
    "DerivedColumnError",
    "EmptyLevelWarning",
    "FoldError",
    "IndefiniteGramWarning",
    "MassConditionError",
    "MechanismMismatchError",
    "MissingValueError",
    "NonLinearFunctionalError",
    "NonSeparableTermError",
    "NotFittedError",
    "NotInInteriorError",
    "NuisanceNoiseWarning",
    "OutOfSupportError",
    "OverlapWarning",
    "PrivateDtypeError",
    "PrivinferDeprecationWarning",
    "PrivinferError",
    "PrivinferWarning",
    "ProblemSizeError",
    "ReferenceAccuracyWarning",
    "RegularizationBiasWarning",
    "RowOrderError",
    "SeedReleaseWarning",
    "SingularDesignError",
    "TransportConvergenceError",
    "TransportConvergenceWarning",
    "TransportNoiseWarning",
    "UndeclaredColumnWarning",
    "UnknownCategoryError",
    "UnsupportedBackendError",
    "UnsupportedInputError",
    "UnverifiedReleaseWarning",
    "WeightsError",
]


class PrivinferError(Exception):
    """Base class of every exception raised by privinfer."""


class MechanismMismatchError(PrivinferError, ValueError):
    """The released data and the mechanism do not describe the same columns or roles.

    Raised when a private column of the mechanism is missing from the data, when the
    mechanism covers a column that a model requires to be public (outcome, treatment),
    or when a reference distribution does not cover the private columns.
    """


class DataMismatchError(PrivinferError, ValueError):
    """Input data have the wrong shape, type or columns for the requested operation."""


class MissingValueError(PrivinferError, ValueError):
    """A column used by a mechanism or a model holds NaN or infinite values."""


class OutOfSupportError(PrivinferError, ValueError):
    """A value lies outside the support of the public reference distribution."""


class UnknownCategoryError(PrivinferError, ValueError):
    """A categorical value is not among the public levels declared by the mechanism."""


class NonSeparableTermError(PrivinferError, ValueError):
    """A formula term mixes private and public variables inside one factor.

    The Q_X^{-1} engine evaluates reference expectations separably (see
    :mod:`privinfer.inversion`): each
    design column must be a function of public variables times a function of private
    variables. ``I(w * x)`` with ``w`` public and ``x`` private is not; write ``w:x``.
    """


class NonLinearFunctionalError(PrivinferError, ValueError):
    """A user functional is not linear in the regression function mu.

    The one-step estimator and its automatic Riesz representer need
    ``f(v, mu) = c0(v) + sum_k c_k(v) mu_k``; the check is numerical (a probe mu, scaling).
    """


class SingularDesignError(PrivinferError, ValueError):
    """A (private) Gram matrix or Jacobian is singular and cannot be repaired."""


class FoldError(PrivinferError, ValueError):
    """Cross-fitting cannot be carried out (e.g. a fold without treated units)."""


class NotFittedError(PrivinferError, ValueError, AttributeError):
    """A fitted attribute was requested from an object that has not been fitted."""


class PrivinferWarning(UserWarning):
    """Base class of every warning issued by privinfer."""


class IndefiniteGramWarning(PrivinferWarning):
    """A deconvolved Gram matrix was not positive definite and its eigenvalues were floored.

    The floor is a last resort. An indefinite Gram matrix that the treatment models'
    ridges regularise (chosen at or above the estimated noise level, the usual case below
    ``alpha = 1``) is listed in the summary notes without a warning.
    """


class EmptyLevelWarning(PrivinferWarning):
    """A covariate column is identically zero in the released data (e.g. a public level of a
    categorical with no released row); its direction in the series fit is unidentified and
    the Gram matrix is repaired.
    """


class OverlapWarning(PrivinferWarning):
    """Estimated propensities or Riesz weights indicate weak or no overlap."""


class ReferenceAccuracyWarning(PrivinferWarning):
    """The numerical error of reference expectations is not small next to the SE."""


class PrivinferDeprecationWarning(PrivinferWarning, DeprecationWarning):
    """A privinfer feature is deprecated."""


class TransportConvergenceError(PrivinferError, RuntimeError):
    """An optimal-transport solver stopped before reaching an optimal plan.

    POT's ``ot.emd`` only warns (and returns a non-optimal plan) when ``numItermax`` is
    reached; privinfer turns that into this error so that no plan is silently wrong.
    """


class TransportConvergenceWarning(PrivinferWarning):
    """An iterative (entropic) transport solver did not reach its stopping threshold."""


class TransportNoiseWarning(PrivinferWarning):
    """The privacy noise of a DPOT release swamps the spread of the source.

    Raised by :func:`~privinfer.transport.estimate_transport_cost` when the estimated
    noise ratio (the variance of a source point's privacy noise over the spread of the
    source points) exceeds one. The release then cannot show the structure of the source
    that sets the transport cost, the point estimate can be off by tens of percent in
    either direction, and only the bracket ``(lower, upper)`` keeps its level.
    """


class NotInInteriorError(PrivinferError, ValueError):
    r"""A distribution lies outside the c-interior of the probability simplex.

    Raised when a pmf or density that a PML guarantee is stated for has mass or density
    below the floor ``c`` (Grosse et al., 2026, the set :math:`\mathcal P_c`); the message names the
    violating points.
    """


class MassConditionError(PrivinferError, ValueError):
    r"""A set ``A`` violates the mass conditions of the optimal binary PML mechanism.

    The kernel :math:`K^*` of Grosse et al. (2026) Theorem 3 exists only when
    :math:`\mu(A), \mu(A^c) \le 1/(e^{\varepsilon} c)`.
    """


class ProblemSizeError(PrivinferError, ValueError):
    """An exact computation was requested on a problem too large for it.

    The message states the size, the limit and the documented alternative (for example
    a tree-metric bound instead of an exact transport problem).
    """


class BasisSizeError(PrivinferError, ValueError):
    """A series basis has too many functions for the rows it is fitted on.

    A (private) Gram matrix of ``J`` basis functions estimated from ``n <= J`` rows is
    singular before any privatisation; lower the degree or the number of knots.
    """


class DensityFloorWarning(PrivinferWarning):
    """A deconvolved kernel denominator fell below its floor (non-positive density).

    The private kernel fit floored (or trimmed) its prediction at those points; the
    count is recorded in the fit's diagnostics.
    """


class BootstrapError(PrivinferError, ValueError):
    """A multiplier bootstrap was misconfigured or is needed but missing.

    Raised for an unknown bootstrap ``method``, a bad ``n_boot``, and by
    ``conf_int(joint=True)`` / ``p_adjust("romano-wolf")`` on results that carry no
    bootstrap draws (call ``results.bootstrap(...)`` first).
    """


class ClusterError(PrivinferError, ValueError):
    """Cluster labels cannot be used for cross-fitting or cluster-robust inference.

    Raised for fewer than two clusters, missing labels, a cluster column covered by the
    mechanism (cluster labels must be public), or more than two clustering dimensions.
    """


class WeightsError(PrivinferError, ValueError):
    """Sampling weights are unusable: negative, all zero, or not a public numeric column.

    Missing or infinite weights raise :class:`MissingValueError` instead.
    """


class DerivedColumnError(PrivinferError, ValueError):
    """A published column determines, or nearly determines, a private column.

    Raised by ``AlphaIdentity.privatize`` before anything is released when a public
    column, or a small set of them, reconstructs a private column exactly (a function or
    a monotone transform of it) or with R^2 >= 0.99 (a linear or low-degree polynomial
    relation). The message names the columns and the relation; ``allow_derived=`` is the
    explicit override, and it is recorded in the release's description.
    """


class RowOrderError(PrivinferError, ValueError):
    """The row order or the index of data to be released would reveal private values.

    The one-bit mechanisms (``PrivateMean``, ``BinaryMechanism``, ``PMLTest``) protect the
    released bit only. ``privatize`` returns the bits in the order of its input, so it
    refuses input whose order is related to the private values (a file sorted or grouped
    by them) and a Series whose index is not the default ``RangeIndex`` (an index such as
    an identifier sorted by the private value would travel with the bits). ``release``
    shuffles the rows instead and publishes a fresh ``RangeIndex``.
    """


class AlreadyReleasedError(PrivinferError, ValueError):
    """A frame that is already a privinfer release was passed to ``privatize`` again.

    Privatising released data twice changes the mechanism the analyst must invert; the
    release carries one mechanism, so the second pass is refused.
    """


class PrivateDtypeError(PrivinferError, TypeError):
    """A private column has a dtype the mechanism cannot release without a leak.

    Numeric private columns need a real numeric dtype (int, unsigned, float or bool);
    object, string, complex or mixed columns would let kept values be told apart from
    replacements by their type alone.
    """


class UndeclaredColumnWarning(PrivinferWarning):
    """Columns that are neither private nor declared public were dropped from a release.

    ``privatize`` publishes only the private columns and the columns named in
    ``public=``; pass ``publish_undeclared=True`` to publish the others too.
    """


class AtomLeakWarning(PrivinferWarning):
    """Private values have atoms that their continuous reference never draws: values on a
    grid (whole numbers, a fixed number of decimals) or values shared by many rows (a
    spike at zero earnings). Released values on those atoms are the kept true values.

    The total-variation guarantee still holds, but those rows' keep/replace status is
    visible. Use a reference with the same atoms (``Categorical`` levels, a discrete
    ``Frozen`` law such as ``scipy.stats.randint``, an ``Empirical`` sample of public
    values).
    """


class UnverifiedReleaseWarning(PrivinferWarning):
    """Data without privinfer release metadata were analysed with an explicit mechanism.

    Nothing shows that the data went through that mechanism (raw or twice-privatised
    data give confident wrong answers); read releases with ``read_release`` instead.
    """


class SeedReleaseWarning(PrivinferWarning):
    """A release was made from a reproducible seed (an int or a ``SeedSequence``).

    Published randomness (a DPOT projection ``M``, a PrivTree shift ``U``) is a function
    of the seed, so anyone who guesses the seed can regenerate every noise draw of the
    release and subtract it, recovering the private values exactly. Pass
    ``random_state=None`` (fresh OS entropy) for real releases; seeds are for research.
    """


class WeakInstrumentWarning(PrivinferWarning):
    """The private first stage is weak (partial F below 10): read the Anderson-Rubin set.

    Privacy weakens the first stage quickly as the keep probability falls; Wald intervals
    of an IV coefficient then under-cover. ``results.ar_conf_int()`` stays valid.
    """


class NonRobustCovarianceWarning(PrivinferWarning):
    """``cov_type="nonrobust"`` was asked for below ``alpha = 1``.

    The classical covariance ignores the variance that the privacy noise adds to the
    private moment rows, so its standard errors are too small unless ``alpha = 1``.
    """


class NotAvailableError(PrivinferError, AttributeError):
    """A results quantity is not defined for this model or no longer available.

    Raised e.g. for ``rsquared`` of a logit, ``get_margeff`` of a linear model, or
    ``fittedvalues`` of results restored from a pickle (they hold no data rows).
    """


__all__ += ["NonRobustCovarianceWarning", "NotAvailableError", "WeakInstrumentWarning"]


class ConstraintError(PrivinferError, ValueError):
    """Linear restrictions for ``t_test`` / ``wald_test`` / ``f_test`` cannot be used.

    Raised for a restriction string that names no parameter of the results, a matrix whose
    number of columns differs from the number of parameters, or restrictions that are
    linearly dependent (or untestable because the covariance is singular along them).
    """


class UnsupportedInputError(PrivinferError, TypeError):
    """The data are neither a pandas DataFrame nor a frame privinfer can convert.

    privinfer accepts pandas DataFrames, any DataFrame that narwhals supports (polars,
    modin, cuDF, PyArrow tables...), Arrow streams, or frames implementing the DataFrame
    interchange protocol; numpy arrays go through the models' ``from_arrays`` constructors.
    """


class RegularizationBiasWarning(PrivinferWarning):
    """Regularisation of the nuisance fits leaves a bias that is not negligible.

    Raised when the estimated bound on the bias exceeds half a standard error: the
    interval is then widened (bias-aware critical value) and the message names the
    effective sample size ``n * alpha**2`` that would make the bias negligible. The
    bound includes how much the estimate moves when the sieves' cap is halved and, below
    ``alpha = 1``, when the guard against privatisation noise is halved; the message
    says so when one of these moves sets it. With a fixed ``ridge`` whose own bias sets
    the bound, the message names that ridge and ``ridge='cv'`` instead: a relative
    ridge's bias does not fade with ``n``.
    """


class NuisanceNoiseWarning(PrivinferWarning):
    """The nuisance fits add variance that the influence values do not see.

    Raised when the fold-block bootstrap standard error exceeds the influence-function
    one by more than half: at this effective sample size ``n * alpha**2`` the noisy
    deconvolved nuisance fits (and their private CV choices) make the estimate vary
    more than a first-order expansion says. The reported standard error is the
    bootstrap one; the message names the sample size at which the two would agree.

    Also raised for every fit below ``alpha = 1`` whose effective sample size
    ``n * alpha**2`` is under 1200, where the package's validation study found the
    intervals unreliable on hard designs (standard errors too small in the releases that
    err); the message names the sample size needed.
    """


class FewClustersWarning(PrivinferWarning):
    """Too few clusters for the cluster-robust interval to be trusted.

    Raised by the treatment-effect models and by ``PrivateGMM.fit`` /
    ``PrivateGMM.anderson_rubin`` with ``cov_type="clustered"`` when a cluster dimension
    has fewer than 50 clusters: cluster-robust standard errors sum the influence values
    (or moment rows) within clusters and estimate their spread from the clusters alone,
    and with few of them they are too small and too noisy (Cameron and Miller, 2015), the
    more so when whole clusters are treated or a regressor varies only between clusters.
    The message names the sample size needed at the same cluster size.
    """


__all__ += ["FewClustersWarning"]


class UnsupportedBackendError(PrivinferError, NotImplementedError):
    """An option that a data backend (e.g. Dask DataFrames) does not support.

    Options that need every private row in memory at once are refused on out-of-core
    input rather than silently gathered; compute the frame to pandas to use them.
    """


class OutsideBoundsWarning(PrivinferWarning):
    """A private mean estimate lies outside the range its parameter can take.

    Raised by :class:`~privinfer.PrivateMean` (estimate outside the public ``bounds``) and
    :class:`~privinfer.PMLTest` (``mass_A`` outside [0, 1]) when the share of ones among
    the released bits falls outside what the mechanism can produce, which happens mostly
    in small samples or small groups. The estimate is left unclipped (clipping would bias
    it) and its standard error uses the mechanism's smallest bit variance, so it is not
    zero; the normal interval is unreliable there: read ``conf_int(method="exact")``
    (Clopper-Pearson, mapped to the parameter's range) or release more bits.
    """


__all__ += ["OutsideBoundsWarning"]


class PerfectSeparationWarning(PrivinferWarning):
    """A private logit's fitted probabilities are numerically 0 or 1 for many rows.

    Raised by ``PrivateGMM.logit(...).fit()`` when more than a tenth of the released rows
    are predicted to within 1e-4 of their outcome (statsmodels' rule for complete or
    quasi-complete separation). The maximum-likelihood estimator, and the private score
    root, then does not exist: the coefficients drift to infinity until the solver's
    tolerance stops them, and their standard errors mean nothing. Drop or merge the
    covariate that separates the outcome, or use a penalised model.
    """


__all__ += ["PerfectSeparationWarning"]


class FewEffectiveRowsWarning(PrivinferWarning):
    r"""Sampling weights leave too few effective rows for the interval to be trusted.

    Raised when a treatment-effect model or a ``PrivateGMM.ols`` / ``.iv`` / ``.logit``
    model is built with ``weights=`` and Kish's (1965) effective sample size of the weights,
    :math:`n_{\mathrm{eff}} = (\sum_i w_i)^2 / \sum_i w_i^2`, is below 200 (the threshold
    the treatment models use for the effective rows behind a Riesz representer). A few
    heavily weighted rows then carry the estimate, and its standard error, estimated from
    those same rows, is too small and too noisy. The summary reports :math:`n_{\mathrm{eff}}`
    whenever weights are given; the message names the number of rows needed at the same
    spread of the weights. Check the weights for outliers (trim or cap extreme ones), or
    use more rows.
    """


__all__ += ["FewEffectiveRowsWarning"]


class FewBootstrapDrawsWarning(PrivinferWarning):
    r"""Too few bootstrap draws to resolve the level of a bootstrap quantity.

    Raised by ``conf_int(joint=True)`` and ``p_adjust("romano-wolf")`` when fewer than 10
    multiplier-bootstrap draws lie beyond the :math:`1 - a` quantile they read, i.e.
    ``n_boot * a < 10`` (``a`` the ``alpha`` of the joint interval, 0.05 for Romano-Wolf
    p-values): the sup-t critical value is then the quantile of a handful of draws, and
    an adjusted p-value is a share of ``n_boot`` draws (0.0 only says it is below
    ``1 / n_boot``). The message names the ``n_boot`` needed; rerun
    ``results.bootstrap(n_boot=...)`` with at least that many (the default 1000 resolves
    0.05 and 0.01).
    """


__all__ += ["FewBootstrapDrawsWarning"]
