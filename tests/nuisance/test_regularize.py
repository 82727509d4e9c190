"""Spectral ridge paths, private CV losses, the noise guard and the bias-aware critical value."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

import privinfer as pi
from privinfer.inversion import ReferenceMoments, private_gram, private_mean
from privinfer.nuisance.regularize import (
    EXTRAPOLATION_LIMIT,
    SpectraCache,
    _cv_losses_batched,
    _cv_losses_loop,
    _fold_spectra,
    _penalty_share,
    bias_aware_critical_value,
    cv_spectral,
    fit_crossfit,
    guard_lift,
    guarded_of,
    loosest_plausible,
    next_richer,
    noise_guard,
    plausible_candidates,
    ridge_path,
    spectral_solve,
    train_average,
)


def _spd(rng, J):
    A = rng.normal(size=(J, J))
    return A @ A.T / J + 0.1 * np.eye(J)


@pytest.mark.parametrize("free_first", [False, True])
def test_ridge_path_equals_direct_solves(free_first):
    rng = np.random.default_rng(0)
    G = _spd(rng, 6)
    G[3, 3] -= 1.0  # indefinite, as deconvolution can give
    r = rng.normal(size=6)
    ridges = [1.5, 3.0, 10.0]
    coefs, floored = ridge_path(G, r, ridges, free_first=free_first)
    D = np.eye(6)
    if free_first:
        D[0, 0] = 0.0
    for lam, b in zip(ridges, coefs, strict=True):
        np.testing.assert_allclose(b, np.linalg.solve(G + lam * D, r), rtol=1e-9, atol=1e-12)
    assert floored.tolist() == [0, 0, 0]


def test_ridge_path_floors_only_as_last_resort_and_counts():
    G = np.diag([1.0, -0.5])
    coefs, floored = ridge_path(G, np.ones(2), [0.0, 1.0], free_first=False)
    assert floored.tolist() == [1, 0]
    assert np.all(np.isfinite(coefs))
    np.testing.assert_allclose(coefs[1], [0.5, 2.0])


def test_spectral_solve_pads_sub_basis_with_zeros():
    rng = np.random.default_rng(1)
    G, r = _spd(rng, 5), rng.normal(size=5)
    idx = np.array([0, 2, 3])
    coef, _ = spectral_solve(G, r, 0.0, idx)
    np.testing.assert_allclose(coef[idx], np.linalg.solve(G[np.ix_(idx, idx)], r[idx]))
    assert coef[1] == 0.0 and coef[4] == 0.0


def test_riesz_cv_loss_is_unbiased_for_the_true_loss():
    """Held-out private Riesz loss theta'G theta - 2 theta'M has the true-data loss as mean.

    The data are fixed; only the privatisation is random. With a finite reference the
    reference moments are exact, so the private loss is exactly unbiased.
    """
    rng = np.random.default_rng(2)
    n, alpha = 300, 0.4
    levels = np.array([0.0, 1.0, 2.0, 3.0, 4.0])
    x = rng.choice(levels, n, p=[0.4, 0.3, 0.15, 0.1, 0.05])
    d = (rng.random(n) < 0.3 + 0.1 * x).astype(float)
    ref_w = np.full(5, 0.2)

    def feats(v):
        return np.column_stack([np.ones(v.size), v, v**2])

    ref = ReferenceMoments.from_features(feats(levels), ref_w)
    theta = np.array([1.0, -0.3, 0.2])
    true = np.mean(d * (feats(x) @ theta) ** 2 - 2 * feats(x) @ theta)
    losses = []
    for _ in range(4000):
        keep = rng.random(n) < alpha
        z = np.where(keep, x, rng.choice(levels, n, p=ref_w))
        P = feats(z)
        G = private_gram(P, ref, alpha, weights=d)
        M = private_mean(P, ref, alpha)
        losses.append(theta @ G @ theta - 2 * theta @ M)
    losses = np.array(losses)
    mc_se = losses.std(ddof=1) / np.sqrt(losses.size)
    assert abs(losses.mean() - true) < 4 * mc_se
    # and the loss is informative: its noise is not huge relative to the value
    assert losses.std() < 5 * abs(true) + 1


def test_cv_spectral_prefers_needed_sub_basis_and_is_scale_free():
    rng = np.random.default_rng(3)
    n, F = 4000, 5
    x = rng.uniform(-1, 1, n)
    X = np.column_stack([np.ones(n), x, x**2, x**3])
    y = 1 + x**2 + 0.3 * rng.normal(size=n)
    folds = np.arange(n) % F
    G = np.stack([X[folds == f].T @ X[folds == f] / (n / F) for f in range(F)])
    c = np.stack([X[folds == f].T @ y[folds == f] / (n / F) for f in range(F)])
    cands = [np.array([0, 1]), np.array([0, 1, 2])]
    a = cv_spectral(G, c, np.full(F, n / F), candidates=cands)
    b = cv_spectral(7.0 * G, 7.0 * c, np.full(F, n / F), candidates=cands)
    assert a.candidate == 1 == b.candidate
    assert a.relative_ridge == b.relative_ridge


def test_cv_spectral_margin_asks_a_richer_candidate_to_win_on_the_paired_folds():
    # x^3 adds a little (y has a small cubic term): the richer candidate wins by a mean
    # loss difference d; with margin m it stays chosen exactly while m * se(paired d) < d
    rng = np.random.default_rng(5)
    n, F = 4000, 5
    x = rng.uniform(-1, 1, n)
    X = np.column_stack([np.ones(n), x, x**3])
    y = x + 0.15 * x**3 + rng.normal(size=n)
    folds = np.arange(n) % F
    G = np.stack([X[folds == f].T @ X[folds == f] / (n / F) for f in range(F)])
    c = np.stack([X[folds == f].T @ y[folds == f] / (n / F) for f in range(F)])
    rows = np.full(F, n / F)
    kw = {"candidates": [np.array([0, 1]), np.arange(3)], "ridges": [0.0]}
    assert cv_spectral(G, c, rows, **kw).candidate == 1
    # the held-out losses per fold, by hand: theta_{-f}' G_f theta_{-f} - 2 theta_{-f}' c_f
    loss = np.zeros((2, F))
    for j, idx in enumerate(kw["candidates"]):
        for f in range(F):
            Gt, ct = G[np.arange(F) != f].mean(0), c[np.arange(F) != f].mean(0)
            th = np.linalg.solve(Gt[np.ix_(idx, idx)], ct[idx])
            loss[j, f] = th @ G[f][np.ix_(idx, idx)] @ th - 2 * th @ c[f][idx]
    d = loss[1] - loss[0]
    gap, se_d = -d.mean(), d.std(ddof=1) / np.sqrt(F)
    assert gap > 0 and se_d < cv_spectral(G, c, rows, **kw).columns["fold_se"][1]
    assert cv_spectral(G, c, rows, margins=[0.0, 0.9 * gap / se_d], **kw).candidate == 1
    assert cv_spectral(G, c, rows, margins=[0.0, 1.1 * gap / se_d], **kw).candidate == 0
    with pytest.raises(pi.exceptions.DataMismatchError, match="one non-negative number"):
        cv_spectral(G, c, rows, margins=[0.0, 1.0, 2.0], **kw)


def test_fit_crossfit_with_zero_ridge_is_least_squares_per_fold():
    rng = np.random.default_rng(4)
    n, F = 1000, 4
    X = np.column_stack([np.ones(n), rng.normal(size=(n, 2))])
    y = X @ [1.0, 2.0, -1.0] + rng.normal(size=n)
    folds = np.arange(n) % F
    G = np.stack([X[folds == f].T @ X[folds == f] / (n / F) for f in range(F)])
    c = np.stack([X[folds == f].T @ y[folds == f] / (n / F) for f in range(F)])
    fits = fit_crossfit(G, c, np.full(F, n / F), ~np.eye(F, dtype=bool), fixed_ridge=0.0)
    for f in range(F):
        ols = np.linalg.lstsq(X[folds != f], y[folds != f], rcond=None)[0]
        np.testing.assert_allclose(fits.coefs[f], ols, rtol=1e-10)
    assert fits.choice is None and fits.n_floored == 0


def test_noise_guard_zero_when_resolved_positive_when_swamped():
    rng = np.random.default_rng(5)
    F = 5
    clean = np.stack([np.diag([1.0, 1.0, 1.0]) + 1e-3 * np.diag(rng.normal(size=3))
                      for _ in range(F)])  # fmt: skip
    noisy = np.stack([np.diag([1.0, 1.0, 0.01]) + 0.3 * np.diag(rng.normal(size=3))
                      for _ in range(F)])  # fmt: skip
    n = np.full(F, 100.0)
    mask = np.arange(F) != 0
    idx = np.arange(3)
    assert noise_guard(clean, n, idx, mask, clean[mask].mean(axis=0)) == 0.0
    assert noise_guard(noisy, n, idx, mask, noisy[mask].mean(axis=0)) > 0.05


@pytest.mark.parametrize("t", [0.0, 0.3, 1.0, 2.5, 12.0])
def test_bias_aware_critical_value_matches_direct_computation(t):
    cv = float(bias_aware_critical_value(t))
    # the defining equation
    assert norm.cdf(cv - t) - norm.cdf(-cv - t) == pytest.approx(0.95, abs=1e-9)
    # and a direct Monte Carlo quantile of |N(t, 1)|
    draws = np.abs(np.random.default_rng(6).normal(t, 1.0, 400_000))
    assert cv == pytest.approx(np.quantile(draws, 0.95), abs=0.01)


def test_bias_aware_critical_value_reduces_to_z_and_validates():
    assert float(bias_aware_critical_value(0.0, 0.1)) == pytest.approx(norm.ppf(0.95))
    with pytest.raises(ValueError, match="finite"):
        bias_aware_critical_value(np.inf)


def test_results_conf_int_is_bias_aware_when_a_bound_is_reported():
    from privinfer.results import Diagnostics, PrivateResults, ResultsRecord

    phi = np.array([[1.0], [-1.0], [1.0], [-1.0]])
    common = ("Demo", "y", pd.Series({"m": 2.0}), phi, {"alpha": 1.0}, None, (),
              Diagnostics(), pd.DataFrame())  # fmt: skip
    plain = PrivateResults(ResultsRecord(*common))
    wide = PrivateResults(ResultsRecord(*common, bias_bound=pd.Series({"m": 0.5})))
    se = float(plain.bse["m"])
    cv = float(bias_aware_critical_value(0.5 / se))
    assert float(wide.conf_int().loc["m", "upper"]) == pytest.approx(2.0 + cv * se)
    assert float(plain.conf_int().loc["m", "upper"]) == pytest.approx(2.0 + 1.959964 * se)
    assert "widened" in str(wide.summary())


def test_public_api_exports_warning():
    assert issubclass(pi.exceptions.RegularizationBiasWarning, pi.exceptions.PrivinferWarning)


@pytest.mark.parametrize("alpha", [1.0, 0.6])
def test_private_logit_is_invariant_to_column_units(alpha):
    """The propensity fit must not depend on the covariates' units (issue 14, 401(k) case)."""
    from privinfer.nuisance.logit import fit_private_logit

    rng = np.random.default_rng(9)
    n = 3000
    x = rng.uniform(-1, 1, (n, 2))
    d = (rng.random(n) < 1 / (1 + np.exp(-(x[:, 0] - 0.5 * x[:, 1])))).astype(float)
    keep = rng.random(n) < alpha
    z = np.where(keep[:, None], x, rng.uniform(-1, 1, (n, 2)))
    ref = rng.uniform(-1, 1, (2048, 2))
    w = np.full(2048, 1 / 2048)
    scale = np.array([1e4, 1e-3])
    a = fit_private_logit(d, np.zeros((n, 0)), z, ref, w, alpha)
    b = fit_private_logit(d, np.zeros((n, 0)), z * scale, ref * scale, w, alpha)
    np.testing.assert_allclose(z @ a.coef[1:] + a.coef[0], (z * scale) @ b.coef[1:] + b.coef[0],
                               rtol=1e-6, atol=1e-8)  # fmt: skip


