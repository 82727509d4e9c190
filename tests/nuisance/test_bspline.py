import numpy as np
import pytest

from privinfer.inversion import ReferenceMoments, private_cross_moment, private_gram
from privinfer.nuisance import BSplineBasis, fit_ridge_series, ridge_penalty


def _basis(n_knots=4, order=1, public=None, k=1):
    ref = np.random.default_rng(0).uniform(0, 1, (4096, k))
    pub = np.zeros((10, 0)) if public is None else public
    names = tuple(f"x{j}" for j in range(k)) + tuple(f"v{j}" for j in range(pub.shape[1]))
    return ref, BSplineBasis.build(
        n_knots,
        ref,
        np.full(4096, 1 / 4096),
        pub,
        tuple(range(k)),
        tuple(range(k, k + pub.shape[1])),
        names,
        interaction_order=order,
    )


def test_cubic_spline_basis_reproduces_cubic_polynomials():
    _, basis = _basis(n_knots=3)
    x = np.linspace(0, 1, 200)[:, None]
    P = basis.private_only(x)
    target = 1 - 2 * x[:, 0] + 3 * x[:, 0] ** 3
    coef, *_ = np.linalg.lstsq(P, target, rcond=None)
    np.testing.assert_allclose(P @ coef, target, atol=1e-10)
    assert basis.n_basis == 1 + 3 + 3


def test_knots_come_from_the_reference_not_the_data():
    ref, basis = _basis(n_knots=3)
    spline = basis.marginals[0]
    inner = spline.knots[4:-4]
    np.testing.assert_allclose(inner, np.quantile(ref[:, 0], [0.25, 0.5, 0.75]), atol=2e-3)


def test_tensor_product_and_public_split():
    rng = np.random.default_rng(1)
    pub = np.column_stack([rng.integers(0, 2, 50).astype(float), rng.normal(size=50)])
    ref, basis = _basis(n_knots=2, order=3, public=pub, k=1)
    A, P = basis.split(ref[:50], pub)
    assert basis.has_public and A is not None
    # full tensor product: (1 + 5) * 2 * (1 + 5) functions
    assert basis.n_basis == 6 * 2 * 6
    # reference points use the private factor only
    np.testing.assert_allclose(basis.private_only(ref[:50]), P)
    assert np.linalg.matrix_rank(A * P) == 50


def test_ridge_series_at_alpha_one_is_ordinary_ridge():
    rng = np.random.default_rng(2)
    x = rng.uniform(0, 1, (500, 1))
    y = np.sin(4 * x[:, 0]) + 0.1 * rng.normal(size=500)
    ref, basis = _basis(n_knots=5)
    rm = ReferenceMoments.from_features(basis.private_only(ref), np.full(len(ref), 1 / len(ref)))
    P = basis.private_only(x)
    G, c = private_gram(P, rm, 1.0), private_cross_moment(P, y, rm, 1.0)
    Om = ridge_penalty(basis)
    fit = fit_ridge_series(G, c, ridge=0.01, penalty=Om, alpha=1.0, n_obs=500)
    lam = 0.01 * np.trace(P.T @ P) / np.trace(Om)
    direct = np.linalg.solve(P.T @ P + lam * Om, P.T @ y)
    np.testing.assert_allclose(fit.coef, direct, rtol=1e-9)
    assert fit.repair is None
    # the difference penalty leaves the constant unpenalised and is PSD
    const = np.linalg.lstsq(P, np.ones(500), rcond=None)[0]
    assert abs(const @ Om @ const) < 1e-10
    assert np.linalg.eigvalsh(Om).min() > -1e-10


def test_private_spline_fit_recovers_truth_from_noisy_release():
    rng = np.random.default_rng(3)
    n, alpha = 40_000, 0.5
    x = rng.uniform(0, 1, (n, 1))
    y = np.sin(4 * x[:, 0]) + 0.1 * rng.normal(size=n)
    z = np.where(rng.random((n, 1)) < alpha, x, rng.uniform(0, 1, (n, 1)))
    ref, basis = _basis(n_knots=4)
    rm = ReferenceMoments.from_features(basis.private_only(ref), np.full(len(ref), 1 / len(ref)))
    P = basis.private_only(z)
    fit = fit_ridge_series(
        private_gram(P, rm, alpha), private_cross_moment(P, y, rm, alpha), alpha=alpha, n_obs=n
    )
    grid = np.linspace(0.05, 0.95, 50)[:, None]
    err = basis.private_only(grid) @ fit.coef - np.sin(4 * grid[:, 0])
    assert np.sqrt(np.mean(err**2)) < 0.08


def test_penalty_rejects_negative_ridge():
    with pytest.raises(ValueError, match="ridge"):
        fit_ridge_series(np.eye(2), np.ones(2), ridge=-1.0)
