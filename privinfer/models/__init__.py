"""Private one-step estimators."""

from privinfer.models.ate import PrivateATE, PrivatePOM
from privinfer.models.att import PrivateATT
from privinfer.models.functional import PrivateFunctional
from privinfer.models.gmm import PrivateGMM

__all__ = ["PrivateATE", "PrivateATT", "PrivateFunctional", "PrivateGMM", "PrivatePOM"]
