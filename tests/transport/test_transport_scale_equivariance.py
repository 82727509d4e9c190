"""The transport-cost estimators do not depend on the units of the data.

Fitting on ``c X`` (metres to millimetres) must give ``c**2`` times the squared-Euclidean
cost, up to rounding: the least-squares extrapolation and the EM of the deconvolution once
stopped on absolute tolerances, so a rescale changed where they stopped.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip("ot")
pytest.importorskip("dp_accounting")

from privinfer.transport import DPOTSource, estimate_transport_cost
from privinfer.transport._deconvolution import fit_mixture
from privinfer.transport._extrapolation import fit_hyperbolic

pytestmark = [
    pytest.mark.filterwarnings("ignore::privinfer.exceptions.SeedReleaseWarning"),
    pytest.mark.filterwarnings("ignore::privinfer.exceptions.TransportNoiseWarning"),
]

_RTOL = 1e-10


@pytest.fixture(scope="module")
def release():
    """Two clusters in 3-D against a Gaussian target, published with ell = 16."""
    rng = np.random.default_rng(1)
    Xs = np.vstack([rng.normal(0.0, 1.0, (40, 3)), rng.normal(4.0, 1.0, (40, 3))])
    Xt = rng.normal(1.0, 1.5, size=(60, 3))
    pub = DPOTSource(eps=8.0, delta=1e-5, ell=16, random_state=0).publish(Xs)
    return pub, Xt


def _rescaled(pub, c):
    """The release of ``c Xs`` with the same projection and noise draw."""
    return dataclasses.replace(pub, rows=pub.rows * c, sigma=pub.sigma * c)


@pytest.mark.parametrize("c", [1e3, 1e-3])
@pytest.mark.parametrize("estimator", ["extrapolation", "deconvolution"])
def test_cost_estimate_is_scale_equivariant(release, estimator, c):
    pub, Xt = release
    base = estimate_transport_cost(pub, Xt, estimator=estimator, random_state=3)
    scaled = estimate_transport_cost(_rescaled(pub, c), Xt * c, estimator=estimator,
                                     random_state=3)
    assert scaled.n_components == base.n_components
    for field in ("estimate", "std_error", "lower", "upper", "plan_excess"):
        assert getattr(scaled, field) / c**2 == pytest.approx(
            getattr(base, field), rel=_RTOL), field


@pytest.mark.parametrize("c", [1e3, 1e-3])
def test_hyperbolic_fit_is_scale_equivariant(release, c):
    pub, Xt = release
    est = estimate_transport_cost(pub, Xt, estimator="extrapolation")
    tau, g, h = est.noise_levels, est.curve_in, est.curve_out
    params, grad = fit_hyperbolic(tau, g, h)
    params_c, grad_c = fit_hyperbolic(tau, c * g, c * h)
    np.testing.assert_allclose(params_c / [c, c, 1.0], params, rtol=_RTOL)
    np.testing.assert_allclose(grad_c, grad, rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("c", [1e3, 1e-3])
def test_mixture_em_is_scale_equivariant(c):
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(0.0, 1.0, (60, 2)), rng.normal(3.0, 0.5, (60, 2))])
    a = np.full(120, 1.0 / 120)
    Sigma = 0.2 * np.eye(2)
    base = fit_mixture(X, a, Sigma, 2, np.random.default_rng(7))
    scaled = fit_mixture(c * X, a, c**2 * Sigma, 2, np.random.default_rng(7))
    np.testing.assert_allclose(scaled.weights, base.weights, rtol=_RTOL)
    np.testing.assert_allclose(scaled.means / c, base.means, rtol=_RTOL)
    np.testing.assert_allclose(scaled.covariances / c**2, base.covariances, rtol=_RTOL,
                               atol=1e-14)
    # the log-likelihood moves by -k log c and the AIC by twice the effective n times that
    assert scaled.loglik == pytest.approx(base.loglik - 2 * np.log(c), rel=_RTOL)
