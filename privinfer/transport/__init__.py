"""Differentially private optimal transport and private synthetic measures.

The optional extra ``pip install privinfer[transport]`` brings POT (every OT solve) and
dp-accounting (composition). POT is imported lazily, inside the functions that solve.

* DPOT / DPDA (seed 000): :class:`DPOTSource` publishes a random projection of the
  source rows with Gaussian noise; :class:`DPOT` solves OT on the debiased cost;
  :class:`DPDASource` / :class:`DPDA` add a private label histogram and a
  class-regularised coupling for domain adaptation.
* PrivTree synthetic measures (seed 002): :class:`PrivTreeSynthesizer` releases a
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
    DPOTResult,
    DPOTSource,
    MinibatchDPOTResult,
    PublishedMinibatches,
    PublishedSource,
    debiased_cost,
    dpot,
    dpot_minibatch,
    draw_projection,
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
