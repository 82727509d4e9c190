"""Tests of DPOT / DPDA (seed 000) against POT and dp_accounting."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

ot = pytest.importorskip("ot")
dpa = pytest.importorskip("dp_accounting")

from privinfer.transport.accounting import minibatch_privacy  # noqa: E402
from privinfer.transport.calibration import (  # noqa: E402
    analytic_gaussian_sigma,
    max_row_norm,
    record_sensitivity,
    theorem2_sigma,
)
from privinfer.transport.da import (  # noqa: E402
    DPDA,
    DPDASource,
    discrete_laplace,
    labels_from_counts,
)
from privinfer.transport.dpot import (  # noqa: E402
    DPOT,
    DPOTSource,
    debiased_cost,
    dpot,
    dpot_minibatch,
    draw_projection,
    publish_rows,
    solve_transport,
)

#: the seeded releases of this module are research runs on purpose
pytestmark = pytest.mark.filterwarnings("ignore::privinfer.exceptions.SeedReleaseWarning")


@pytest.fixture
def two_domains():
    rng = np.random.default_rng(12)
    Xs = rng.normal(size=(40, 6))
    Xt = rng.normal(1.0, 1.5, size=(50, 6))
    return Xs, Xt


def test_projection_has_variance_one_over_ell():
    M = draw_projection(200, 50, random_state=0)
    assert M.shape == (200, 50)
    assert abs(M.var() - 1 / 50) < 5 * np.sqrt(2 / M.size) / 50


def test_debiased_cost_is_unbiased_entrywise_over_noise(two_domains):
    Xs, Xt = two_domains
    Xs, Xt = Xs[:5], Xt[:4]
    M = draw_projection(6, 8, random_state=1)
    sigma, reps = 1.3, 4000
    rng = np.random.default_rng(2)
    draws = np.stack([debiased_cost(publish_rows(Xs, M, sigma, rng), Xt, M, sigma)
                      for _ in range(reps)])
    target = ot.dist(Xs @ M, Xt @ M)
    se = draws.std(axis=0, ddof=1) / np.sqrt(reps)
    assert np.all(np.abs(draws.mean(axis=0) - target) < 4.5 * se)


def test_debiased_cost_is_unbiased_for_raw_distance_over_projection_and_noise(two_domains):
    Xs, Xt = two_domains
    Xs, Xt = Xs[:3], Xt[:3]
    sigma, reps = 0.7, 4000
    rng = np.random.default_rng(3)
    draws = []
    for _ in range(reps):
        M = draw_projection(6, 5, rng)
        draws.append(debiased_cost(publish_rows(Xs, M, sigma, rng), Xt, M, sigma))
    draws = np.stack(draws)
    se = draws.std(axis=0, ddof=1) / np.sqrt(reps)
    assert np.all(np.abs(draws.mean(axis=0) - ot.dist(Xs, Xt)) < 4.5 * se)


def test_constant_shift_leaves_emd_plan_unchanged(two_domains):
    Xs, Xt = two_domains
    M = draw_projection(6, 10, random_state=4)
    Z = publish_rows(Xs, M, 0.8, random_state=5)
    raw = ot.dist(Z, Xt @ M)
    plan_raw = solve_transport(raw)
    plan_deb = solve_transport(debiased_cost(Z, Xt, M, 0.8))
    np.testing.assert_allclose(plan_raw, plan_deb, atol=1e-12)


def test_small_noise_large_ell_approaches_pot_emd2(two_domains):
    Xs, Xt = two_domains
    w_true = ot.emd2(np.full(40, 1 / 40), np.full(50, 1 / 50), ot.dist(Xs, Xt))
    M = draw_projection(6, 4000, random_state=6)
    res = dpot(_manual_publication(Xs, M, 1e-6), Xt)
    assert abs(res.w_tilde - w_true) / w_true < 0.05
    plan_true = ot.emd(np.full(40, 1 / 40), np.full(50, 1 / 50), ot.dist(Xs, Xt))
    assert np.abs(res.plan - plan_true).sum() < 0.5  # most mass on the same pairs
    # with the identity "projection" and no noise it is POT exactly
    exact = dpot(_manual_publication(Xs, np.eye(6), 0.0), Xt)
    assert exact.w_tilde == pytest.approx(w_true, rel=1e-10)


def _manual_publication(Xs, M, sigma):
    from privinfer.transport.accounting import PrivacyStatement
    from privinfer.transport.dpot import PublishedSource

    stmt = PrivacyStatement(eps=np.inf, delta=1.0, neighbour="entry", mechanism="test",
                            sigma=sigma, sensitivity=max_row_norm(M))
    return PublishedSource(projection=M, rows=publish_rows(Xs, M, sigma, 0), sigma=sigma,
                           privacy=stmt)


@pytest.mark.parametrize("method", ["emd", "sinkhorn"])
@pytest.mark.parametrize("mass", [1.0, 2.0, 250.0])
def test_single_row_or_column_plan_has_the_marginals(method, mass):
    # the only coupling used to be outer(a, b), whose mass is sum(a) * sum(b)
    b = np.array([0.2, 0.5, 0.3]) * mass
    C = np.array([[1.0, 2.0, 3.0]])
    for a_w, b_w, cost in [(np.array([mass]), b, C), (b, np.array([mass]), C.T)]:
        plan = solve_transport(cost, a_w, b_w, method=method, reg=1.0)
        np.testing.assert_allclose(plan.sum(axis=1), a_w, rtol=1e-12)
        np.testing.assert_allclose(plan.sum(axis=0), b_w, rtol=1e-12)
        assert np.sum(plan * cost) == pytest.approx(ot.emd2(a_w, b_w, cost), rel=1e-12)


@pytest.mark.parametrize("unit", [1e-4, 1e-6, 1e-12])
def test_emd_plan_does_not_depend_on_the_units_of_the_cost(two_domains, unit):
    # costs below about 1e-9 fell under POT's absolute tolerances and gave non-optimal
    # plans (about 30% too costly for costs of order 1e-12)
    Xs, Xt = two_domains
    C = ot.dist(Xs, Xt)
    ref = ot.emd(np.full(40, 1 / 40), np.full(50, 1 / 50), C)
    plan = solve_transport(C * unit**2)
    np.testing.assert_allclose(plan, ref, atol=1e-12)


def test_weights_of_large_mass_within_tolerance_match_pot(two_domains):
    # equal sums to float32 precision used to reach POT's absolute 6-decimal assertion
    # (a bare AssertionError) once the total mass was in the thousands
    Xs, Xt = two_domains
    rng = np.random.default_rng(3)
    a64, b64 = rng.random(40), rng.random(50)
    a64, b64 = 1e4 * a64 / a64.sum(), 1e4 * b64 / b64.sum()
    a32, b32 = a64.astype(np.float32), b64.astype(np.float32)
    assert abs(float(a32.sum(dtype=float)) - float(b32.sum(dtype=float))) > 1.5e-6
    C = ot.dist(Xs, Xt)
    plan = solve_transport(C, a32, b32)
    ref = ot.emd(a32.astype(float), b32.astype(float) * (a32.sum(dtype=float)
                                                          / b32.sum(dtype=float)), C)
    np.testing.assert_allclose(plan, ref, atol=1e-9)
    assert np.sum(plan * C) == pytest.approx(ot.emd2(a64, b64, C), rel=1e-5)


def test_sinkhorn_solver_matches_pot(two_domains):
    Xs, Xt = two_domains
    C = ot.dist(Xs, Xt)
    plan = solve_transport(C - 5.0, method="sinkhorn", reg=1.0)
    ref = ot.sinkhorn(np.full(40, 1 / 40), np.full(50, 1 / 50), C, 1.0)
    np.testing.assert_allclose(plan, ref, atol=1e-8)


def test_dpot_class_matches_function_and_is_seeded(two_domains):
    Xs, Xt = two_domains
    pub = DPOTSource(eps=3.0, delta=1e-4, ell=12, random_state=7).publish(Xs)
    pub2 = DPOTSource(eps=3.0, delta=1e-4, ell=12, random_state=7).publish(Xs)
    np.testing.assert_array_equal(pub.rows, pub2.rows)
    est = DPOT().fit(pub, Xt)
    res = dpot(pub, Xt)
    assert est.w_tilde_ == res.w_tilde
    np.testing.assert_array_equal(est.plan_, res.plan)
    assert est.cost_.shape == (40, 50)
    assert est.privacy_.eps == 3.0


def test_theorem2_sigma_formula():
    eps, delta, w = 2.5, 1e-5, 1.07
    expected = w * np.sqrt(2 * (np.log(1 / (2 * delta)) + eps)) / eps
    assert theorem2_sigma(eps, delta, w) == pytest.approx(expected, rel=1e-14)
    # seed 000, sec. 5.1: delta = 1/(1.2 n_s), eps = 4, 5, 10 give ~1.25, 1.04, 0.61
    d = 1 / (1.2 * 4365)
    got = [theorem2_sigma(e, d, 1.0) for e in (4, 5, 10)]
    np.testing.assert_allclose(got, [1.25, 1.04, 0.61], atol=0.04)


def test_entry_publication_uses_theorem2_and_max_row_norm(two_domains):
    Xs, _ = two_domains
    pub = DPOTSource(eps=1.5, delta=1e-3, ell=9, random_state=8).publish(Xs)
    w = np.sqrt((pub.projection**2).sum(axis=1)).max()
    assert pub.privacy.sensitivity == pytest.approx(w)
    assert pub.sigma == pytest.approx(theorem2_sigma(1.5, 1e-3, w))
    assert "one entry" in str(pub.privacy)


def test_record_publication_uses_spectral_norm_and_analytic_gaussian(two_domains):
    Xs, _ = two_domains
    pub = DPOTSource(eps=1.0, delta=1e-5, ell=9, neighbour="record", clip_norm=2.0,
                     random_state=9).publish(Xs)
    sens = 2 * 2.0 * np.linalg.svd(pub.projection, compute_uv=False)[0]
    assert pub.privacy.sensitivity == pytest.approx(sens)
    assert record_sensitivity(pub.projection, 2.0) == pytest.approx(sens)
    assert pub.sigma == pytest.approx(sens * dpa.get_sigma_gaussian(1.0, 1e-5))
    # the analytic calibration makes the Gaussian profile equal to delta (Balle & Wang)
    from scipy.stats import norm

    s, e = analytic_gaussian_sigma(1.0, 1e-5, sens), 1.0
    prof = norm.cdf(sens / (2 * s) - e * s / sens) - np.exp(e) * norm.cdf(
        -sens / (2 * s) - e * s / sens)
    assert prof == pytest.approx(1e-5, rel=1e-4)
    assert "replaced" in str(pub.privacy)


def test_accountant_whole_batch_matches_dp_accounting():
    nm, steps, delta = 1.1, 20, 1e-5
    acc = dpa.pld.PLDAccountant()
    acc.compose(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(nm), steps))
    assert minibatch_privacy(nm, 1.0, steps, delta) == pytest.approx(
        acc.get_epsilon(delta), rel=1e-6)


def test_accountant_with_label_histogram_matches_dp_accounting():
    nm, steps, delta, eps_l = 1.5, 5, 1e-6, 0.8
    acc = dpa.pld.PLDAccountant()
    acc.compose(dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(nm), steps))
    acc.compose(dpa.dp_event.DiscreteLaplaceDpEvent(eps_l / 2, 1), 2)
    assert minibatch_privacy(nm, 1.0, steps, delta, label_eps=eps_l) == pytest.approx(
        acc.get_epsilon(delta), rel=1e-6)


def test_accountant_single_subsampled_step_is_public_selection_mixture():
    # one step with public selection: delta(eps) = q * delta_gauss(eps)
    nm, q, delta = 2.0, 0.1, 1e-6
    eps = minibatch_privacy(nm, q, 1, delta)
    assert eps == pytest.approx(dpa.get_epsilon_gaussian(nm, delta / q), abs=2e-3)


def test_minibatch_publication_spends_at_most_its_budget(two_domains):
    Xs, Xt = two_domains
    src = DPOTSource(eps=4.0, delta=1e-4, ell=8, random_state=10)
    pubs = src.publish_minibatches(Xs, batch_size=10, n_batches=6)
    assert len(pubs.batches) == 6
    assert pubs.privacy.eps <= 4.0 + 1e-9
    nm = pubs.privacy.sigma / pubs.privacy.sensitivity
    assert minibatch_privacy(nm, 0.25, 6, 1e-4) == pytest.approx(pubs.privacy.eps)
    assert minibatch_privacy(nm * 0.97, 0.25, 6, 1e-4) > 4.0  # calibration is tight
    res = dpot_minibatch(pubs, Xt, random_state=0)
    assert np.isfinite(res.w_tilde)


def test_publications_never_contain_source_rows(two_domains):
    Xs, _ = two_domains
    ys = np.arange(40) % 3
    src = DPOTSource(eps=2.0, delta=1e-5, ell=6, random_state=11)
    objs = [src, src.publish(Xs), src.publish_minibatches(Xs, batch_size=10, n_batches=2),
            DPDASource(2.0, 1e-5, 6, 1.0, classes=[0, 1, 2], random_state=1).publish(Xs, ys)]
    for obj in objs:
        blob = pickle.dumps(obj)
        for row in Xs:
            assert row.tobytes() not in blob
        assert Xs[:, 0].copy().tobytes() not in blob
    # the public fields are exactly the protocol's
    pub = objs[1]
    assert set(vars(pub)) == {"projection", "rows", "sigma", "privacy"}
    assert pickle.loads(pickle.dumps(pub)).rows.shape == (40, 6)


def test_discrete_laplace_is_integer_with_right_variance():
    x = discrete_laplace(2.0, 20000, random_state=0)
    assert x.dtype == np.int64
    a = 1 / 2.0
    var = 2 * np.exp(-a) / (1 - np.exp(-a)) ** 2
    assert abs(x.var() - var) < 5 * var * np.sqrt(2 / x.size) * 2


def test_labels_from_counts():
    np.testing.assert_array_equal(labels_from_counts(np.array([3, 0, 2]), 5), [0, 0, 0, 2, 2])
    assert labels_from_counts(np.array([10, 10]), 4).tolist() == [0, 0, 1, 1]


def _blobs(rng, shift):
    centers = np.array([[0, 0, 0, 0], [6, 0, 0, 0], [0, 6, 0, 0]], dtype=float)
    y = np.repeat([0, 1, 2], 40)
    X = centers[y] + rng.normal(size=(120, 4))
    return X, y, X + shift


# lpl1's inner Sinkhorn (POT) stops at its fixed iteration cap on this problem
@pytest.mark.filterwarnings("ignore::privinfer.exceptions.TransportConvergenceWarning")
@pytest.mark.parametrize("group_norm", ["l1l2", "lpl1"])
def test_dpda_adapts_shifted_blobs(group_norm):
    rng = np.random.default_rng(13)
    Xs, ys, _ = _blobs(rng, 0.0)
    Xt0, yt, _ = _blobs(rng, 0.0)
    Xt = Xt0 + np.array([4.0, -3.0, 2.0, 1.0])  # a shift that defeats source-only 1-NN
    pub = DPDASource(8.0, 1e-4, 40, 4.0, classes=[0, 1, 2], random_state=3).publish(Xs, ys)
    da = DPDA(reg_e=0.1, reg_cl=0.5, group_norm=group_norm).fit(pub, Xt)
    assert da.score(Xt, yt) > 0.8
    from sklearn.neighbors import KNeighborsClassifier

    assert KNeighborsClassifier(1).fit(Xs, ys).score(Xt, yt) < 0.7
    assert da.transform().shape == (120, 4)
    np.testing.assert_array_equal(da.transform(pub.source.rows[:5]), da.xs_hat_[:5])
    assert da.privacy_.eps == pytest.approx(12.0)
    # semi-supervised: known target labels forbid cross-class mass
    yt_semi = np.where(np.arange(120) % 4 == 0, yt, -1)
    da2 = DPDA(reg_e=0.1, reg_cl=0.5, group_norm=group_norm).fit(pub, Xt, yt_semi)
    known = yt_semi >= 0
    wrong = da2.ys_tilde_[:, None] != yt_semi[None, :]
    assert da2.plan_[:, known][wrong[:, known]].sum() < 1e-6
    assert da2.score(Xt, yt) >= 0.8


def test_dpda_unknown_marker_works_for_string_labels():
    rng = np.random.default_rng(13)
    Xs, ys, _ = _blobs(rng, 0.0)
    names = np.array(["red", "green", "blue"])
    pub = DPDASource(8.0, 1e-4, 40, 4.0, classes=names, random_state=3).publish(Xs, names[ys])
    known = np.arange(120) % 4 == 0
    codes = np.where(known, ys, -1)
    as_list = [names[c] if c >= 0 else -1 for c in codes]  # numpy makes -1 the string '-1'
    as_object = np.array(as_list, dtype=object)  # keeps the integer -1
    fits = [DPDA(reg_e=0.1, reg_cl=0.5).fit(pub, Xs, yt) for yt in (as_list, as_object)]
    int_pub = DPDASource(8.0, 1e-4, 40, 4.0, classes=[0, 1, 2], random_state=3).publish(Xs, ys)
    reference = DPDA(reg_e=0.1, reg_cl=0.5).fit(int_pub, Xs, codes)
    for da in fits:
        np.testing.assert_allclose(da.plan_, reference.plan_)
        assert da.score(Xs, names[ys]) == reference.score(Xs, ys)