def _no_overlap_riesz_stats(seed: int, n: int = 1000, folds: int = 5):
    """Per-fold Riesz statistics of arm 0 where x > 0.9 has almost no arm-0 rows.

    Propensity 0.99 above 0.9 and 0.5 below; the basis is a cubic plus four narrow bumps
    in [0.92, 1], which the arm-0 rows barely see (``G`` weights them) but ``M`` (all
    rows) does: the directions without overlap in the sample.
    """
    rng = np.random.default_rng(seed)
    x = rng.uniform(size=n)
    d = rng.uniform(size=n) < np.where(x > 0.9, 0.99, 0.5)
    B = np.column_stack(
        [x**k for k in range(4)]
        + [np.maximum(0.0, 1 - np.abs(x - c) / 0.01) for c in (0.93, 0.95, 0.97, 0.99)]
    )
    f = np.arange(n) % folds
    G = np.stack([(B[f == g] * ~d[f == g, None]).T @ B[f == g] / (n / folds) for g in range(folds)])
    M = np.stack([B[f == g].mean(axis=0) for g in range(folds)])
    return G, M, np.full(folds, n / folds)


def test_cv_spectral_does_not_trust_a_riesz_fit_carried_by_its_ridge():
    # true loss -E[1/(1 - pi)] = -11.8; a fit that extrapolates into the bumps scores
    # millions below it on every held-out fold (no arm-0 row there), carried by its ridge
    cands = [np.arange(4), np.arange(8)]
    wild = 0
    for seed in range(8):
        G, M, nr = _no_overlap_riesz_stats(seed)
        old = cv_spectral(G, M, nr, candidates=cands, noise_share=0.0, extrapolation_limit=np.inf)
        new = cv_spectral(G, M, nr, candidates=cands, noise_share=0.0)
        wild += old.loss < -1e3
        assert -20.0 < new.loss < 0.0
        t = new.table
        at = (t.candidate == new.candidate) & (t.relative_ridge == new.relative_ridge)
        assert t.loc[at, "tame"].all()
        assert float(t.loc[at, "penalty_share"].iloc[0]) <= EXTRAPOLATION_LIMIT
        # the comparison fit behind the bias bound is no wild fit either
        loose_cand, loose_rel = loosest_plausible(new)
        assert loose_cand >= new.candidate and loose_rel <= new.relative_ridge
        cmp = (t.candidate == loose_cand) & (t.relative_ridge == loose_rel)
        assert bool(t.loc[cmp, "tame"].all())
    assert wild >= 3  # the design does produce wild fits without the check


