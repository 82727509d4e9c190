"""The bias-corrected DPOT cost, POT-style weights and compact displays (issue 19)."""

from __future__ import annotations

import numpy as np
import pytest

ot = pytest.importorskip("ot")
pytest.importorskip("dp_accounting")

from privinfer.transport import (  # noqa: E402
    DPDA,
    DPOT,
    DPDASource,
    DPOTSource,
    PrivacyStatement,
    PrivTreeSynthesizer,
    PublishedLabelledSource,
    PublishedSource,
    dpot,
    estimate_transport_cost,
    grid_synthesize,
    publish_rows,
)

pytestmark = pytest.mark.filterwarnings("ignore::privinfer.exceptions.SeedReleaseWarning")


def _orthonormal_publication(Xs, ell, sigma, seed):
    """A publication whose projection preserves distances exactly (M M' = I)."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.normal(size=(ell, Xs.shape[1])))
    M = q.T  # (k, ell) with orthonormal rows
    stmt = PrivacyStatement(eps=np.inf, delta=0.0, neighbour="entry", mechanism="test",
                            sigma=sigma, sensitivity=1.0)
    return PublishedSource(projection=M, rows=publish_rows(Xs, M, sigma, rng), sigma=sigma,
                           privacy=stmt)


@pytest.fixture
def weighted_problem():
    rng = np.random.default_rng(3)
    Xs, Xt = rng.normal(size=(25, 3)), rng.normal(1.0, 1.3, size=(30, 3))
    a = rng.uniform(0.5, 2.0, 25)
    b = rng.uniform(0.5, 2.0, 30)
    return Xs, Xt, a / a.sum(), b / b.sum()


# ------------------------------------------------------------------ weights against POT
def test_weighted_emd_plan_matches_pot_as_noise_vanishes(weighted_problem):
    Xs, Xt, a, b = weighted_problem
    pub = _orthonormal_publication(Xs, ell=8, sigma=1e-9, seed=0)
    res = dpot(pub, Xt, a=a, b=b, n_folds=None)
    plan_pot = ot.emd(a, b, ot.dist(Xs, Xt))
    np.testing.assert_allclose(res.plan, plan_pot, atol=1e-9)
    assert res.w_tilde == pytest.approx(ot.emd2(a, b, ot.dist(Xs, Xt)), rel=1e-7)


def test_weighted_sinkhorn_plan_matches_pot_as_noise_vanishes(weighted_problem):
    Xs, Xt, a, b = weighted_problem
    pub = _orthonormal_publication(Xs, ell=8, sigma=1e-9, seed=1)
    C = ot.dist(Xs, Xt)
    res = DPOT(method="sinkhorn", reg=0.5, n_folds=None).fit(pub, Xt, a=a, b=b)
    plan_pot = ot.sinkhorn(a, b, C, 0.5, stopThr=1e-12, numItermax=5000)
    np.testing.assert_allclose(res.plan_, plan_pot, atol=1e-8)
    np.testing.assert_allclose(res.plan_.sum(axis=1), a, atol=1e-8)


def test_weighted_dpda_coupling_matches_pot_as_noise_vanishes(weighted_problem):
    Xs, Xt, a, b = weighted_problem
    ys = (Xs[:, 0] > 0).astype(int)
    order = np.argsort(ys, kind="stable")
    Xs, ys, a = Xs[order], ys[order], a[order]
    src = _orthonormal_publication(Xs, ell=8, sigma=1e-9, seed=2)
    counts = np.bincount(ys, minlength=2).astype(np.int64)
    pub = PublishedLabelledSource(source=src, classes=np.array([0, 1]), noisy_counts=counts,
                                  eps_labels=np.inf, privacy=src.privacy)
    da = DPDA(reg_e=0.1, reg_cl=0.5).fit(pub, Xt, a=a, b=b)
    C = ot.dist(Xs, Xt)
    Cn = (C - C.min()) / (C - C.min()).max()
    plan_pot = ot.da.sinkhorn_l1l2_gl(a, ys, b, Cn, 0.1, 0.5, numItermax=10)
    np.testing.assert_allclose(da.plan_, plan_pot, atol=1e-8)
    np.testing.assert_allclose(da.plan_.sum(axis=0), b, atol=1e-6)


def test_dpda_accepts_zero_source_weights_as_pot_does(weighted_problem):
    # a zero in 'a' used to raise TransportConvergenceError ("increase reg_e"): the row
    # has no mass, so its barycentric image divided by zero
    Xs, Xt, a, b = weighted_problem
    ys = (Xs[:, 0] > 0).astype(int)
    order = np.argsort(ys, kind="stable")
    Xs, ys = Xs[order], ys[order]
    src = _orthonormal_publication(Xs, ell=8, sigma=1e-9, seed=2)
    counts = np.bincount(ys, minlength=2).astype(np.int64)
    pub = PublishedLabelledSource(source=src, classes=np.array([0, 1]), noisy_counts=counts,
                                  eps_labels=np.inf, privacy=src.privacy)
    a0 = a[order].copy()
    a0[[0, 5, -1]] = 0.0
    a0 *= b.sum() / a0.sum()
    da = DPDA(reg_e=0.1, reg_cl=0.5).fit(pub, Xt, a=a0, b=b)
    C = ot.dist(Xs, Xt)
    plan_pot = ot.da.sinkhorn_l1l2_gl(a0, ys, b, (C - C.min()) / np.ptp(C), 0.1, 0.5,
                                      numItermax=10)
    np.testing.assert_allclose(da.plan_, plan_pot, atol=1e-8)
    assert np.all(da.plan_[[0, 5, -1]] == 0.0)
    assert np.all(np.isfinite(da.xs_hat_))
    rest = np.flatnonzero(a0 > 0)
    nearest = rest[np.argmin(ot.dist(src.rows[[0, 5, -1]], src.rows[rest]), axis=1)]
    np.testing.assert_array_equal(da.xs_hat_[[0, 5, -1]], da.xs_hat_[nearest])
    assert da.predict(Xt).shape == (Xt.shape[0],)


def test_weights_need_not_sum_to_one_but_must_match(weighted_problem):
    Xs, Xt, a, b = weighted_problem
    pub = DPOTSource(eps=5.0, delta=1e-5, ell=8).publish(Xs)
    res = dpot(pub, Xt, a=3 * a, b=3 * b, n_folds=None)
    assert res.plan.sum() == pytest.approx(3.0)


# ------------------------------------------------------------------ the cost estimate
def test_in_sample_value_is_the_papers_w_tilde(weighted_problem):
    Xs, Xt, a, b = weighted_problem
    pub = DPOTSource(eps=2.0, delta=1e-5, ell=16).publish(Xs)
    res = dpot(pub, Xt, a=a, b=b, n_folds=4)
    assert res.estimate.in_sample == pytest.approx(res.w_tilde, rel=1e-10, abs=1e-10)
    assert res.estimate.n_folds == 4
    r = 4 / 3
    expected = (r * res.estimate.in_sample + res.estimate.held_out) / (1 + r)
    assert res.estimate.crossfit == pytest.approx(expected)
    assert res.estimate.extrapolation == "hyperbolic"


def test_held_out_value_is_unbiased_for_a_fixed_plan():
    """Column terms of a plan chosen without the noise average to its true cost."""
    rng = np.random.default_rng(5)
    Xs, Xt = rng.normal(size=(6, 3)), rng.normal(1.0, 1.0, size=(6, 3))
    C = ot.dist(Xs, Xt)
    reps, ell, sigma = 3000, 4, 0.7
    vals = np.empty(reps)
    stmt = PrivacyStatement(eps=1.0, delta=1e-5, neighbour="entry", mechanism="test",
                            sigma=sigma, sensitivity=1.0)
    for r in range(reps):
        M = rng.normal(0, 1 / np.sqrt(ell), size=(3, ell))  # a fresh Gaussian projection
        pub = PublishedSource(projection=M, rows=publish_rows(Xs, M, sigma, rng),
                              sigma=sigma, privacy=stmt)
        # column terms of a plan fixed in advance: the situation of a held-out fold
        vals[r] = estimate_transport_cost(pub, Xt, n_folds=2, plan=np.eye(6) / 6,
                                          extrapolate=False).in_sample
    se = vals.std(ddof=1) / np.sqrt(reps)
    assert abs(vals.mean() - np.trace(C) / 6) < 4 * se


@pytest.mark.parametrize("seed", [0, 1])
def test_estimate_removes_most_of_the_bias_and_bracket_covers(seed):
    """Small Monte Carlo where W~ is off by more than 50%: the extrapolated estimate is
    within 10% of W (up to 2.5 MC standard errors), much closer than the first-order
    cross-fit, and the bracket covers."""
    rng = np.random.default_rng(300 + seed)
    Xs = rng.normal(size=(60, 8))  # a smaller copy of the benchmark's gauss10 design
    Xt = rng.normal(0.5, 1.2, size=(60, 8))
    W = ot.emd2(np.full(60, 1 / 60), np.full(60, 1 / 60), ot.dist(Xs, Xt))
    reps = 40
    old, new, cross = np.empty(reps), np.empty(reps), np.empty(reps)
    inside, held = np.empty(reps), np.empty(reps)
    for r in range(reps):
        pub = DPOTSource(eps=4.0, delta=1e-5, ell=32, random_state=rng).publish(Xs)
        est = dpot(pub, Xt).estimate
        assert est.extrapolation == "hyperbolic"
        old[r], new[r], held[r], cross[r] = (est.in_sample, est.estimate, est.held_out,
                                             est.crossfit)
        inside[r] = est.lower <= W <= est.upper
    se_old = old.std(ddof=1) / np.sqrt(reps)
    se_held = held.std(ddof=1) / np.sqrt(reps)
    se_new = new.std(ddof=1) / np.sqrt(reps)
    assert old.mean() < W - 2 * se_old  # the paper's value is biased downward ...
    assert held.mean() > W - 2 * se_held  # ... the held-out value is not
    bias_old, bias_new = W - old.mean(), abs(new.mean() - W)
    assert bias_old > 0.5 * W
    assert bias_new < 0.1 * W + 2.5 * se_new
    # same releases, so the comparison is sharper than either bias
    assert bias_new < 0.6 * abs(cross.mean() - W)
    assert inside.mean() >= 0.85


def test_mean_part_terms_are_unbiased_and_raise_the_lower_end_where_noise_dominates():
    """Where the noise swamps the source (a shifted pair, eps = 2), the in-sample bound is
    far below zero; the bracket's lower end is then the mean part's bound, which is
    unbiased for ||m_s - m_t||^2 over releases, lifts the lower end above zero, and
    keeps the bracket covering W."""
    rng = np.random.default_rng(41)
    Xs = rng.normal(size=(40, 2))
    Xt = rng.normal([3.0, 2.0], 1.0, size=(40, 2))
    u = np.full(40, 1 / 40)
    W = ot.emd2(u, u, ot.dist(Xs, Xt))
    mean_part = float(np.sum((Xs.mean(0) - Xt.mean(0)) ** 2))
    reps = 40
    means, lower, upper, in_bound = (np.empty(reps) for _ in range(4))
    for r in range(reps):
        pub = DPOTSource(eps=2.0, delta=1e-5, ell=16, random_state=rng).publish(Xs)
        est = dpot(pub, Xt, estimator="extrapolation").estimate
        means[r] = est.mean_terms.mean()
        lower[r], upper[r] = est.lower, est.upper
        in_bound[r] = est.in_sample - 2 * est.in_terms.std(ddof=1) / 4.0  # about the old end
    se = means.std(ddof=1) / np.sqrt(reps)
    assert abs(means.mean() - mean_part) < 3 * se
    assert np.all(lower >= 0.0)
    assert np.median(in_bound) < 0.0 < 0.3 * W < np.median(lower)
    assert np.mean((lower <= W) & (upper >= W)) >= 0.9


def test_hyperbolic_extrapolant_satisfies_the_envelope_identity_and_recovers_w():
    """h = g - t g' (checked by finite differences), and exact curves give back W."""
    from privinfer.transport._extrapolation import fit_hyperbolic, hyperbolic_curves

    params = np.array([3.0, 2.5, np.log(0.7)])
    t = np.linspace(0.5, 2.5, 9)
    step = 1e-6
    g, h = hyperbolic_curves(params, t**2)
    g_up, _ = hyperbolic_curves(params, (t + step) ** 2)
    g_dn, _ = hyperbolic_curves(params, (t - step) ** 2)
    np.testing.assert_allclose(h, g - t * (g_up - g_dn) / (2 * step), rtol=1e-6)
    g0, h0 = hyperbolic_curves(params, np.zeros(1))
    assert g0[0] == pytest.approx(3.0) and h0[0] == pytest.approx(3.0)
    tau = np.array([1.0, 4 / 3, 2.0, 4.0])
    g, h = hyperbolic_curves(params, tau)
    h[0] = np.nan  # no held-out value at the release's own level
    fitted, _ = fit_hyperbolic(tau, g, h)
    assert fitted[0] == pytest.approx(3.0, rel=1e-5)
    # a purely quadratic landscape (a large): the extrapolation is the cross-fit value
    quad = np.array([5.0, 1e3, np.log(1e3)])  # g ~ W - (c/2a) t^2
    g, h = hyperbolic_curves(quad, tau)
    h[0] = np.nan
    assert fit_hyperbolic(tau, g, h)[0][0] == pytest.approx(5.0, rel=1e-4)


