"""The fold-block bootstrap standard error of the treatment models (issue 14)."""

import warnings

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer.models._foldboot import N_BLOCKS, block_labels, collapse
from privinfer.models._suffstats import FoldStats


def _design(n, rng):
    """Skewed private covariate, U(0, 10) reference far wider than the data, sin outcome."""
    x = np.minimum(rng.lognormal(0.0, 0.6, n), 10.0)
    z = rng.uniform(-1, 1, n)
    p = 1 / (1 + np.exp(-(1.0 - 0.6 * x + 0.5 * z)))
    d = (rng.random(n) < p).astype(int)
    y = np.sin(1.5 * x) + z + d * (1 + 0.3 * x) + rng.normal(scale=0.5, size=n)
    return pd.DataFrame({"x": x, "z": z, "d": d, "y": y})


MECH = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 10), "z": pi.reference.Uniform(-1, 1)})


def _fit(raw, seed, **options):
    rel = MECH.privatize(raw, public=["d", "y"], random_state=np.random.default_rng(seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pi.PrivateATE.from_formula("y ~ d | x + z", rel, mechanism=MECH, **options).fit(
            random_state=np.random.default_rng(seed + 1)
        )


def test_bootstrap_se_tracks_the_monte_carlo_spread_where_the_influence_se_does_not():
    # at n * alpha^2 = 500 the noisy nuisance fits (and their CV choices) add variance that
    # the influence values miss; the bootstrap must see a clear part of it
    est, se_if, se_boot = [], [], []
    for rep in range(24):
        raw = _design(2000, np.random.default_rng(100 + rep))
        a = _fit(raw, 1000 + rep, variance="influence")
        b = _fit(raw, 1000 + rep)
        assert float(a.params.iloc[0]) == pytest.approx(float(b.params.iloc[0]), rel=1e-12)
        est.append(float(b.params.iloc[0]))
        se_if.append(float(a.bse.iloc[0]))
        se_boot.append(float(b.bse.iloc[0]))
    mc_sd = float(np.std(est, ddof=1))
    assert np.all(np.array(se_boot) >= np.array(se_if) * (1 - 1e-12))
    ratio_if, ratio_boot = np.mean(se_if) / mc_sd, np.mean(se_boot) / mc_sd
    # the influence SE misses a large part of the spread here; the bootstrap must close at
    # least a third of that gap (it does not close all of it: see the validation page)
    assert ratio_if < 0.8, (ratio_if, ratio_boot)
    assert ratio_boot - ratio_if >= (1.0 - ratio_if) / 3, (ratio_if, ratio_boot)


def test_summary_says_which_standard_error_and_alpha_one_keeps_the_influence_one():
    raw = _design(1500, np.random.default_rng(3))
    res = _fit(raw, 7)
    assert "Std. errors:" in str(res.summary()) and "bootstrap" in str(res.summary())
    mech1 = pi.AlphaIdentity(1.0, MECH.reference)
    rel = mech1.privatize(raw, public=["d", "y"], random_state=np.random.default_rng(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = pi.PrivateATE.from_formula("y ~ d | x + z", rel, mechanism=mech1).fit(2)
    assert "influence function" in str(one.summary())


def test_variance_option_is_checked():
    raw = _design(600, np.random.default_rng(0))
    rel = MECH.privatize(raw, public=["d", "y"], random_state=np.random.default_rng(0))
    with pytest.raises(ValueError, match="variance must be"):
        pi.PrivateATE.from_formula("y ~ d | x + z", rel, mechanism=MECH, variance="jackknife")
    model = pi.PrivateATE.from_formula(
        "y ~ d | x + z", rel, mechanism=MECH, variance="bootstrap", riesz="propensity"
    )
    with pytest.raises(ValueError, match="variance='bootstrap' needs"):
        model.fit(0)


def test_blocks_keep_clusters_whole_and_collapse_sums_blocks():
    rng = np.random.default_rng(0)
    folds = np.repeat(np.arange(3), 40)
    clusters = np.repeat(np.arange(30), 4)
    lab = block_labels(folds, 3, clusters, rng)
    assert np.all(lab // N_BLOCKS == folds)
    for c in range(30):
        assert np.unique(lab[clusters == c]).size == 1
    F, L, J = 2, 2, 3
    fine = FoldStats(
        PP=rng.normal(size=(F * N_BLOCKS, L, J, J)),
        Py=rng.normal(size=(F * N_BLOCKS, L, J)),
        P1=rng.normal(size=(F * N_BLOCKS, L, J)),
        cnt=rng.integers(1, 5, size=(F * N_BLOCKS, L)).astype(float),
        sy=rng.normal(size=(F * N_BLOCKS, L)),
        AA=None,
        Ay=None,
        A1=None,
        F4=rng.normal(size=(F * N_BLOCKS, L)),
        FR=rng.normal(size=(F * N_BLOCKS, L)),
        RR=rng.normal(size=(F * N_BLOCKS, L)),
    )
    coarse = collapse(fine, F)
    np.testing.assert_allclose(coarse.PP[1], fine.PP[N_BLOCKS:].sum(axis=0))
    w = np.zeros((F, N_BLOCKS))
    w[:, 0] = 2.0
    twice_first = collapse(fine, F, w)
    np.testing.assert_allclose(twice_first.cnt[1], 2 * fine.cnt[N_BLOCKS])


def test_dominating_cov_bounds_every_contrast_by_both_covariances():
    from privinfer.models._foldboot import dominating_cov

    rng = np.random.default_rng(5)
    for _ in range(20):
        A, B = rng.normal(size=(2, 3, 3))
        boot, infl = A @ A.T, B @ B.T
        S = dominating_cov(boot, infl)
        assert np.allclose(S, S.T)
        for c in rng.normal(size=(50, 3)):
            assert c @ S @ c >= max(c @ boot @ c, c @ infl @ c) - 1e-9
    # where one dominates the other it is returned unchanged
    big = np.array([[3.0, 1.0], [1.0, 2.0]])
    assert np.allclose(dominating_cov(big, 0.5 * big), big)
    assert np.allclose(dominating_cov(0.5 * big, big), big)


def test_pom_contrast_keeps_the_bootstrap_covariance_of_the_arms():
    # E[Y(1)] - E[Y(0)] of PrivatePOM is the ATE on the same folds and draws: its standard
    # error must be at least the ATE's (the larger of its bootstrap and influence SEs),
    # whether taken by slicing, by t_test or by cov_params
    raw = _design(2000, np.random.default_rng(11))
    rel = MECH.privatize(raw, public=["d", "y"], random_state=np.random.default_rng(12))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ate = pi.PrivateATE.from_formula("y ~ d | x + z", rel, mechanism=MECH).fit(random_state=3)
        pom = pi.PrivatePOM.from_formula("y ~ d | x + z", rel, mechanism=MECH).fit(random_state=3)
    assert "bootstrap" in str(pom.summary())
    names = list(pom.params.index)
    diff = pom[names[1]] - pom[names[0]]
    assert float(diff.params.iloc[0]) == pytest.approx(float(ate.params.iloc[0]), rel=1e-10)
    se_diff = float(diff.bse.iloc[0])
    assert se_diff >= float(ate.bse.iloc[0]) * (1 - 1e-10)
    cov = pom.cov_params().to_numpy()
    c = np.array([-1.0, 1.0])
    assert se_diff == pytest.approx(float(np.sqrt(c @ cov @ c)), rel=1e-12)
    # the arms' own influence values would give another (here smaller) number
    infl = pom.influence.to_numpy() @ c
    assert float(np.sqrt(np.mean(infl**2) / infl.size)) < se_diff
