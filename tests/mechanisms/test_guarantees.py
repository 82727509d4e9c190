import itertools

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer.mechanisms import alpha_identity_guarantees, alpha_identity_kernel
from privinfer.pml import pml_epsilon


def test_tv_and_delta_for_atomless_reference():
    g = pi.AlphaIdentity(0.3, {"x": pi.reference.Uniform(0, 1)}).guarantees()
    assert g.tv == 0.3
    assert g.ldp_delta == 0.3
    assert g.pml_eps is None
    assert "total-variation" in str(g)


@pytest.mark.parametrize("alpha", [0.1, 0.5, 0.9])
def test_pure_ldp_closed_form_for_discrete_reference(alpha):
    probs = [0.1, 0.3, 0.6]
    g = pi.AlphaIdentity(
        alpha, {"g": pi.reference.Categorical(list("abc"), probs=probs)}
    ).guarantees()
    assert g.ldp_eps == pytest.approx(np.log(1 + alpha / ((1 - alpha) * 0.1)))
    # the LDP epsilon is the max log-likelihood ratio of the kernel's columns
    K = alpha_identity_kernel(alpha, np.array(probs))
    assert g.ldp_eps == pytest.approx(np.max(np.log(K.max(axis=0) / K.min(axis=0))))
    assert g.pml_eps == pytest.approx(g.ldp_eps)  # c = 0


@pytest.mark.parametrize(("alpha", "N", "c_frac"), [(0.5, 4, 0.5), (0.2, 7, 0.9), (0.8, 3, 0.1)])
def test_pml_uniform_closed_form(alpha, N, c_frac):
    c = c_frac / N
    g = alpha_identity_guarantees(alpha, np.full(N, 1 / N), c=c)
    expected = np.log((alpha + (1 - alpha) / N) / (c * alpha + (1 - alpha) / N))
    assert g.pml_eps == pytest.approx(expected)


def _brute_pml(K, c, grid=20):
    """Max over priors P >= c on a grid of the simplex of log max_x K(y|x) / P_Y(y)."""
    N = K.shape[0]
    best = -np.inf
    free = 1 - c * N
    for comp in itertools.product(range(grid + 1), repeat=N - 1):
        if sum(comp) > grid:
            continue
        w = np.array([*comp, grid - sum(comp)]) / grid
        P = c + free * w
        py = P @ K
        best = max(best, np.max(np.log(K.max(axis=0) / py)))
    return best


@pytest.mark.parametrize("seed", range(4))
def test_pml_epsilon_matches_brute_force_over_c_interior(seed):
    rng = np.random.default_rng(seed)
    K = rng.dirichlet(np.ones(4), size=3)
    c = rng.uniform(0, 1 / 3)
    exact = pml_epsilon(K, c)
    brute = _brute_pml(K, c)
    assert brute <= exact + 1e-12  # the closed form is the supremum
    assert exact - brute < 1e-12 + 1e-9 or np.isclose(exact, brute)  # vertices are on the grid


def test_large_discrete_space_closed_form_matches_kernel_function():
    q = np.random.default_rng(0).dirichlet(np.ones(3000))
    c = 0.5 / 3000
    fast = alpha_identity_guarantees(0.4, q, c=c).pml_eps
    slow = pml_epsilon(alpha_identity_kernel(0.4, q), c)
    assert fast == pytest.approx(slow, rel=1e-12)


def test_c_is_validated():
    mech = pi.AlphaIdentity(0.5, {"g": pi.reference.Categorical(list("ab"))})
    with pytest.raises(ValueError, match=r"'c' parameter"):
        mech.guarantees(c=0.6)
    with pytest.raises(ValueError, match="finite private spaces"):
        pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)}).guarantees(c=0.1)


@pytest.mark.parametrize("alpha", [1e-8, 1e-12, 1e-17, 1e-300])
def test_ldp_epsilon_of_a_tiny_alpha_is_accurate_not_zero(alpha):
    # e^eps - 1 = alpha / ((1 - alpha) q_min): eps is about 2 alpha here, never 0
    g = alpha_identity_guarantees(alpha, np.array([0.5, 0.5]))
    assert g.ldp_eps > 0
    expected = np.log1p(alpha / ((1 - alpha) * 0.5))
    assert g.ldp_eps == pytest.approx(expected, rel=1e-12, abs=0)
    assert g.pml_eps == g.ldp_eps


