import numpy as np
import pytest

from privinfer.pml import (
    dobrushin,
    eps_star,
    eta_gamma,
    eta_gamma_bound,
    eta_tv,
    f_divergence,
    gamma_star,
    hellinger_squared,
    high_privacy_threshold,
    kernel_ldp_delta,
    kernel_ldp_epsilon,
    kl_divergence,
    ldp_delta,
    likelihood_ratio_bound,
    pml_epsilon,
    pml_to_approx_ldp,
    pml_to_pure_ldp,
    sdpi_f_bound,
    sdpi_hellinger_bound,
    sdpi_kl_bound,
    sdpi_kl_tv2_bound,
    tv_distance,
    xi_constants,
)


def _random_kernel(rng, n, m, zero_frac=0.0):
    K = rng.gamma(0.7, size=(n, m))
    if zero_frac:
        K[rng.random((n, m)) < zero_frac] = 0.0
        K[np.arange(n), rng.integers(0, m, n)] += 0.1
    return K / K.sum(axis=1, keepdims=True)


def _interior_pmf(rng, n, c):
    return c + (1.0 - c * n) * rng.dirichlet(np.full(n, 0.5))


@pytest.mark.parametrize("seed", range(6))
def test_dobrushin_is_bounded_by_eta_tv_of_the_kernels_pml(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n, m = rng.integers(2, 9), rng.integers(2, 7)
        K = _random_kernel(rng, n, m, zero_frac=0.3 * (seed % 2))
        c = rng.uniform(0, 1.0 / n)
        eps = pml_epsilon(K, c)
        assert dobrushin(K) <= eta_tv(eps, c, n) + 1e-12


def test_eta_tv_reduces_to_ldp_at_c_zero_and_saturates_at_eps_star():
    eps = np.linspace(0, 6, 25)
    got = np.array([eta_tv(e, 0.0, 7) for e in eps])
    np.testing.assert_allclose(got, np.tanh(eps / 2), rtol=1e-12, atol=1e-15)
    assert eps_star(0.0, 7) == np.inf and high_privacy_threshold(0.0, 7) == np.inf
    c, mu = 0.03, 20.0
    es = eps_star(c, mu)
    assert es == pytest.approx(np.log(2 / (c * mu)))
    assert eta_tv(es, c, mu) == pytest.approx(1.0)
    assert eta_tv(es - 1e-3, c, mu) < 1.0
    assert eta_tv(es + 5, c, mu) == 1.0
    assert eta_tv(np.inf, c, mu) == 1.0


def test_conversions_reduce_to_ldp_at_c_zero():
    alpha = np.linspace(0, 3, 13)
    for eps in (0.3, 1.0, 2.5):
        np.testing.assert_allclose(pml_to_approx_ldp(alpha, eps, 0.0, 5), ldp_delta(alpha, eps),
                                   atol=1e-14)
        assert pml_to_pure_ldp(eps, 0.0, 5) == pytest.approx(eps)
        assert gamma_star(eps, 0.0, 5) == pytest.approx(np.exp(eps))
        xi, xt = xi_constants(eps, 0.0, 5)
        assert xi == pytest.approx((np.exp(eps) - 1) ** 2 / np.exp(eps)) and xt == pytest.approx(xi)
        for g in (1.0, 1.5, 3.0):
            assert eta_gamma_bound(g, eps, 0.0, 5) == pytest.approx(
                max(0.0, (np.exp(eps) - g) / (np.exp(eps) + 1)))


@pytest.mark.parametrize("seed", range(4))
def test_ldp_conversions_hold_for_random_kernels_in_the_high_privacy_regime(seed):
    rng = np.random.default_rng(100 + seed)
    checked = 0
    for _ in range(200):
        n, m = rng.integers(2, 7), rng.integers(2, 6)
        K = _random_kernel(rng, n, m, zero_frac=0.1 * (seed % 2))
        c = rng.uniform(0, 0.5 / n)
        eps = pml_epsilon(K, c)
        if eps >= high_privacy_threshold(c, n):
            continue
        checked += 1
        assert kernel_ldp_epsilon(K) <= pml_to_pure_ldp(eps, c, n) + 1e-9
        for a in (0.0, 0.3, 1.0):
            assert kernel_ldp_delta(K, a) <= pml_to_approx_ldp(a, eps, c, n) + 1e-12
            assert eta_gamma(K, np.exp(a)) <= eta_gamma_bound(np.exp(a), eps, c, n) + 1e-12
    assert checked >= 15


def _chi2(t):
    return (t - 1.0) ** 2


@pytest.mark.parametrize("seed", range(5))
def test_sdpi_bounds_hold_on_random_interior_inputs_and_kernels(seed):
    rng = np.random.default_rng(200 + seed)
    for _ in range(60):
        n, m = rng.integers(2, 8), rng.integers(2, 6)
        c = rng.uniform(0, 1.0 / n) * rng.choice([0.0, 0.5, 1.0])
        K = _random_kernel(rng, n, m, zero_frac=0.3 if c > 0 else 0.0)
        P, Q = _interior_pmf(rng, n, c), _interior_pmf(rng, n, c)
        eps = pml_epsilon(K, c)
        if not np.isfinite(eps):
            continue
        tv = tv_distance(P, Q)
        PK, QK = P @ K, Q @ K
        assert tv_distance(PK, QK) <= eta_tv(eps, c, n) * tv + 1e-12
        live = QK > 0
        ratio = np.max(PK[live] / QK[live])
        for rb in ("seed", "refined"):
            assert ratio <= likelihood_ratio_bound(eps, c, n, ratio_bound=rb) * (1 + 1e-12)
            assert kl_divergence(PK, QK) <= sdpi_kl_bound(tv, eps, c, n, ratio_bound=rb) + 1e-12
            assert hellinger_squared(PK, QK) <= sdpi_hellinger_bound(
                tv, eps, c, n, ratio_bound=rb) + 1e-12
            assert f_divergence(PK, QK, _chi2) <= sdpi_f_bound(
                tv, eps, c, n, f=_chi2, ratio_bound=rb) + 1e-12
        chi2 = f_divergence(PK, QK, _chi2)
        assert kl_divergence(PK, QK) <= chi2 + 1e-12
        assert chi2 <= sdpi_kl_tv2_bound(tv, eps, c, n) + 1e-12


def test_closed_form_sdpis_equal_the_general_f_bound():
    for eps, c, mu in [(0.5, 0.0, 4), (1.0, 0.05, 10), (3.0, 0.01, 30)]:
        tv = 0.37
        kl = sdpi_f_bound(tv, eps, c, mu, f=lambda t: t * np.log(t))
        h2 = sdpi_f_bound(tv, eps, c, mu, f=lambda t: (1 - np.sqrt(t)) ** 2)
        assert kl == pytest.approx(sdpi_kl_bound(tv, eps, c, mu), rel=1e-12)
        assert h2 == pytest.approx(sdpi_hellinger_bound(tv, eps, c, mu), rel=1e-12)
    assert sdpi_kl_bound(0.5, 0.0, 0.1, 5) == 0.0
    assert sdpi_hellinger_bound(0.5, 1.0, 0.2, 5) == 0.0  # d_c = 0


def test_dobrushin_of_known_kernels():
    assert dobrushin(np.eye(4)) == 1.0
    assert dobrushin(np.full((3, 3), 1 / 3)) == pytest.approx(0.0)
    K1 = (np.ones((4, 4)) - np.fliplr(np.eye(4))) / 3  # seed 001 K_1
    assert dobrushin(K1) == pytest.approx(1 / 3)
    assert np.isfinite(pml_epsilon(K1, 0.1)) and kernel_ldp_epsilon(K1) == np.inf
