"""The deconvolution cost estimate of DPOT (estimate_transport_cost, estimator="deconvolution")."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

ot = pytest.importorskip("ot")
pytest.importorskip("dp_accounting")

from privinfer.exceptions import DataMismatchError, TransportNoiseWarning  # noqa: E402
from privinfer.transport import (  # noqa: E402
    DPOT,
    DPOTSource,
    PrivacyStatement,
    PublishedSource,
    dpot,
    estimate_transport_cost,
    publish_rows,
)
from privinfer.transport._deconvolution import (  # noqa: E402
    posterior_draws,
    row_space,
    select_mixture,
)

pytestmark = pytest.mark.filterwarnings("ignore::privinfer.exceptions.SeedReleaseWarning")

CENTRES = np.array([[0.0, 0.0], [8.0, 0.0], [0.0, 8.0]])


def _clusters(n, sd, seed):
    rng = np.random.default_rng(seed)
    return CENTRES[np.arange(n) % 3] + sd * rng.normal(size=(n, 2))


def _publication(Xs, ell, sigma, seed):
    """A publication with a Gaussian projection and a given noise level."""
    rng = np.random.default_rng(seed)
    M = rng.normal(0.0, 1.0 / np.sqrt(ell), size=(Xs.shape[1], ell))
    stmt = PrivacyStatement(eps=np.inf, delta=0.0, neighbour="entry", mechanism="test",
                            sigma=sigma, sensitivity=1.0)
    return PublishedSource(projection=M, rows=publish_rows(Xs, M, sigma, rng), sigma=sigma,
                           privacy=stmt)


def _pot(Xs, Xt, a=None, b=None):
    a = np.full(len(Xs), 1 / len(Xs)) if a is None else a
    b = np.full(len(Xt), 1 / len(Xt)) if b is None else b
    return float(ot.emd2(a, b, ot.dist(Xs, Xt)))


def test_row_space_recovers_the_points_with_the_stated_noise_covariance():
    rng = np.random.default_rng(0)
    Xs = rng.normal(size=(4000, 3))
    pub = _publication(Xs, ell=12, sigma=0.7, seed=1)
    x_hat, Sigma = row_space(pub.rows, pub.projection, pub.sigma)
    M = pub.projection
    np.testing.assert_allclose(Sigma, 0.49 * np.linalg.inv(M @ M.T), rtol=1e-10)
    resid = x_hat - Xs
    # the empirical covariance of the recovery error matches Sigma (4000 draws)
    np.testing.assert_allclose(np.cov(resid.T), Sigma, atol=0.1 * np.trace(Sigma) / 3)
    assert row_space(pub.rows[:, :3], M[:, :3], 0.7) is None  # k = ell: refused


def test_deconvolution_recovers_the_centres_of_separated_clusters():
    Xs = _clusters(300, 0.5, seed=2)
    rng = np.random.default_rng(3)
    Sigma = np.array([[1.0, 0.4], [0.4, 0.6]])  # known, anisotropic
    x_hat = Xs + rng.multivariate_normal(np.zeros(2), Sigma, size=300)
    a = np.full(300, 1 / 300)
    prior = select_mixture(x_hat, a, Sigma, 5, rng)
    assert prior.n_components == 3
    order = np.argsort(prior.means[:, 0] + 10 * prior.means[:, 1])
    np.testing.assert_allclose(prior.means[order], CENTRES, atol=0.3)
    np.testing.assert_allclose(prior.weights, 1 / 3, atol=0.05)
    # deconvolved, not naive: within-cluster variance near 0.25, far below 0.25 + Sigma
    within = np.trace(prior.covariances, axis1=1, axis2=2)
    assert np.all(within < 0.5 * 2 * 0.25 + 0.5 * np.trace(Sigma))
    draws = posterior_draws(x_hat, Sigma, prior, 4, rng)
    assert draws.shape == (4, 300, 2)
    # posterior draws are closer to the truth than the noisy recovery
    assert np.mean((draws - Xs) ** 2) < 0.5 * np.mean((x_hat - Xs) ** 2)


def test_posterior_draws_reduce_to_pots_value_as_the_noise_vanishes():
    rng = np.random.default_rng(4)
    Xs, Xt = _clusters(45, 0.5, seed=5), rng.normal(3.0, 2.0, size=(40, 2))
    a, b = rng.uniform(0.5, 2.0, 45), rng.uniform(0.5, 2.0, 40)
    a, b = a / a.sum(), b / b.sum()
    pub = _publication(Xs, ell=10, sigma=1e-7, seed=6)
    est = estimate_transport_cost(pub, Xt, a=a, b=b, estimator="deconvolution",
                                  n_draws=3, random_state=0)
    W = _pot(Xs, Xt, a, b)
    assert est.estimate == pytest.approx(W, rel=1e-5)
    assert est.std_error < 1e-5 * W
    assert est.extrapolation == "deconvolution" and est.n_components >= 1
    assert est.lower <= W <= est.upper


def test_deconvolution_is_close_to_pot_on_clustered_data_at_large_eps():
    Xs = _clusters(90, 0.5, seed=7)
    Xt = np.random.default_rng(8).normal(3.0, 2.0, size=(80, 2))
    W = _pot(Xs, Xt)
    values, extrapolated = [], []
    for seed in range(5):
        pub = DPOTSource(eps=50.0, delta=1e-5, ell=16, random_state=seed).publish(Xs)
        est = estimate_transport_cost(pub, Xt, estimator="deconvolution", random_state=seed)
        assert est.lower <= est.estimate <= est.upper
        values.append(est.estimate)
        extrapolated.append(
            estimate_transport_cost(pub, Xt, estimator="extrapolation").estimate)
    # the posterior draws carry no projection error: within 5% of W in every release,
    # and much closer than the extrapolation (whose column noise includes the projection)
    np.testing.assert_allclose(values, W, rtol=0.05)
    err = np.abs(np.array(values) / W - 1).mean()
    assert err < 0.5 * np.abs(np.array(extrapolated) / W - 1).mean()


def test_deconvolution_is_reproducible_and_validated():
    Xs = _clusters(60, 0.5, seed=9)
    Xt = np.random.default_rng(10).normal(3.0, 2.0, size=(50, 2))
    pub = DPOTSource(eps=5.0, delta=1e-5, ell=8, random_state=1).publish(Xs)
    e1 = estimate_transport_cost(pub, Xt, estimator="deconvolution", random_state=3)
    e2 = estimate_transport_cost(pub, Xt, estimator="deconvolution", random_state=3)
    assert e1.estimate == e2.estimate and e1.std_error == e2.std_error
    with pytest.raises(ValueError, match="'estimator'"):
        estimate_transport_cost(pub, Xt, estimator="simex")
    with pytest.raises(ValueError, match="n_draws"):
        estimate_transport_cost(pub, Xt, estimator="deconvolution", n_draws=1)
    square = DPOTSource(eps=5.0, delta=1e-5, ell=2, random_state=1).publish(Xs)
    with pytest.raises(DataMismatchError, match="fewer source features"):
        estimate_transport_cost(square, Xt, estimator="deconvolution")
    wide = np.random.default_rng(11).normal(size=(12, 6))
    pub_w = DPOTSource(eps=5.0, delta=1e-5, ell=16, random_state=1).publish(wide)
    with pytest.raises(DataMismatchError, match="source rows"):
        estimate_transport_cost(pub_w, wide, estimator="deconvolution")


def test_auto_deconvolves_only_where_the_noise_is_below_the_spread():
    Xs = _clusters(90, 0.5, seed=12)
    Xt = np.random.default_rng(13).normal(3.0, 2.0, size=(80, 2))
    spread = np.mean(np.sum((Xs - Xs.mean(axis=0)) ** 2, axis=1))
    for eps, expect in ((50.0, "deconvolution"), (0.5, "hyperbolic")):
        pub = DPOTSource(eps=eps, delta=1e-5, ell=16, random_state=4).publish(Xs)
        auto = estimate_transport_cost(pub, Xt, estimator="auto", random_state=5)
        kind = "deconvolution" if expect == "deconvolution" else "extrapolation"
        ref = estimate_transport_cost(pub, Xt, estimator=kind, random_state=5)
        assert auto.extrapolation == expect
        assert auto.estimate == ref.estimate
        # the noise ratio estimates tr(Sigma) / spread of the source points (the spread
        # is estimated well when the noise is small)
        M = pub.projection
        ratio = pub.sigma**2 * np.trace(np.linalg.inv(M @ M.T)) / spread
        if eps == 50.0:
            assert auto.noise_ratio == pytest.approx(ratio, rel=0.1)
        assert (auto.noise_ratio <= 1.0) == (expect == "deconvolution") == (ratio <= 1.0)
    square = DPOTSource(eps=50.0, delta=1e-5, ell=2, random_state=1).publish(Xs)
    fallback = estimate_transport_cost(square, Xt[:, :2], estimator="auto")
    assert fallback.extrapolation == "none" and np.isnan(fallback.noise_ratio)


def test_a_noise_dominated_release_warns_and_names_the_bracket():
    Xs = _clusters(90, 0.5, seed=12)
    Xt = np.random.default_rng(13).normal(3.0, 2.0, size=(80, 2))
    for eps in (50.0, 0.5):
        pub = DPOTSource(eps=eps, delta=1e-5, ell=16, random_state=4).publish(Xs)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = estimate_transport_cost(pub, Xt, random_state=5)
        noisy = [w for w in caught if issubclass(w.category, TransportNoiseWarning)]
        assert len(noisy) == (1 if est.noise_ratio > 1.0 else 0)
        if eps == 0.5:
            assert est.noise_ratio > 1.0
            assert f"{est.noise_ratio:.2g} times" in str(noisy[0].message)
            assert "bracket" in str(noisy[0].message)
    # no deconvolution space (n_features >= ell): no noise ratio, no warning
    square = DPOTSource(eps=0.5, delta=1e-5, ell=2, random_state=1).publish(Xs)
    with warnings.catch_warnings():
        warnings.simplefilter("error", TransportNoiseWarning)
        est = estimate_transport_cost(square, Xt, estimator="extrapolation")
    assert np.isnan(est.noise_ratio)


def test_dpot_and_the_estimator_class_default_to_auto_with_a_random_state():
    Xs = _clusters(60, 0.5, seed=14)
    Xt = np.random.default_rng(15).normal(3.0, 2.0, size=(50, 2))
    pub = DPOTSource(eps=50.0, delta=1e-5, ell=16, random_state=2).publish(Xs)
    res = dpot(pub, Xt, random_state=7)
    assert res.estimate.extrapolation == "deconvolution"
    direct = estimate_transport_cost(pub, Xt, plan=res.plan, random_state=7)
    assert res.estimate.estimate == direct.estimate
    fits = [DPOT(random_state=7).fit(pub, Xt).estimate_.estimate for _ in range(2)]
    assert fits[0] == fits[1] == res.estimate.estimate
    old = DPOT(estimator="extrapolation").fit(pub, Xt)
    assert old.estimate_.extrapolation == "hyperbolic"
    assert "Estimator:" in str(old.summary())


def test_summary_reports_the_noise_ratio_that_chose_the_estimator():
    Xs = _clusters(60, 0.5, seed=14)
    Xt = np.random.default_rng(15).normal(3.0, 2.0, size=(50, 2))
    for eps in (50.0, 0.5):
        pub = DPOTSource(eps=eps, delta=1e-5, ell=16, random_state=2).publish(Xs)
        res = dpot(pub, Xt, random_state=7)
        text = str(res.summary())
        ratio = res.estimate.noise_ratio
        assert np.isfinite(ratio)
        assert f"({ratio:.2g})" in text and "Noise sigma (noise/spread):" in text
        assert len(text.splitlines()) <= 15
        # the rule of estimator="auto": deconvolve where the noise is below the spread
        assert (res.estimate.extrapolation == "deconvolution") == (ratio <= 1.0)


def test_spherical_components_resolve_clusters_that_full_covariances_cannot_afford(
        monkeypatch):
    # three clusters in 5-D, 150 points, noise sd 3 per coordinate (three times the
    # clusters' own spread): full covariances cost 20 parameters a component, and AIC
    # keeps one Gaussian; spherical ones cost 6, and AIC finds the clusters
    import privinfer.transport._deconvolution as deconv

    centres = np.random.default_rng(20).normal(0.0, 3.0, size=(3, 5))
    a, Sigma = np.full(150, 1 / 150), 9.0 * np.eye(5)

    def fits(seed):
        rng = np.random.default_rng(seed)
        x_hat = (centres[np.arange(150) % 3] + rng.normal(size=(150, 5))
                 + 3.0 * rng.normal(size=(150, 5)))
        return select_mixture(x_hat, a, Sigma, 5, rng)

    priors = [fits(seed) for seed in range(6)]
    assert all(p.family == "spherical" and p.n_components >= 3 for p in priors)
    # every true centre has a fitted one near it (centre error of a cluster of 50
    # points seen through this noise: about 3 * sqrt(5 / 50) = 0.95)
    gaps = [np.linalg.norm(p.means[:, None] - centres[None], axis=2).min(axis=0)
            for p in priors]
    assert float(np.mean(gaps)) < 1.6
    monkeypatch.setattr(deconv, "FAMILIES", ("full",))
    assert all(fits(seed).n_components == 1 for seed in range(6))