def test_extrapolation_check_below_alpha_one_and_with_indefinite_gram():
    cands = [np.arange(4), np.arange(8)]
    G, M, nr = _no_overlap_riesz_stats(0)
    ch = cv_spectral(G, M, nr, candidates=cands, noise_share=0.3)
    t = ch.table
    assert bool(t.loc[(t.candidate == ch.candidate) & (t.relative_ridge == ch.relative_ridge),
                      "tame"].all())  # fmt: skip
    assert -20.0 < ch.loss < 0.0
    # a fit with no positive estimated energy (a deconvolved Gram matrix that is negative
    # in the fit's direction) is carried by its ridge: its penalty share is infinite
    fit_energy = np.array([[-1.0, 0.1], [2.0, 2.0]])  # (ridges, folds)
    penalty_energy = np.array([[0.2, 0.1], [0.2, 0.2]])
    kappa = _penalty_share(fit_energy, penalty_energy, np.array([1.0, 3.0]))
    assert np.isinf(kappa[0]) and kappa[1] == pytest.approx(0.1)


def _quintic_fold_stats(rng, n, F, mean, noise):
    """Per-fold Gram matrices (F, 6, 6) and cross moments (F, 6) of the quintic basis,
    x ~ U(-1, 1), y = mean(x) + N(0, noise^2), fold of row i: i mod F.
    """
    x = rng.uniform(-1.0, 1.0, n)
    X = np.vander(x, 6, increasing=True)
    y = mean(x) + rng.normal(0.0, noise, n)
    folds = np.arange(n) % F
    G = np.stack([X[folds == f].T @ X[folds == f] / (n / F) for f in range(F)])
    c = np.stack([X[folds == f].T @ y[folds == f] / (n / F) for f in range(F)])
    return G, c


def _sine_ladder(seed, n, F, noise):
    """Fold statistics of y = sin(2x) + noise in a quintic, the leave-one-fold-out masks
    and the linear, cubic and quintic candidates."""
    G, c = _quintic_fold_stats(np.random.default_rng(seed), n, F, lambda x: np.sin(2.0 * x), noise)
    cands = [np.arange(2), np.arange(4), np.arange(6)]
    return G, c, np.full(F, n / F), ~np.eye(F, dtype=bool), cands


