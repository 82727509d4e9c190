import numpy as np
import pytest

import privinfer.pml as pml
from privinfer.pml import PMLGuarantee, optimal_binary_mechanism


def test_every_name_in_all_resolves():
    for name in pml.__all__:
        assert getattr(pml, name) is not None
    assert pml.__all__ == sorted(pml.__all__)


def test_guarantee_prints_every_quantity():
    g = PMLGuarantee(eps=0.5, c=0.05, measure=10)
    text = str(g)
    for key in ("d_c", "eta_TV", "eps*", "high-privacy", "gamma*", "(alpha, delta)-LDP"):
        assert key in text
    assert g.regime == "high privacy"
    assert g.ldp_epsilon == pytest.approx(np.log(np.exp(0.5) * 0.5 / (1 - np.exp(0.5) * 0.5)))
    assert PMLGuarantee(eps=3.0, c=0.05, measure=10).regime == "low privacy"


def test_guarantee_from_kernel_and_from_mechanism():
    mech = optimal_binary_mechanism(1.0, 0.05, [0, 1, 2, 3, 4], 10)
    g = PMLGuarantee.from_kernel(mech.kernel, 0.05)
    assert g.eps == pytest.approx(1.0)
    assert g.dobrushin_measured == pytest.approx(g.eta_tv)
    assert mech.guarantee().eta_tv == pytest.approx(g.eta_tv)
