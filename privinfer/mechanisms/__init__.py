"""Local privacy mechanisms: the alpha-identity, its reference distributions, guarantees."""

from privinfer.mechanisms import reference
from privinfer.mechanisms.alpha_identity import ATTRS_KEY, RELEASE_KEY, AlphaIdentity
from privinfer.mechanisms.guarantees import (
    PrivacyGuarantees,
    alpha_identity_guarantees,
    alpha_identity_kernel,
)

__all__ = [
    "ATTRS_KEY",
    "RELEASE_KEY",
    "AlphaIdentity",
    "PrivacyGuarantees",
    "alpha_identity_guarantees",
    "alpha_identity_kernel",
    "reference",
]