def test_comparison_fit_loosens_the_sieve_as_far_as_the_cv_allows():
    # y = sin(2x): the CV picks the cubic, and the quintic is within one fold SE of it; the
    # comparison fit behind the bias bound is the richest sieve within one fold SE, at
    # its own scale, and is fitted on that sieve's functions
    F = 5
    G, c, nr, masks, cands = _sine_ladder(5, 4000, F, 1.0)
    fits = fit_crossfit(G, c, nr, masks, candidates=cands, noise_share=0.0)
    cand, rel = loosest_plausible(fits.choice)
    t = fits.choice.table
    row = t[(t.candidate == cand) & (t.relative_ridge == rel)].iloc[0]
    chosen = t[
        (t.candidate == fits.choice.candidate) & (t.relative_ridge == fits.choice.relative_ridge)
    ].iloc[0]
    assert cand >= fits.choice.candidate and rel <= fits.choice.relative_ridge
    assert row.loss <= chosen.loss + chosen.fold_se and bool(row.tame)
    # no richer pair qualifies (the richest, then the smallest ridge, is returned)
    richer = t[
        (t.candidate > cand)
        & (t.relative_ridge <= fits.choice.relative_ridge)
        & (t.relative_ridge >= fits.choice.relative_ridge / 100)
    ]
    assert not ((richer.loss <= chosen.loss + chosen.fold_se) & richer.tame).any()
    sub = cands[cand]
    assert fits.choice.candidate == 1 and cand == 2  # a richer sieve (not vacuous)
    for f in range(F):
        direct = _direct_ridge_fit(G, c, masks[f], sub, rel)
        np.testing.assert_allclose(fits.loose[f, sub], direct, rtol=1e-6, atol=1e-8)
        assert np.all(fits.loose[f, np.setdiff1d(np.arange(6), sub)] == 0.0)


def test_compare_next_takes_the_next_nesting_sieve_where_no_richer_one_is_plausible(
    monkeypatch,
):
    # y linear in x with much noise, 300 rows: the CV picks the line and no richer sieve
    # comes within one fold SE; the research option COMPARE_NEXT then compares with the
    # cubic (the smallest later candidate nesting the line) at its CV-best ridge, capped
    # at the chosen one, instead of the line at a hundredth of the ridge
    import privinfer.nuisance.regularize as regularize

    F, n = 5, 300
    G, c = _quintic_fold_stats(np.random.default_rng(5), n, F, lambda x: 1.0 + 0.5 * x, 2.0)
    nr, masks = np.full(F, n / F), ~np.eye(F, dtype=bool)
    cands = [np.arange(2), np.arange(4), np.arange(6)]
    plain = fit_crossfit(G, c, nr, masks, candidates=cands, noise_share=0.0)
    assert plain.choice.candidate == 0
    assert loosest_plausible(plain.choice)[0] == 0  # no richer sieve is plausible
    assert np.all(plain.loose[:, 2:] == 0.0)
    cand, rel = next_richer(plain.choice, cands)
    assert cand == 1 and rel <= plain.choice.relative_ridge
    monkeypatch.setattr(regularize, "COMPARE_NEXT", True)
    fits = fit_crossfit(G, c, nr, masks, candidates=cands, noise_share=0.0)
    np.testing.assert_array_equal(fits.coefs, plain.coefs)  # the fits themselves unchanged
    for f in range(F):
        direct = _direct_ridge_fit(G, c, masks[f], cands[1], rel)
        np.testing.assert_allclose(fits.loose[f, cands[1]], direct, rtol=1e-6, atol=1e-8)
        assert np.all(fits.loose[f, 4:] == 0.0)
    # nothing nests the richest candidate
    top = dataclasses.replace(plain.choice, candidate=2, subset=cands[2])
    assert next_richer(top, cands) is None


def _direct_ridge_fit(G, c, mask, sub, rel):
    """The ridge fit on sub-basis ``sub`` of the training folds ``mask`` by a direct solve:
    relative ridge ``rel`` times the mean eigenvalue of the penalised block, the constant
    unpenalised."""
    Gs = G[mask].mean(axis=0)[np.ix_(sub, sub)]
    rt = c[mask].mean(axis=0)[sub]
    P = np.eye(sub.size)
    P[0, 0] = 0.0
    schur = Gs[1:, 1:] - np.outer(Gs[1:, 0], Gs[1:, 0]) / Gs[0, 0]
    lam = rel * np.trace(schur) / (sub.size - 1)  # relative to the penalised block
    return np.linalg.solve(Gs + lam * P, rt)


def test_undersmoothed_fit_divides_the_cv_ridge_and_keeps_the_choice():
    # the models' Riesz fits at alpha = 1 (--riesz-undersmooth): the same CV choice, the
    # fits at the chosen relative ridge over K (direct solves)
    F = 5
    G, c, nr, masks, cands = _sine_ladder(2, 1000, F, 3.0)
    base = fit_crossfit(G, c, nr, masks, candidates=cands, noise_share=0.0)
    under = fit_crossfit(G, c, nr, masks, candidates=cands, noise_share=0.0, undersmooth=10.0)
    assert base.choice.relative_ridge > 0  # the division is not vacuous
    assert under.choice.candidate == base.choice.candidate
    assert under.relative_ridge == pytest.approx(base.choice.relative_ridge / 10.0)
    sub = base.choice.subset
    for f in range(F):
        direct = _direct_ridge_fit(G, c, masks[f], sub, under.relative_ridge)
        np.testing.assert_allclose(under.coefs[f, sub], direct, rtol=1e-6, atol=1e-8)
    assert not np.allclose(under.coefs, base.coefs)
    # an energy budget stops the undersmoothing where the fits' energy has grown by it
    kw = dict(candidates=cands, noise_share=0.0, undersmooth=10.0)
    free = fit_crossfit(G, c, nr, masks, energy_budget=np.inf, **kw)
    np.testing.assert_array_equal(free.coefs, under.coefs)
    none = fit_crossfit(G, c, nr, masks, energy_budget=0.5, **kw)
    np.testing.assert_array_equal(none.coefs, base.coefs)

    def energy(fits):
        # each fold's fit on its own estimation fold, row-weighted (held out, not training)
        w = nr / nr.sum()
        return sum(w[f] * fits.coefs[f] @ G[f] @ fits.coefs[f] for f in range(F))

    grown = energy(under) / energy(base)
    assert grown > 1.0
    part = fit_crossfit(G, c, nr, masks, energy_budget=0.999 * grown, **kw)
    assert base.choice.relative_ridge / 10 < part.relative_ridge < base.choice.relative_ridge
    # the middle step is taken exactly when its held-out energy is within the budget
    mid = fit_crossfit(G, c, nr, masks, candidates=cands, noise_share=0.0, undersmooth=10**0.5)
    step = energy(mid) / energy(base)
    assert 1.0 < step < grown
    np.testing.assert_array_equal(
        fit_crossfit(G, c, nr, masks, energy_budget=1.001 * step, **kw).coefs, mid.coefs
    )
    low = fit_crossfit(G, c, nr, masks, energy_budget=0.999 * step, **kw)
    np.testing.assert_array_equal(low.coefs, base.coefs)
    with pytest.raises(ValueError, match="undersmooth must be at least 1"):
        fit_crossfit(G, c, nr, masks, candidates=cands, noise_share=0.0, undersmooth=0.5)