@pytest.mark.filterwarnings("ignore::privinfer.exceptions.TransportNoiseWarning")
@pytest.mark.parametrize("unit", [1e3, 1e5, 1e8])
def test_extrapolated_estimate_and_its_error_follow_the_units_of_the_data(unit):
    # the delta-method gradient used a pseudo-inverse cut-off relative to the largest
    # singular value of a Jacobian whose columns mix cost units and log a: for data in
    # units of 1e5 (costs ~1e10) std_error fell to ~1e-10 of its value
    rng = np.random.default_rng(0)
    Xs, Xt = rng.normal(size=(60, 3)), rng.normal(1.0, 1.0, size=(50, 3))

    def release(u):
        src = DPOTSource(50.0, 1e-5, 16, neighbour="record", clip_norm=4.0 * u,
                         random_state=1)
        return estimate_transport_cost(src.publish(Xs * u), Xt * u,
                                       estimator="extrapolation")

    ref, est = release(1.0), release(unit)
    assert est.extrapolation == ref.extrapolation == "hyperbolic"
    assert est.estimate / unit**2 == pytest.approx(ref.estimate, rel=1e-6)
    assert est.std_error / unit**2 == pytest.approx(ref.std_error, rel=1e-6)
    assert est.upper / unit**2 == pytest.approx(ref.upper, rel=1e-6)


