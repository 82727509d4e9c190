"""Private nuisance fits: series bases, Gram repair, private logistic regression."""

from privinfer.nuisance.basis import PolynomialBasis
from privinfer.nuisance.logit import PrivateLogitFit, fit_private_logit
from privinfer.nuisance.series import GramRepair, repair_gram, solve_gram

__all__ = [
    "GramRepair",
    "PolynomialBasis",
    "PrivateLogitFit",
    "fit_private_logit",
    "repair_gram",
    "solve_gram",
]