def test_bootstrap_refits_keep_the_sieves_the_cv_cannot_rule_out():
    # y = sin(2x) with little noise: the linear fit loses to the cubic by far more than 2
    # fold SEs, the quintic does not; a bootstrap draw refits only the cubic and quintic
    n, F = 4000, 5
    G, c = _quintic_fold_stats(np.random.default_rng(7), n, F, lambda x: np.sin(2.0 * x), 0.3)
    cands = [np.arange(2), np.arange(4), np.arange(6)]
    fits = fit_crossfit(G, c, np.full(F, n / F), ~np.eye(F, dtype=bool), candidates=cands,
                        noise_share=0.0)  # fmt: skip
    t = fits.choice.table
    best = t[t.n_floored == 0].groupby("candidate").loss.min()
    top = t.loc[t[t.n_floored == 0].loss.idxmin()]
    want = sorted(int(k) for k in best.index if best[k] <= top.loss + 2.0 * top.fold_se)
    got = plausible_candidates(fits.choice, 2.0)
    assert got == want and 0 not in got and fits.choice.candidate in got
    assert plausible_candidates(fits.choice, 1e6) == [0, 1, 2]
    # floored pairs never count; with none left, every candidate is refitted
    floored = fits.choice.table.assign(n_floored=1)
    ch = dataclasses.replace(fits.choice, columns=floored)
    assert plausible_candidates(ch, 2.0) == [0, 1, 2]


def test_fits_sharing_a_spectra_cache_equal_fits_without_one():
    # the outcome and Riesz fits of one arm share the Gram matrices: with one cache the
    # second fit reuses the first's spectra and noise guards, and every number is the same
    # (to the bit) as without it; below alpha = 1 (noise_share > 0) the guards are cached too
    rng = np.random.default_rng(11)
    n, F = 3000, 5
    G, c = _quintic_fold_stats(rng, n, F, lambda x: np.tanh(3.0 * x), 0.5)
    G += rng.normal(0.0, 0.01, G.shape)  # deconvolution noise: not positive definite
    e = np.tile(G[:, 0].mean(axis=0), (F, 1))  # the mean of the basis (a Riesz right side)
    nr = np.full(F, n / F)
    masks = ~np.eye(F, dtype=bool)
    cands = [np.arange(2), np.arange(4), np.arange(6)]
    cache = SpectraCache()
    for rhs in (c, e, c):
        got = fit_crossfit(G, rhs, nr, masks, candidates=cands, noise_share=0.5,
                           spectra_cache=cache)  # fmt: skip
        want = fit_crossfit(G, rhs, nr, masks, candidates=cands, noise_share=0.5)
        assert np.array_equal(got.coefs, want.coefs) and np.array_equal(got.loose, want.loose)
        pd.testing.assert_frame_equal(got.choice.table, want.choice.table, check_exact=True)
    assert len(cache.spectra) == len(cands) and len(cache.guards) >= F


def _public_private_fold_stats(rng, n, F, noise):
    """Fold statistics of the basis (1, w, w^2, x, x^2) with public w and private x: the
    Gram entries of the private functions carry zero-mean noise of sd ``noise`` (the
    deconvolution's), those of the constant and the public ones are sample moments.
    The outcome is y = 2w - w^2 + 0.5x + N(0, 1).
    """
    w, x = rng.normal(size=n), rng.uniform(-1.0, 1.0, n)
    X = np.column_stack([np.ones(n), w, w**2 - 1.0, x, 3.0 * x**2 - 1.0])
    y = 2.0 * w - w**2 + 0.5 * x + rng.normal(size=n)
    folds = np.arange(n) % F
    G = np.stack([X[folds == f].T @ X[folds == f] / (n / F) for f in range(F)])
    E = rng.normal(0.0, noise, G.shape)
    E = 0.5 * (E + E.transpose(0, 2, 1))
    E[:, :3, :3] = 0.0  # constant and public block: no privatisation noise
    c = np.stack([X[folds == f].T @ y[folds == f] / (n / F) for f in range(F)])
    return G + E, c


#: which of the basis functions (1, w, w^2, x, x^2) carry no privatisation noise
_NOISELESS = np.array([True, True, True, False, False])


def _public_private_setup(seed, n=4000, F=5):
    """Seeded fold statistics of ``_public_private_fold_stats`` (noise sd 1), the folds'
    row counts and the leave-one-fold-out training masks."""
    G, c = _public_private_fold_stats(np.random.default_rng(seed), n, F, 1.0)
    return G, c, np.full(F, n / F), ~np.eye(F, dtype=bool)