def test_no_extrapolation_below_four_columns_or_on_request():
    rng = np.random.default_rng(9)
    Xs, Xt = rng.normal(size=(20, 2)), rng.normal(1.0, 1.0, size=(20, 2))
    src = DPOTSource(eps=3.0, delta=1e-5, ell=3, random_state=rng)
    three = estimate_transport_cost(src.publish(Xs), Xt, estimator="extrapolation")
    assert three.extrapolation == "none"
    assert three.estimate == pytest.approx(three.crossfit - three.row_noise)
    # the extrapolation estimator: "auto" may deconvolve instead, depending on the release
    pub = DPOTSource(eps=3.0, delta=1e-5, ell=16, random_state=rng).publish(Xs)
    off = estimate_transport_cost(pub, Xt, extrapolate=False, estimator="extrapolation")
    on = estimate_transport_cost(pub, Xt, estimator="extrapolation")
    assert off.extrapolation == "none"
    assert off.estimate == pytest.approx(on.crossfit - on.row_noise)
    # the upper end covers the estimate; the lower end never goes below zero and may
    # exclude a negative estimate of this noisy release
    assert 0.0 <= on.lower <= on.upper and on.estimate <= on.upper


def test_conf_int_narrows_with_alpha_and_no_estimate_without_columns():
    rng = np.random.default_rng(7)
    Xs, Xt = rng.normal(size=(20, 2)), rng.normal(1.0, 1.0, size=(20, 2))
    est = dpot(DPOTSource(eps=3.0, delta=1e-5, ell=16).publish(Xs), Xt).estimate
    lo1, hi1 = est.conf_int(alpha=0.01)
    lo2, hi2 = est.conf_int(alpha=0.3)
    assert lo2 < hi2 < hi1
    assert lo1 < lo2 or lo1 == lo2 == 0.0  # both lower ends can sit at W >= 0
    assert (est.lower, est.upper) == est.conf_int(alpha=0.05)
    one = dpot(DPOTSource(eps=3.0, delta=1e-5, ell=1).publish(Xs), Xt)
    assert one.estimate is None
    assert "No bias-corrected estimate" in one.summary()
    assert dpot(DPOTSource(eps=3.0, delta=1e-5, ell=4).publish(Xs), Xt,
                n_folds=None).estimate is None


