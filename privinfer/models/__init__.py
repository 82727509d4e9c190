"""Private one-step estimators."""

from privinfer.models.ate import PrivateATE, PrivatePOM
from privinfer.models.att import PrivateATT
from privinfer.models.gmm import PrivateGMM

__all__ = ["PrivateATE", "PrivateATT", "PrivateGMM", "PrivatePOM"]
