import time

import numpy as np
import pytest

from privinfer.nuisance import KernelReference, private_kernel_regression


def _plain_fit(x, y, xe, h, kind, cells=None, ecells=None):
    """Ordinary Nadaraya-Watson / local linear by an explicit loop (Gaussian kernel)."""
    out = np.empty(xe.shape[0])
    for k, e in enumerate(xe):
        w = np.exp(-0.5 * (((x - e) / h) ** 2).sum(axis=1))
        if cells is not None:
            w = w * (cells == ecells[k])
        if kind == "nw":
            out[k] = w @ y / w.sum()
        else:
            X = np.column_stack([np.ones(len(x)), x - e])
            out[k] = np.linalg.solve(X.T @ (X * w[:, None]), X.T @ (w * y))[0]
    return out


def _data(rng, n, alpha, d=2):
    x = rng.uniform(0, 1, (n, d))
    y = np.sin(3 * x[:, 0]) + x[:, -1] ** 2 + 0.1 * rng.normal(size=n)
    keep = rng.random(n) < alpha
    z = np.where(keep[:, None], x, rng.uniform(0, 1, (n, d)))
    return x, y, z


@pytest.mark.parametrize("kind", ["nw", "local_linear"])
def test_private_fit_at_alpha_one_equals_ordinary_fit(kind):
    rng = np.random.default_rng(0)
    x, y, _ = _data(rng, 1500, 1.0)
    xe = rng.uniform(0.1, 0.9, (40, 2))
    h = np.array([0.08, 0.11])
    ref = KernelReference.uniform_grid([(0, 1), (0, 1)], m=16)
    res = private_kernel_regression(
        y, x, alpha=1.0, reference=ref, x_eval=xe, bandwidth=h, kind=kind, method="exact"
    )
    np.testing.assert_allclose(res.predictions, _plain_fit(x, y, xe, h, kind), rtol=1e-10)
    assert res.diagnostics.n_floored == 0
    binned = private_kernel_regression(
        y, x, alpha=1.0, reference=ref, x_eval=xe, bandwidth=h, kind=kind
    )
    np.testing.assert_allclose(binned.predictions, res.predictions, atol=5e-4)


def test_categorical_and_public_cells_match_exactly_at_alpha_one():
    rng = np.random.default_rng(1)
    n = 1200
    x = rng.uniform(0, 1, (n, 1))
    g = rng.integers(0, 3, n)
    d = rng.integers(0, 2, n)
    y = x[:, 0] + g + 2 * d + 0.1 * rng.normal(size=n)
    xe = rng.uniform(0, 1, (30, 1))
    ge, de = rng.integers(0, 3, 30), rng.integers(0, 2, 30)
    ref = KernelReference(
        np.repeat(np.linspace(0, 1, 30), 3)[:, None],
        np.tile(np.arange(3), 30)[:, None],
        np.full(90, 1 / 90),
    )
    res = private_kernel_regression(
        y,
        x,
        alpha=1.0,
        reference=ref,
        x_eval=xe,
        x_cat=g,
        x_cat_eval=ge,
        public_cat=d,
        public_cat_eval=de,
        bandwidth=0.1,
        method="exact",
    )
    plain = _plain_fit(x, y, xe, np.array([0.1]), "nw", cells=g * 2 + d, ecells=ge * 2 + de)
    np.testing.assert_allclose(res.predictions, plain, rtol=1e-10)


@pytest.mark.parametrize("kind", ["nw", "local_linear"])
def test_binned_agrees_with_exact_when_private(kind):
    rng = np.random.default_rng(2)
    _, y, z = _data(rng, 3000, 0.6)
    ref = KernelReference.uniform_grid([(0, 1), (0, 1)], m=48)
    xe = rng.uniform(0.15, 0.85, (60, 2))
    kw = {"alpha": 0.6, "reference": ref, "x_eval": xe, "bandwidth": 0.12, "kind": kind}
    ex = private_kernel_regression(y, z, method="exact", **kw)
    bn = private_kernel_regression(y, z, method="binned", **kw)
    np.testing.assert_allclose(bn.predictions, ex.predictions, atol=2e-3)
    np.testing.assert_allclose(bn.density, ex.density, rtol=2e-3)


