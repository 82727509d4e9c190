import warnings

import numpy as np
import pytest

from privinfer.exceptions import BasisSizeError, DensityFloorWarning, SingularDesignError
from privinfer.nuisance import (
    BSplineBasis,
    KernelReference,
    PolynomialBasis,
    fit_ridge_series,
    private_cv_kernel,
    private_cv_series,
    private_kernel_regression,
)

REF1 = KernelReference.uniform_grid([(0.0, 1.0)], m=128)


def _data(n=400, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, (n, 1))
    return x, x[:, 0] + 0.1 * rng.normal(size=n)


@pytest.mark.parametrize("h", [0.0, -0.1, np.nan, [0.1, 0.2]])
def test_kernel_rejects_bad_bandwidth(h):
    x, y = _data()
    with pytest.raises(ValueError, match="bandwidth"):
        private_kernel_regression(y, x, alpha=0.5, reference=REF1, bandwidth=h)


def test_cv_kernel_rejects_bad_bandwidth():
    x, y = _data()
    with pytest.raises(ValueError, match="bandwidths"):
        private_cv_kernel(y, x, alpha=0.5, reference=REF1, bandwidths=[0.1, 0.0])


def test_negative_degree_and_knots_are_rejected():
    ref = np.linspace(0, 1, 11)[:, None]
    w = np.full(11, 1 / 11)
    with pytest.raises(ValueError, match="degree"):
        PolynomialBasis.build(-1, ref, w, np.zeros((3, 0)), (0,), (), ("x",))
    with pytest.raises(ValueError, match="n_knots"):
        BSplineBasis.build(-2, ref, w, np.zeros((3, 0)), (0,), (), ("x",))
    with pytest.raises(ValueError, match="spline_degree"):
        BSplineBasis.build(2, ref, w, np.zeros((3, 0)), (0,), (), ("x",), spline_degree=-1)


def test_basis_larger_than_sample_is_a_named_error():
    x, y = _data(n=40)
    ref = np.linspace(0, 1, 101)[:, None]
    w = np.full(101, 1 / 101)
    big = BSplineBasis.build(40, ref, w, np.zeros((40, 0)), (0,), (), ("x",))
    with pytest.raises(BasisSizeError, match="functions"):
        private_cv_series(y, x, alpha=0.5, ref_private=ref, ref_weights=w, bases=[big])
    with pytest.raises(BasisSizeError):
        fit_ridge_series(np.eye(5), np.ones(5), n_obs=5)
    assert issubclass(BasisSizeError, ValueError)


def test_non_positive_denominators_warn_trim_or_raise():
    rng = np.random.default_rng(1)
    n, alpha = 3000, 0.3
    x = rng.uniform(0, 0.5, (n, 1))  # no true mass on (0.5, 1]
    y = x[:, 0] + 0.1 * rng.normal(size=n)
    z = np.where(rng.random((n, 1)) < alpha, x, rng.uniform(0, 1, (n, 1)))
    xe = np.linspace(0.05, 0.95, 40)[:, None]
    kw = {"alpha": alpha, "reference": REF1, "x_eval": xe, "bandwidth": 0.03}
    with pytest.warns(DensityFloorWarning, match="below its floor"):
        res = private_kernel_regression(y, z, **kw)
    assert res.diagnostics.n_floored > 0
    assert np.all(np.isfinite(res.predictions))
    assert res.floored[-1] and not res.floored[0]
    with pytest.warns(DensityFloorWarning):
        trimmed = private_kernel_regression(y, z, on_floor="trim", **kw)
    assert np.isnan(trimmed.predictions[trimmed.floored]).all()
    with pytest.raises(SingularDesignError, match="floor"):
        private_kernel_regression(y, z, on_floor="raise", **kw)


def test_no_floor_at_alpha_one_in_the_data_range():
    x, y = _data()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = private_kernel_regression(y, x, alpha=1.0, reference=REF1, bandwidth=0.05)
    assert res.diagnostics.n_floored == 0


def test_bad_options_are_rejected():
    x, y = _data()
    with pytest.raises(ValueError, match="kind"):
        private_kernel_regression(y, x, alpha=0.5, reference=REF1, kind="loess")
    with pytest.raises(ValueError, match="alpha"):
        private_kernel_regression(y, x, alpha=0.0, reference=REF1)
    with pytest.raises(ValueError, match="on_floor"):
        private_kernel_regression(y, x, alpha=0.5, reference=REF1, on_floor="zero")


def test_singular_logit_jacobian_says_why_and_what_to_use():
    """A singular Jacobian of the private logistic moments is a SingularDesignError that
    names the likely causes and the automatic route, not a bare LinAlgError."""
    from privinfer.nuisance.logit import newton_logit

    def moment(g, with_jac):
        return np.array([0.1, 0.2]), (np.zeros((2, 2)) if with_jac else None), 0.0

    empty = np.empty(0)
    with pytest.raises(SingularDesignError, match=r"collinear.*riesz='auto'"):
        newton_logit(moment, 0.4, (empty, empty, np.zeros(1), np.ones(1)), label="fold 0")
