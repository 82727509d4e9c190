"""Pointwise maximal leakage: accounting, the optimal binary mechanism, tests and means."""

from privinfer.pml.leakage import check_stochastic_matrix, d_c, pml_epsilon

__all__ = ["check_stochastic_matrix", "d_c", "pml_epsilon"]
