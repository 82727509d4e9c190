import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer.inversion import (
    ReferenceMoments,
    column_groups,
    index_expectation,
    invert,
    private_cross_moment,
    private_expectation,
    private_gram,
    private_mean,
    qbar_linear,
    qbar_quadratic,
)
from privinfer.nuisance import PolynomialBasis


def _basis_and_data(n=40, m=128, seed=0):
    rng = np.random.default_rng(seed)
    x_ref = rng.uniform(-1, 1, (m, 2))
    w = rng.normal(size=(n, 1))
    z = rng.uniform(-1, 1, (n, 2))
    basis = PolynomialBasis.build(2, x_ref, np.full(m, 1 / m), w, (0, 1), (3,), ("x1", "x2", "w"))
    return rng, basis, x_ref, w, z


def test_separable_gram_matches_plain_n_times_m_loop_oracle():
    rng, basis, x_ref, w, z = _basis_and_data()
    alpha, n, m = 0.37, z.shape[0], x_ref.shape[0]
    weights = rng.integers(0, 2, n).astype(float)
    y = rng.normal(size=n)
    A, P = basis.split(z, w)
    ref = ReferenceMoments.from_features(basis.private_only(x_ref), np.full(m, 1 / m))
    fast_G = private_gram(P, ref, alpha, A=A, weights=weights)
    fast_c = private_cross_moment(P, y, ref, alpha, A=A, weights=weights)
    fast_m = private_mean(P, ref, alpha, A=A)
    # oracle: for each row, average the whole function over the reference points
    G = np.zeros_like(fast_G)
    c = np.zeros_like(fast_c)
    mm = np.zeros_like(fast_m)
    for i in range(n):
        Ai, Pi = basis.split(z[i : i + 1], w[i : i + 1])
        phi_i = (Ai * Pi)[0]
        Ar, Pr = basis.split(x_ref, np.repeat(w[i : i + 1], m, axis=0))
        phi_r = Ar * Pr
        qbar_outer = phi_r.T @ phi_r / m
        qbar_lin = phi_r.mean(axis=0)
        G += weights[i] * (np.outer(phi_i, phi_i) - (1 - alpha) * qbar_outer) / alpha
        c += weights[i] * y[i] * (phi_i - (1 - alpha) * qbar_lin) / alpha
        mm += (phi_i - (1 - alpha) * qbar_lin) / alpha
    np.testing.assert_allclose(fast_G, G / n, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fast_c, c / n, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(fast_m, mm / n, rtol=1e-10, atol=1e-10)


def test_row_wise_qbar_helpers_match_loop():
    rng, basis, x_ref, w, z = _basis_and_data(n=15, m=64, seed=1)
    m = x_ref.shape[0]
    A, _ = basis.split(z, w)
    ref = ReferenceMoments.from_features(basis.private_only(x_ref), np.full(m, 1 / m))
    theta, beta = rng.normal(size=basis.n_basis), rng.normal(size=basis.n_basis)
    lin, quad = qbar_linear(beta, ref.mean, A), qbar_quadratic(theta, beta, ref.outer, A)
    for i in range(z.shape[0]):
        Ar, Pr = basis.split(x_ref, np.repeat(w[i : i + 1], m, axis=0))
        phi_r = Ar * Pr
        assert lin[i] == pytest.approx(np.mean(phi_r @ beta), rel=1e-10, abs=1e-12)
        assert quad[i] == pytest.approx(
            np.mean((phi_r @ theta) * (phi_r @ beta)), rel=1e-10, abs=1e-12
        )


def _repeated_columns(n=300, seed=3):
    """Public factors as a sieve makes them: a column of ones shared by many functions,
    and a few public atoms each shared by several."""
    rng = np.random.default_rng(seed)
    atoms = np.column_stack([np.ones(n), rng.normal(size=(n, 3)), rng.random(n) < 0.3])
    which = rng.permutation(np.r_[np.zeros(6, int), np.arange(1, 5).repeat(3)])
    return atoms[:, which], which


def test_column_groups_are_exact_and_qbar_quadratic_agrees_with_the_full_sum():
    A, which = _repeated_columns()
    first, inv = column_groups(A)
    assert first.size == 5  # the ones and four distinct public atoms, 18 columns
    np.testing.assert_array_equal(A[:, first][:, inv], A)
    # columns in one group are equal; columns in different groups are not
    assert np.array_equal(inv[:, None] == inv[None, :], which[:, None] == which[None, :])
    rng = np.random.default_rng(4)
    J = A.shape[1]
    M = rng.normal(size=(J, J))
    R = M @ M.T / J
    theta, beta = rng.normal(size=J), rng.normal(size=J)
    direct = np.einsum("ij,ij->i", A @ (np.outer(theta, beta) * R), A)
    np.testing.assert_allclose(qbar_quadratic(theta, beta, R, A), direct, rtol=1e-12, atol=1e-12)
    # read-only arrays remember their groups; an array changed in place is regrouped
    ro = A.copy()
    ro.setflags(write=False)
    assert column_groups(ro) is column_groups(ro)
    B = A.copy()
    B[0, first[1]] += 1.0  # one member of a group now differs
    assert column_groups(B) is None or column_groups(B)[0].size > 5
    np.testing.assert_allclose(
        qbar_quadratic(theta, beta, R, B),
        np.einsum("ij,ij->i", B @ (np.outer(theta, beta) * R), B),
        rtol=1e-12,
        atol=1e-12,
    )


def test_column_groups_refuse_when_few_columns_repeat():
    rng = np.random.default_rng(5)
    assert column_groups(rng.normal(size=(50, 8))) is None
    assert column_groups(np.ones((0, 8))) is None


def test_inverting_the_product_is_not_the_product_of_inversions():
    ref = ReferenceMoments.from_features(np.array([[0.0], [2.0]]), np.array([0.5, 0.5]))
    P = np.array([[1.0], [2.0]])
    whole = private_gram(P, ref, 0.5)[0, 0]
    naive = np.mean(invert(P[:, 0], ref.mean[0], 0.5) ** 2)
    assert whole != pytest.approx(naive)


def test_private_moments_are_unbiased_for_true_data_moments():
    # Monte Carlo over privatisations of one fixed true sample; tolerance from the MC SE
    rng = np.random.default_rng(11)
    n, reps, alpha = 400, 400, 0.4
    x = rng.beta(2, 5, n) * 2 - 1  # true X is far from the uniform reference
    g = rng.choice(["a", "b", "c"], n, p=[0.6, 0.3, 0.1])
    y = x + (g == "b") + rng.normal(size=n)
    mech = pi.AlphaIdentity(
        alpha, {"x": pi.reference.Uniform(-1, 1), "g": pi.reference.Categorical(list("abc"))}
    )
    raw = pd.DataFrame({"x": x, "g": g})

    def feats(frame):
        xx = frame["x"].to_numpy(dtype=float)
        gb = (frame["g"].astype(str) == "b").to_numpy(dtype=float)
        return np.column_stack([np.ones(len(frame)), xx, xx**2, gb, xx * gb])

    draw = mech.reference.draw_for_moments(8192, random_state=0)
    ref = ReferenceMoments.from_features(feats(draw.frame), draw.weights, draw.replicate)
    truth_G = feats(raw).T @ feats(raw) / n
    truth_c = feats(raw).T @ y / n
    est_G, est_c = [], []
    for seed in range(reps):
        P = feats(mech.privatize(raw, shuffle=False, random_state=seed))
        est_G.append(private_gram(P, ref, alpha))
        est_c.append(private_cross_moment(P, y, ref, alpha))
    est_G, est_c = np.array(est_G), np.array(est_c)
    se_G = est_G.std(axis=0, ddof=1) / np.sqrt(reps)
    se_c = est_c.std(axis=0, ddof=1) / np.sqrt(reps)
    qmc_err = 1e-3  # Sobol error of polynomial moments at M = 8192 is far below this
    assert np.all(np.abs(est_G.mean(axis=0) - truth_G) <= 4.5 * se_G + qmc_err)
    assert np.all(np.abs(est_c.mean(axis=0) - truth_c) <= 4.5 * se_c + qmc_err)
    # and the naive (uninverted) moments are clearly biased
    naive = np.mean(
        [
            feats(mech.privatize(raw, random_state=s)).T
            @ feats(mech.privatize(raw, random_state=s))
            / n
            for s in range(20)
        ],
        axis=0,
    )
    assert np.abs(naive - truth_G).max() > 0.05


def test_reference_error_is_reported_and_zero_when_exact():
    ref_q = pi.reference.ProductReference({"x": pi.reference.Uniform(0, 1)})
    draw = ref_q.qmc_sample(2048, random_state=1)
    x = draw.frame[["x"]].to_numpy()
    mom = ReferenceMoments.from_features(np.column_stack([x, x**3]), draw.weights, draw.replicate)
    err = mom.error(lambda m, o: m[1])
    assert 0 < err < 1e-3
    assert abs(mom.mean[1] - 0.25) < 6 * err
    exact = ReferenceMoments.from_features(np.array([[1.0], [0.0]]), np.array([0.5, 0.5]))
    assert exact.exact and exact.error(lambda m, o: m[0]) == 0.0


def test_private_expectation_of_function_of_private_columns():
    rng = np.random.default_rng(3)
    raw = pd.DataFrame({"x": rng.beta(5, 2, 20_000)})
    mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
    est, err = private_expectation(
        lambda f: np.exp(f["x"].to_numpy()), mech.privatize(raw, random_state=4), mech
    )
    truth = np.exp(raw["x"]).mean()
    se = np.exp(raw["x"]).std() * 2 / np.sqrt(20_000)  # inflated by 1/alpha
    assert abs(est - truth) < 5 * se
    assert err < 1e-3


def test_index_expectation_exact_on_few_values_and_accurate_on_grid():
    rng = np.random.default_rng(5)
    eta = rng.normal(size=2000)
    f = np.column_stack([np.ones(2000), eta])
    w = np.full(2000, 1 / 2000)
    t_few = np.array([0.0, 1.0, 0.0])
    vals, err = index_expectation(t_few, eta, f, w, np.tanh)
    assert err == 0.0
    np.testing.assert_allclose(vals[0], np.tanh(eta) @ f / 2000, rtol=1e-12)
    t_many = rng.normal(size=5000)
    vals, err = index_expectation(t_many, eta, f, w, np.tanh)
    direct = np.tanh(t_many[:50, None] + eta[None, :]) @ (f * w[:, None])
    np.testing.assert_allclose(vals[:50], direct, atol=max(10 * err, 1e-7))
