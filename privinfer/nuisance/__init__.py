"""Private nuisance fits: series bases, Gram repair, private logistic regression.

Also private kernel regression, B-spline bases, ridge series and private cross-validation.
"""

from privinfer.nuisance.basis import PolynomialBasis
from privinfer.nuisance.bspline import BSplineBasis, RidgeSeriesFit, fit_ridge_series, ridge_penalty
from privinfer.nuisance.crossval import (
    CVResult,
    default_series_candidates,
    private_cv_kernel,
    private_cv_riesz,
    private_cv_series,
    private_squared_error,
)
from privinfer.nuisance.kernel import (
    KernelDiagnostics,
    KernelReference,
    KernelRegressionResult,
    categorical_codes,
    private_kernel_regression,
    scott_bandwidth,
)
from privinfer.nuisance.logit import PrivateLogitFit, fit_private_logit
from privinfer.nuisance.series import GramRepair, repair_gram, solve_gram

__all__ = [
    "BSplineBasis",
    "CVResult",
    "GramRepair",
    "KernelDiagnostics",
    "KernelReference",
    "KernelRegressionResult",
    "PolynomialBasis",
    "PrivateLogitFit",
    "RidgeSeriesFit",
    "categorical_codes",
    "default_series_candidates",
    "fit_private_logit",
    "fit_ridge_series",
    "private_cv_kernel",
    "private_cv_riesz",
    "private_cv_series",
    "private_kernel_regression",
    "private_squared_error",
    "repair_gram",
    "ridge_penalty",
    "scott_bandwidth",
    "solve_gram",
]