def test_deconvolution_removes_the_attenuation_of_naive_fit():
    rng = np.random.default_rng(3)
    alpha = 0.5
    _, y, z = _data(rng, 40_000, alpha)
    ref = KernelReference.uniform_grid([(0, 1), (0, 1)], m=64)
    xe = rng.uniform(0.2, 0.8, (200, 2))
    truth = np.sin(3 * xe[:, 0]) + xe[:, 1] ** 2
    priv = private_kernel_regression(y, z, alpha=alpha, reference=ref, x_eval=xe, bandwidth=0.1)
    naive = private_kernel_regression(y, z, alpha=1.0, reference=ref, x_eval=xe, bandwidth=0.1)
    rmse_priv = np.sqrt(np.mean((priv.predictions - truth) ** 2))
    rmse_naive = np.sqrt(np.mean((naive.predictions - truth) ** 2))
    assert rmse_priv < 0.08
    assert rmse_naive > 2 * rmse_priv
    # the deconvolved density estimates the uniform density 1
    assert abs(np.median(priv.density) - 1.0) < 0.1


def test_mixed_public_continuous_covariate_is_unbiased():
    rng = np.random.default_rng(4)
    n, alpha = 30_000, 0.6
    x = rng.uniform(0, 1, (n, 1))
    v = rng.uniform(0, 1, n)
    y = np.cos(3 * x[:, 0]) + v + 0.1 * rng.normal(size=n)
    z = np.where(rng.random((n, 1)) < alpha, x, rng.uniform(0, 1, (n, 1)))
    ref = KernelReference.uniform_grid([(0, 1)], m=256)
    xe, ve = rng.uniform(0.2, 0.8, (100, 1)), rng.uniform(0.2, 0.8, 100)
    res = private_kernel_regression(
        y, z, alpha=alpha, reference=ref, x_eval=xe, public=v, public_eval=ve, bandwidth=0.1
    )
    truth = np.cos(3 * xe[:, 0]) + ve
    assert np.sqrt(np.mean((res.predictions - truth) ** 2)) < 0.1


def test_reference_error_is_reported_for_qmc_reference():
    import privinfer as pi

    rng = np.random.default_rng(5)
    mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
    ref = KernelReference.from_mechanism(mech, ["x"], m=4096, random_state=0)
    _, y, z = _data(rng, 2000, 0.5, d=1)
    res = private_kernel_regression(y, z, alpha=0.5, reference=ref, bandwidth=0.1)
    assert 0 < res.diagnostics.reference_error < 0.05


def test_speed_n_1e5_d_2():
    rng = np.random.default_rng(6)
    _, y, z = _data(rng, 100_000, 0.6)
    ref = KernelReference.uniform_grid([(0, 1), (0, 1)], m=64)
    t0 = time.perf_counter()
    res = private_kernel_regression(y, z, alpha=0.6, reference=ref, bandwidth=0.05)
    assert time.perf_counter() - t0 < 5.0
    assert res.predictions.shape == (100_000,)


@pytest.mark.parametrize("method", ["binned", "exact"])
def test_a_point_many_bandwidths_from_every_row_is_floored_even_at_alpha_one(method):
    """At alpha = 1 there is no statistical floor, but a denominator at the round-off
    level (a point more than five bandwidths from every row) has no correct digit: the
    binned ratio there left the range of the responses (-0.84 against responses in
    [1.79, 4.20]) and, in the kernel outcome route, one such held-out row carried 99% of an
    ATE's variance. Such points are floored and filled with the mean response."""
    rng = np.random.default_rng(0)
    n = 500
    x = np.column_stack([rng.uniform(0, 10, n), rng.uniform(0, 1, n)])
    y = 3 + np.sin(x[:, 0]) + rng.normal(scale=0.1, size=n)
    ref = KernelReference.uniform_grid([(0.0, 10.0), (-1.0, 1.0)], m=64)
    ev = np.array([[5.0, -0.99], [2.0, -0.9], [5.0, 0.5]])  # the first two are isolated
    fit = private_kernel_regression(
        y, x, alpha=1.0, reference=ref, x_eval=ev, method=method, warn=False
    )
    assert fit.floored.tolist() == [True, True, False]
    np.testing.assert_allclose(fit.predictions[:2], y.mean(), rtol=1e-4)
    assert y.min() < fit.predictions[2] < y.max()
    assert fit.diagnostics.n_floored == 2