def test_guard_on_private_functions_only_is_an_extra_private_penalty():
    # with ``noiseless`` the noise guard g is added to the private functions' diagonal and
    # the CV ridge lambda to every non-constant one: the fit solves (G + lambda D + g D_x)
    G, c, nr, masks = _public_private_setup(23)
    noiseless = _NOISELESS
    fits = fit_crossfit(G, c, nr, masks, noise_share=0.5, noiseless=noiseless)
    idx = np.arange(5)
    guarded = guarded_of(idx, noiseless)
    assert guarded.tolist() == [False, False, False, True, True]
    lifts = []
    for f in range(len(nr)):
        Gt = np.tensordot(masks[f] / masks[f].sum(), G, 1)
        rt = masks[f] / masks[f].sum() @ c
        g = noise_guard(G, nr, idx, masks[f], Gt, 0.5, guarded)
        S = Gt[1:, 1:] - np.outer(Gt[1:, 0], Gt[1:, 0]) / Gt[0, 0]
        lam = fits.relative_ridge * np.trace(S) / 4
        D, Dx = np.diag([0.0, 1, 1, 1, 1]), np.diag([0.0, 0, 0, 1, 1])
        want = np.linalg.solve(Gt + lam * D + g * Dx, rt)
        np.testing.assert_allclose(fits.coefs[f], want, rtol=1e-8, atol=1e-10)
        lifts.append(g)
    assert min(lifts) > 0.05  # the test is about a guard that bites
    np.testing.assert_allclose(guard_lift(np.eye(5), 0.5, guarded).diagonal(), [1, 1, 1, 1.5, 1.5])


def test_guard_on_private_functions_only_spares_the_public_fit():
    # y depends on the public w as 2w - w^2: a guard that floors every function's ridge
    # shrinks those coefficients with the noisy private ones; on the private functions
    # only, the public fit is closer to the truth (six seeded releases, noise that the
    # guard must act on)
    n, F = 4000, 5
    nr = np.full(F, n / F)
    masks = ~np.eye(F, dtype=bool)
    noiseless = np.array([True, True, True, False, False])
    truth = np.array([2.0, -1.0])  # coefficients of w and w^2 - 1
    err = np.zeros((6, 2))
    for i, seed in enumerate(range(21, 27)):
        G, c = _public_private_fold_stats(np.random.default_rng(seed), n, F, 1.0)
        spared = fit_crossfit(G, c, nr, masks, noise_share=0.5, noiseless=noiseless)
        common = fit_crossfit(G, c, nr, masks, noise_share=0.5)
        err[i] = [np.abs(f.coefs[:, 1:3] - truth).max() for f in (spared, common)]
    assert err[:, 0].mean() < 0.8 * err[:, 1].mean()
    assert np.sum(err[:, 0] < err[:, 1]) >= 4


def test_guarded_spectra_batched_equal_fold_by_fold():
    # the batched CV losses (one eigendecomposition per fold of the lifted matrices) and
    # the fold-by-fold loop agree, guard energy included
    rng = np.random.default_rng(23)
    n, F = 3000, 5
    G, c = _public_private_fold_stats(rng, n, F, 0.6)
    nr = np.full(F, n / F)
    idx = np.arange(5)
    guarded = guarded_of(idx, np.array([True, True, True, False, False]))
    _assert_batched_equals_loop(G, c, nr, idx, np.array([0.0, 0.01, 0.1, 1.0]), 0.5, guarded)


