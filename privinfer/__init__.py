"""privinfer: statistical inference on data released through local privacy mechanisms.

The pipeline runs one way: a mechanism (:class:`AlphaIdentity` with a public reference
distribution) releases data; :mod:`privinfer.inversion` applies :math:`Q_X^{-1}`;
:mod:`privinfer.nuisance` fits nuisances through it; :mod:`privinfer.models` builds
cross-fitted one-step estimators; :mod:`privinfer.results` reports them. :mod:`privinfer.pml`
and :mod:`privinfer.transport` are siblings of that pipeline. :mod:`privinfer.plotting` is
imported on first use (``pi.plotting``), so matplotlib is never imported with the package.
"""

from __future__ import annotations

import importlib
from typing import Any

from privinfer import exceptions, inversion, pml
from privinfer._tables import summary_col
from privinfer.exceptions import (
    AlreadyReleasedError,
    DerivedColumnError,
    UndeclaredColumnWarning,
    UnverifiedReleaseWarning,
)
from privinfer.mechanisms import AlphaIdentity, PrivacyGuarantees, reference
from privinfer.models import PrivateATE, PrivateATT, PrivateFunctional, PrivateGMM, PrivatePOM
from privinfer.planner import plan
from privinfer.pml import PMLTest, PrivateMean, PrivateVectorMean
from privinfer.release import read_release, write_release
from privinfer.results import PrivateResults, compare
from privinfer.trimming import PublicTrimming

__version__ = "0.1.0"

__all__ = [
    "AlphaIdentity",
    "AlreadyReleasedError",
    "DerivedColumnError",
    "PMLTest",
    "PrivacyGuarantees",
    "PrivateATE",
    "PrivateATT",
    "PrivateFunctional",
    "PrivateGMM",
    "PrivateMean",
    "PrivatePOM",
    "PrivateResults",
    "PrivateVectorMean",
    "PublicTrimming",
    "UndeclaredColumnWarning",
    "UnverifiedReleaseWarning",
    "__version__",
    "compare",
    "exceptions",
    "inversion",
    "plan",
    "plotting",
    "pml",
    "read_release",
    "reference",
    "summary_col",
    "trimming",
    "write_release",
]

#: Submodules imported on first attribute access (they import optional dependencies).
_LAZY_SUBMODULES = ("plotting",)


def __getattr__(name: str) -> Any:
    if name in _LAZY_SUBMODULES:
        return importlib.import_module(f"privinfer.{name}")
    raise AttributeError(f"module 'privinfer' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY_SUBMODULES))
