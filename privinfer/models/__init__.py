"""Private one-step estimators."""

from privinfer.models.ate import PrivateATE, PrivatePOM
from privinfer.models.att import PrivateATT

__all__ = ["PrivateATE", "PrivateATT", "PrivatePOM"]