def test_large_space_pml_closed_form_is_accurate_for_a_tiny_alpha():
    q = np.full(3000, 1 / 3000)
    c = 0.5 / 3000
    alpha = 1e-14
    # log(1 + alpha (1 - c) / (c alpha + (1 - alpha) q_min))
    expected = np.log1p(alpha * (1 - c) / (c * alpha + (1 - alpha) / 3000))
    fast = alpha_identity_guarantees(alpha, q, c=c).pml_eps
    assert fast == pytest.approx(expected, rel=1e-12, abs=0)


def test_closed_form_matches_the_kernel_function_at_alpha_one_and_zero_mass():
    q = np.concatenate([[0.0], np.full(2999, 1 / 2999)])
    c = 0.25 / 3000
    slow = pml_epsilon(alpha_identity_kernel(0.4, q), c)
    assert alpha_identity_guarantees(0.4, q, c=c).pml_eps == pytest.approx(slow, rel=1e-12, abs=0)
    q = np.full(3000, 1 / 3000)
    slow = pml_epsilon(alpha_identity_kernel(1.0, q), c)  # the identity: -log c
    assert alpha_identity_guarantees(1.0, q, c=c).pml_eps == pytest.approx(slow, rel=1e-12, abs=0)
    assert alpha_identity_guarantees(1.0, q).ldp_eps == np.inf


def test_guarantees_of_a_large_empirical_reference_need_no_enumeration():
    # 300,000 public rows over 10 values: more rows than the enumeration cap
    values = np.repeat(np.arange(10.0), [20_000] + [31_111] * 8 + [280_000 - 8 * 31_111])
    sample = pd.Series(values, name="x")
    g = pi.AlphaIdentity(0.5, {"x": pi.reference.Empirical(sample)}).guarantees(c=0.01)
    assert g.n_points == 10
    q_min = 20_000 / 300_000
    assert g.ldp_eps == pytest.approx(np.log1p(0.5 / (0.5 * q_min)))
    K = alpha_identity_kernel(0.5, np.bincount(values.astype(int)) / values.size)
    assert g.pml_eps == pytest.approx(pml_epsilon(K, 0.01))


def test_guarantees_of_a_large_categorical_product_use_its_factors():
    ref = {
        "a": pi.reference.Categorical(range(500)),
        "b": pi.reference.Categorical(range(500), probs=np.r_[0.1, np.full(499, 0.9 / 499)]),
    }
    g = pi.AlphaIdentity(0.3, ref).guarantees(c=1e-6)
    q_min = (1 / 500) * (0.9 / 499)
    assert g.n_points == 250_000
    assert g.ldp_eps == pytest.approx(np.log1p(0.3 / (0.7 * q_min)))
    expected = np.log1p(0.3 * (1 - 1e-6) / (1e-6 * 0.3 + 0.7 * q_min))
    assert g.pml_eps == pytest.approx(expected)


def test_factor_pmfs_agree_with_the_joint_pmf():
    from privinfer.mechanisms.guarantees import product_guarantees

    pmfs = [np.array([0.2, 0.8]), np.array([0.5, 0.3, 0.2])]
    joint = np.outer(*pmfs).ravel()
    for c in (None, 0.05, 1 / 6):
        by_factor = product_guarantees(0.6, pmfs, c)
        direct = alpha_identity_guarantees(0.6, joint, c)
        assert by_factor.ldp_eps == pytest.approx(direct.ldp_eps)
        assert by_factor.pml_eps == pytest.approx(direct.pml_eps)
        assert by_factor.n_points == direct.n_points == 6


def test_results_report_guarantees_of_a_large_finite_reference():
    from privinfer.models._inputs import release_guarantees

    ref = {"a": pi.reference.Categorical(range(400)), "b": pi.reference.Categorical(range(400))}
    g = release_guarantees(pi.AlphaIdentity(0.5, ref))
    assert g is not None and g.ldp_eps == pytest.approx(np.log1p(160_000))


@pytest.mark.parametrize("c", [0.1, 0.0, -1.0, "junk"])
def test_c_without_a_finite_reference_is_refused_not_ignored(c):
    with pytest.raises(ValueError, match="finite private spaces"):
        alpha_identity_guarantees(0.5, None, c=c)
    with pytest.raises(ValueError, match="finite private spaces"):
        pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)}).guarantees(c=c)