# ------------------------------------------------------------------ compact displays
def test_every_repr_and_summary_is_short_and_holds_no_arrays():
    rng = np.random.default_rng(8)
    Xs, Xt = rng.normal(size=(300, 4)), rng.normal(1.0, 1.0, size=(200, 4))
    ys = rng.integers(0, 3, 300)
    src = DPOTSource(eps=2.0, delta=1e-5, ell=16)
    pub = src.publish(Xs)
    pubs = src.publish_minibatches(Xs, batch_size=50, n_batches=3)
    est = DPOT(n_folds=2).fit(pub, Xt)
    from privinfer.transport import dpot_minibatch

    lab = DPDASource(2.0, 1e-5, 8, 1.0, classes=[0, 1, 2]).publish(Xs, ys)
    x = rng.uniform(size=(3000, 2))
    synth = PrivTreeSynthesizer(2.0, [(0, 1), (0, 1)]).fit(x)
    grid, _ = grid_synthesize(x, 1.0, [(0, 1), (0, 1)], depth=8)
    objects = [pub, pubs, est.result_, est.estimate_, dpot_minibatch(pubs, Xt), lab,
               synth.measure_, synth.measure_.tree, synth.measure_.tree.levels[1], grid,
               pub.privacy]
    for obj in objects:
        text = repr(obj)
        assert len(text.splitlines()) <= 15, type(obj).__name__
        assert "[[" not in text and "array([" not in text, type(obj).__name__
    for summary in (est.result_.summary(), est.summary(), synth.measure_.summary(),
                    grid.summary()):
        assert len(str(summary).splitlines()) <= 15
        assert repr(summary) == str(summary)
    text = est.result_.summary()
    for word in ("eps, delta", "sigma", "Cost estimate", "bracket", "Plan excess"):
        assert word in text
    text = synth.measure_.summary()
    for word in ("Atoms", "eps, delta", "Projection (W1 cost)", "add/remove"):
        assert word in text
    assert "public depth 8" in grid.privacy


