"""The two-point lower bound of ``benchmarks/dpot_lower_bound.py`` never exceeds what an
estimator actually achieves.

One source point in one dimension, one target point, no projection (``M = 1``): the cost
is :math:`W = (x - y)^2` and :math:`T = (z - y)^2 - \\sigma^2` is an unbiased estimate from
the release :math:`z = x + N(0, \\sigma^2)`, with standard deviation
:math:`\\sqrt{4(x - y)^2\\sigma^2 + 2\\sigma^4}`. A bound on the spread of every estimator
with at most 10% relative bias that exceeded it would be wrong (a mis-scaled
:math:`\\chi^2`, for instance).
"""

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ot")
pytest.importorskip("sklearn")
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from dpot_lower_bound import bound


@pytest.mark.parametrize("sigma", [0.3, 1.0, 3.0])
def test_bound_is_below_an_unbiased_estimators_spread(sigma):
    x, y = np.array([[1.0]]), np.array([[3.0]])
    W = 4.0
    value, _, chi2 = bound(x, y, np.eye(1), sigma, 0.1)
    sd_unbiased = np.sqrt(4 * W * sigma**2 + 2 * sigma**4) / W
    assert 0.0 < value <= sd_unbiased
    assert np.isfinite(chi2)


def test_bound_grows_with_the_noise():
    rng = np.random.default_rng(0)
    xs, xt = rng.normal(size=(20, 2)), rng.normal(1.0, 1.0, size=(20, 2))
    M = rng.normal(size=(2, 4)) / 2.0
    low = bound(xs, xt, M, 0.5, 0.1)[0]
    high = bound(xs, xt, M, 8.0, 0.1)[0]
    assert high > 5 * max(low, 1e-3)
