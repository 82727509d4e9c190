"""Differentially private optimal transport and private synthetic measures.

The optional extra ``pip install privinfer[transport]`` brings POT (every OT solve) and
dp-accounting (composition). POT is imported lazily, inside the functions that solve.

* DPOT / DPDA (Le Tien, Habrard and Sebban, 2019): :class:`DPOTSource` publishes a
  random projection of the source rows with Gaussian noise; :class:`DPOT` solves OT on
  the debiased cost and estimates the transport cost with a bias correction and a
  bracket (:func:`estimate_transport_cost`);
  :class:`DPDASource` / :class:`DPDA` add a private label histogram and a
  class-regularised coupling for domain adaptation.
* PrivTree synthetic measures (He, 2026): :class:`PrivTreeSynthesizer` releases a
  :class:`SyntheticMeasure` with Wasserstein-1 guarantees.
"""

from privinfer.transport.accounting import NeighbourRelation, PrivacyStatement, minibatch_privacy
from privinfer.transport.calibration import (
    analytic_gaussian_sigma,
    max_row_norm,
    record_sensitivity,
    theorem2_sigma,
)
from privinfer.transport.da import (
    DPDA,
    DPDASource,
    PublishedLabelledSource,
    discrete_laplace,
    labels_from_counts,
)
from privinfer.transport.dpot import (
    DPOT,
    CostEstimate,
    DPOTResult,
    DPOTSource,
    MinibatchDPOTResult,
    PublishedMinibatches,
    PublishedSource,
    debiased_cost,
    dpot,
    dpot_minibatch,
    draw_projection,
    estimate_transport_cost,
    publish_rows,
    solve_transport,
)
from privinfer.transport.measures import DyadicTree, SyntheticMeasure, TreeLevel
from privinfer.transport.privtree import (
    PrivTreeDiagnostics,
    PrivTreeSynthesizer,
    grid_synthesize,
    privtree_synthesize,
    two_sided_geometric,
)

__all__ = [
    "DPDA",
    "DPOT",
    "CostEstimate",
    "DPDASource",
    "DPOTResult",
    "DPOTSource",
    "DyadicTree",
    "MinibatchDPOTResult",
    "NeighbourRelation",
    "PrivTreeDiagnostics",
    "PrivTreeSynthesizer",
    "PrivacyStatement",
    "PublishedLabelledSource",
    "PublishedMinibatches",
    "PublishedSource",
    "SyntheticMeasure",
    "TreeLevel",
    "analytic_gaussian_sigma",
    "debiased_cost",
    "discrete_laplace",
    "dpot",
    "dpot_minibatch",
    "draw_projection",
    "estimate_transport_cost",
    "grid_synthesize",
    "labels_from_counts",
    "max_row_norm",
    "minibatch_privacy",
    "privtree_synthesize",
    "publish_rows",
    "record_sensitivity",
    "solve_transport",
    "theorem2_sigma",
    "two_sided_geometric",
]