# ------------------------------------------------------------------ row-space noise
def test_row_noise_is_the_noise_outside_the_row_space_of_the_projection():
    """N = sum_i a_i (|Delta_i P_perp|^2 - (ell - k) sigma^2), computed from the noise."""
    rng = np.random.default_rng(11)
    Xs, Xt = rng.normal(size=(15, 3)), rng.normal(1.0, 1.0, size=(12, 3))
    ell, sigma = 10, 0.8
    M = rng.normal(0.0, 1 / np.sqrt(ell), size=(3, ell))
    noise = rng.normal(0.0, sigma, size=(15, ell))
    stmt = PrivacyStatement(eps=1.0, delta=1e-5, neighbour="entry", mechanism="test",
                            sigma=sigma, sensitivity=1.0)
    pub = PublishedSource(projection=M, rows=Xs @ M + noise, sigma=sigma, privacy=stmt)
    a = rng.uniform(0.5, 2.0, 15)
    a /= a.sum()
    est = estimate_transport_cost(pub, Xt, a=a)
    P = M.T @ np.linalg.solve(M @ M.T, M)  # projector onto the row space
    resid = noise @ (np.eye(ell) - P)
    expected = a @ ((resid**2).sum(axis=1) - (ell - 3) * sigma**2)
    assert est.row_noise == pytest.approx(expected, rel=1e-9)
    # no signal-free directions when the projection has as many rows as columns
    wide = DPOTSource(eps=2.0, delta=1e-5, ell=3).publish(Xs)
    assert estimate_transport_cost(wide, Xt).row_noise == 0.0


def test_removing_row_noise_keeps_the_mean_and_cuts_the_spread():
    """Over releases, the removed term averages to zero and the estimate without it
    varies much less than with it (low-dimensional source, strong noise)."""
    rng = np.random.default_rng(21)
    Xs, Xt = rng.normal(size=(30, 2)), rng.normal([2.0, 1.0], 1.0, size=(30, 2))
    reps = 150
    new, removed = np.empty(reps), np.empty(reps)
    for r in range(reps):
        pub = DPOTSource(eps=1.0, delta=1e-5, ell=16, random_state=rng).publish(Xs)
        est = estimate_transport_cost(pub, Xt)
        new[r], removed[r] = est.estimate, est.row_noise
    se = removed.std(ddof=1) / np.sqrt(reps)
    assert abs(removed.mean()) < 4 * se
    assert new.std(ddof=1) < 0.6 * (new + removed).std(ddof=1)