def _assert_batched_equals_loop(G, c, nr, idx, rel, share, guarded):
    """The batched CV losses of a guarded candidate equal the fold-by-fold loop's."""
    F = nr.size
    W = np.where(np.eye(F, dtype=bool), 0.0, nr[None, :])
    W = W / W.sum(axis=1, keepdims=True)
    Gt, rt = np.einsum("fg,gij->fij", W, G), W @ c
    sp = _fold_spectra(G, nr, Gt, idx, 0.0, share, guarded)
    assert sp is not None and sp.lift is not None and sp.lift.max() > 0
    batched = _cv_losses_batched(sp, c, nr, rt, idx, rel, np.zeros(F))
    loop = _cv_losses_loop(G, c, nr, idx, rel, np.zeros(F), 0.0, share, guarded)
    for a, b in zip(batched, loop, strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


def test_spare_flags_keep_the_common_guard_for_unflagged_candidates():
    # candidates not flagged in ``spare`` are fitted exactly as without ``noiseless``;
    # the flagged one differs (its guard lifts only the private functions)
    G, c, nr, _ = _public_private_setup(24)
    noiseless = _NOISELESS
    cands = [np.array([0, 1, 3]), np.arange(5)]
    flagged = cv_spectral(G, c, nr, candidates=cands, noise_share=0.5, noiseless=noiseless,
                          spare=[False, True]).table  # fmt: skip
    common = cv_spectral(G, c, nr, candidates=cands, noise_share=0.5).table
    first = flagged.candidate == 0
    pd.testing.assert_frame_equal(flagged[first], common[first], check_exact=True)
    assert not np.allclose(flagged.loss[~first], common.loss[~first])


def test_comparison_fit_spares_public_functions_when_the_choice_does(monkeypatch):
    # the looser comparison fit behind the bias bound must be looser in every way: with a
    # chosen candidate that spares its public functions from the noise guard and a richer
    # comparison candidate that is not flagged, the comparison fit still spares them
    # (guarding them again biased the comparison fit, so the bound measured that bias)
    import privinfer.nuisance.regularize as reg

    G, c, nr, masks = _public_private_setup(25)
    noiseless = _NOISELESS
    cands = [np.array([0, 1, 2, 3]), np.arange(5)]
    real_cv = reg.cv_spectral

    def chose_first(*args, **kwargs):
        ch = real_cv(*args, **kwargs)
        return reg.SpectralChoice(0, cands[0], ch.ridge, 1e-3, ch.loss, ch.columns, 1.0)

    monkeypatch.setattr(reg, "cv_spectral", chose_first)
    monkeypatch.setattr(reg, "loosest_plausible", lambda choice, loosen=100.0: (1, 1e-4))
    kw = dict(candidates=cands, noise_share=0.5, noiseless=noiseless)
    flagged_first = fit_crossfit(G, c, nr, masks, spare=[True, False], **kw)
    both = fit_crossfit(G, c, nr, masks, spare=[True, True], **kw)
    neither = fit_crossfit(G, c, nr, masks, spare=[False, False], **kw)
    np.testing.assert_allclose(flagged_first.coefs, both.coefs, rtol=0, atol=0)
    np.testing.assert_allclose(flagged_first.loose, both.loose, rtol=1e-12, atol=1e-14)
    # and the common guard on the public functions would have changed the comparison fit
    assert not np.allclose(flagged_first.loose[:, 1:3], neither.loose[:, 1:3], atol=1e-3)


def _heteroscedastic_folds(seed, F=5, J=4):
    """Fold Gram matrices whose last function's noise is a tenth of the others' (a rare,
    well-measured direction: small eigenvalue, small noise) and whose smallest eigenvalue
    sits below the noise, so that the guard binds."""
    rng = np.random.default_rng(seed)
    base = np.diag([1.0, 0.3, 0.3, 0.02])
    scale = np.array([0.0, 1.0, 1.0, 0.1])
    Z = rng.normal(0.0, 0.6, (F, J, J))
    E = 0.5 * (Z + Z.transpose(0, 2, 1)) * scale[None, :, None] * scale[None, None, :]
    return base + E, np.full(F, 200.0)


def _guards_beside_the_common_one(monkeypatch, option, value):
    """For five seeds of :func:`_heteroscedastic_folds` (first fold held out): the folds,
    rows, training mask and matrix, the common guard and the guard with research option
    ``option`` set to ``value``."""
    import privinfer.nuisance.regularize as rg

    idx = np.arange(4)
    guarded = np.array([False, True, True, True])
    for seed in range(5):
        G, nr = _heteroscedastic_folds(seed)
        mask = np.arange(5) != 0
        Gt = np.tensordot(mask / mask.sum(), G, 1)
        common = noise_guard(G, nr, idx, mask, Gt, 1.0, guarded)
        with monkeypatch.context() as m:
            m.setattr(rg, option, value)
            shaped = noise_guard(G, nr, idx, mask, Gt, 1.0, guarded)
        yield G, nr, mask, Gt, common, shaped


def test_weighted_guard_lifts_each_function_by_its_own_noise(monkeypatch):
    import privinfer.nuisance.regularize as rg

    guarded = np.array([False, True, True, True])
    for G, nr, mask, Gt, common, lift in _guards_beside_the_common_one(
        monkeypatch, "GUARD_WEIGHTS", 1.0
    ):
        monkeypatch.setattr(rg, "GUARD_WEIGHTS", 1.0)
        d = rg._guard_weights(G, nr)
        monkeypatch.setattr(rg, "GUARD_WEIGHTS", 0.0)
        assert np.ndim(common) == 0 and common > 0 and lift.shape == (3,)
        # the quiet function is lifted far less than by the common guard and than the
        # noisy ones
        assert lift[2] < 0.2 * common and lift[2] < 0.2 * lift[:2].min()
        # whitened by the weights, the lifted innovations clear the whitened noise exactly
        assert np.allclose(lift / lift[0], d[1:] / d[1])
        S = rg._innovation_block(Gt, guarded) + np.diag(lift)
        nu = rg._noise_norm(rg._whiten(G, d), nr, float(nr[mask].sum()))
        lam = np.linalg.eigvalsh(rg._whiten(S, d[1:]))[0]
        assert lam == pytest.approx(rg.NOISE_GUARD * nu, rel=1e-6)  # round-off only


def test_weighted_guard_batched_equals_fold_by_fold(monkeypatch):
    import privinfer.nuisance.regularize as rg

    monkeypatch.setattr(rg, "GUARD_WEIGHTS", 1.0)
    G, nr = _heteroscedastic_folds(7)
    c = np.stack([g @ np.array([1.0, 0.5, -0.5, 2.0]) for g in G])
    idx = np.arange(4)
    guarded = rg._all_but_constant(idx)
    _assert_batched_equals_loop(G, c, nr, idx, np.array([0.0, 0.01, 0.1]), 1.0, guarded)
    # and the default (no weights) is the common guard: cv_spectral's choice differs
    common = cv_spectral(G, c, nr, noise_share=1.0).table
    monkeypatch.setattr(rg, "GUARD_WEIGHTS", 0.0)
    assert not np.allclose(cv_spectral(G, c, nr, noise_share=1.0).table.loss, common.loss)


@pytest.mark.parametrize("option, on, off", [("GUARD_WEIGHTS", 1.0, 0.0),
                                              ("GUARD_DIRECTIONS", True, False)])  # fmt: skip
def test_spectra_cache_keys_on_the_guards_shape(monkeypatch, option, on, off):
    # the outcome and Riesz fits of one arm share a SpectraCache; with a research option
    # of the guard on for one group only (``_GUARD_WEIGHT_FITS``) the other must not
    # reuse its spectra
    import privinfer.nuisance.regularize as rg

    G, nr = _heteroscedastic_folds(11)
    F = nr.size
    c = np.stack([g @ np.array([1.0, 0.5, -0.5, 2.0]) for g in G])
    masks = ~np.eye(F, dtype=bool)
    cands = [np.arange(3), np.arange(4)]
    shared = SpectraCache()
    monkeypatch.setattr(rg, option, on)
    shaped = fit_crossfit(G, c, nr, masks, candidates=cands, spectra_cache=shared)
    monkeypatch.setattr(rg, option, off)
    after = fit_crossfit(G, c, nr, masks, candidates=cands, spectra_cache=shared)
    fresh = fit_crossfit(G, c, nr, masks, candidates=cands)
    np.testing.assert_array_equal(after.coefs, fresh.coefs)
    pd.testing.assert_frame_equal(after.choice.table, fresh.choice.table)
    assert not np.allclose(shaped.coefs, fresh.coefs)


def test_direction_guard_lifts_each_eigen_direction_to_its_own_noise(monkeypatch):
    # ``GUARD_DIRECTIONS``: the lifted innovations have every eigenvalue at least twice
    # the noise applied to its direction, with equality where the guard binds; the quiet
    # function's direction is lifted far less than by the common guard
    import privinfer.nuisance.regularize as rg

    guarded = np.array([False, True, True, True])
    for G, nr, mask, Gt, common, L in _guards_beside_the_common_one(
        monkeypatch, "GUARD_DIRECTIONS", True
    ):
        assert np.ndim(common) == 0 and common > 0 and L.shape == (3, 3)
        assert np.allclose(L, L.T) and np.linalg.eigvalsh(L)[0] > -1e-12
        S = rg._innovation_block(Gt, guarded)
        lam, V = np.linalg.eigh(S)
        # the noise applied to each direction, from the folds' innovation deviations
        inno = rg._innovations(G, guarded)
        w = nr / nr.sum()
        D = inno - np.tensordot(w, inno, 1)
        factor = 5 / 4 * nr.mean() / nr[mask].sum()
        s = np.sqrt(factor * np.einsum("f,fjk->k", w, (D @ V) ** 2))
        lifted = np.diag(V.T @ (S + L) @ V)
        np.testing.assert_allclose(lifted, np.maximum(lam, 2 * s), rtol=1e-9, atol=1e-12)
        assert np.any(lifted > lam + 1e-6)  # the guard binds somewhere
        quiet = np.argmax(np.abs(V[2]))  # the direction of the last (quiet) function
        # (lifted a little: the noisy functions' noise mixes into it)
        lifts = np.diag(V.T @ L @ V)
        assert lifts[quiet] < 0.3 * common and lifts[quiet] < 0.5 * lifts.max()


def test_direction_guard_is_the_common_guard_for_isotropic_noise(monkeypatch):
    # Wigner-like fold noise: the noise applied to any direction is the semicircle edge's
    # half (up to the folds' sampling error), so the weakest direction is lifted as far as
    # by the common guard
    import privinfer.nuisance.regularize as rg

    rng = np.random.default_rng(5)
    J, F = 40, 5
    base = np.diag(np.r_[1.0, np.linspace(0.01, 1.0, J - 1)])
    Z = rng.normal(0.0, 0.05, (F, J, J))
    G = base + 0.5 * (Z + Z.transpose(0, 2, 1))
    nr = np.full(F, 100.0)
    idx, mask = np.arange(J), np.arange(F) != 2
    guarded = rg._all_but_constant(idx)
    Gt = np.tensordot(mask / mask.sum(), G, 1)
    common = noise_guard(G, nr, idx, mask, Gt, 1.0, guarded)
    monkeypatch.setattr(rg, "GUARD_DIRECTIONS", True)
    L = noise_guard(G, nr, idx, mask, Gt, 1.0, guarded)
    S = rg._innovation_block(Gt, guarded)
    lam, V = np.linalg.eigh(S)
    assert common > 0
    assert V[:, 0] @ L @ V[:, 0] == pytest.approx(common, rel=0.2)
    # above the noise nothing is lifted, where the common guard lifts every direction
    top = lam > 2 * (common + lam[0])
    assert top.sum() > 5 and np.abs(V[:, top].T @ L @ V[:, top]).max() < 1e-12


def test_direction_guard_batched_equals_fold_by_fold(monkeypatch):
    import privinfer.nuisance.regularize as rg

    monkeypatch.setattr(rg, "GUARD_DIRECTIONS", True)
    G, nr = _heteroscedastic_folds(7)
    c = np.stack([g @ np.array([1.0, 0.5, -0.5, 2.0]) for g in G])
    idx = np.arange(4)
    _assert_batched_equals_loop(
        G, c, nr, idx, np.array([0.0, 0.01, 0.1]), 1.0, rg._all_but_constant(idx)
    )
    # with public functions spared (a guarded mask that leaves one out)
    _assert_batched_equals_loop(
        G, c, nr, idx, np.array([0.0, 0.01]), 1.0, np.array([False, True, False, True])
    )


def test_direction_guard_for_the_fits_only_keeps_the_common_guards_choice(monkeypatch):
    # ``GUARD_DIRECTIONS_CV = False``: the CV chooses the sieve and the ridge under the
    # common guard, and only the fits take the per-direction guard
    import privinfer.nuisance.regularize as rg

    G, nr = _heteroscedastic_folds(11)
    F = nr.size
    c = np.stack([g @ np.array([1.0, 0.5, -0.5, 2.0]) for g in G])
    masks = ~np.eye(F, dtype=bool)
    cands = [np.arange(3), np.arange(4)]
    common = fit_crossfit(G, c, nr, masks, candidates=cands, noise_share=1.0)
    monkeypatch.setattr(rg, "GUARD_DIRECTIONS", True)
    monkeypatch.setattr(rg, "GUARD_DIRECTIONS_CV", False)
    fits_only = fit_crossfit(G, c, nr, masks, candidates=cands, noise_share=1.0)
    assert rg.GUARD_DIRECTIONS  # restored after the CV
    pd.testing.assert_frame_equal(fits_only.choice.table, common.choice.table)
    assert not np.allclose(fits_only.coefs, common.coefs)
    # each fold's fit is the chosen sieve with the per-direction lift and the CV's ridge
    sub = common.choice.subset
    for f in range(F):
        Gt, rt = train_average(G, c, nr, masks[f])
        Gs = Gt[np.ix_(sub, sub)]
        L = noise_guard(G, nr, sub, masks[f], Gt, 1.0, rg._all_but_constant(sub))
        lam = common.choice.relative_ridge * rg._penalised_scale(Gs)
        want = ridge_path(guard_lift(Gs, L, rg._all_but_constant(sub)), rt[sub], [lam])[0][0]
        np.testing.assert_allclose(fits_only.coefs[f, sub], want, rtol=1e-10, atol=1e-12)
