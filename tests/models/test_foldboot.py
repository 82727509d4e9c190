"""The fold-block bootstrap standard error of the treatment models (issue 14)."""

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import privinfer as pi
from privinfer.models._foldboot import N_BLOCKS, block_labels, collapse
from privinfer.models._suffstats import FoldStats

# the designs shared with benchmarks/fixed_ridge.py
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _designs import limited_overlap as _overlap
from _designs import skewed_wide_reference as _design

MECH = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 10), "z": pi.reference.Uniform(-1, 1)})


def _fit(raw, seed, **options):
    rel = MECH.privatize(raw, public=["d", "y"], random_state=np.random.default_rng(seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return pi.PrivateATE.from_formula("y ~ d | x + z", rel, mechanism=MECH, **options).fit(
            random_state=np.random.default_rng(seed + 1)
        )


# a 24-replication Monte Carlo (about 45 s): in the extended tier, so that the default run
# stays under ten minutes on two cores; the bootstrap's other tests stay in the default run
@pytest.mark.extended
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


MECH1 = pi.AlphaIdentity(
    1.0, {"x1": pi.reference.Uniform(-1, 1), "x2": pi.reference.Uniform(-1, 1)}
)


def _widened_fits(check: bool, seeds, monkeypatch, **options):
    from privinfer.models import _onestep

    if not check:  # the rule before: the shift's noise from its spread over the folds only
        monkeypatch.setattr(_onestep.TreatmentModel, "_shift_bootstrap_on", lambda self: False)
    out = []
    for seed in seeds:
        raw = _overlap(1000, np.random.default_rng(seed))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = pi.PrivateATE.from_formula("y ~ d | x1 + x2", raw, mechanism=MECH1, **options)
            res = model.fit(random_state=np.random.default_rng(seed + 1))
        out.append(res)
    monkeypatch.undo()
    return out


def test_a_widening_for_bias_is_checked_against_the_bootstraps_noise_of_the_shift(monkeypatch):
    # alpha = 1, n = 1000, limited overlap: the estimate is unbiased (|bias| <= 0.09 SE in
    # the validation study), but the comparison fits behind the bias bound are noisy in a
    # way all held-out folds share, which their spread cannot see. Measured on this design:
    # the shift's Monte Carlo sd is twice the fold spread, and 40% of the fits widened.
    # Here 7 of 16 fits widen before the check and 2 after.
    seeds = range(200, 216)
    before = _widened_fits(False, seeds, monkeypatch)
    after = _widened_fits(True, seeds, monkeypatch)
    widened_before = sum(bool((r._record.bias_bound > 0).any()) for r in before)
    widened_after = sum(bool((r._record.bias_bound > 0).any()) for r in after)
    for a, b in zip(before, after, strict=True):  # the same fit: only the bound moves
        # (up to summation order: a bootstrapped fit sums the folds' statistics by blocks)
        assert float(b.params.iloc[0]) == pytest.approx(float(a.params.iloc[0]), rel=1e-10)
        assert float(b.bse.iloc[0]) == pytest.approx(float(a.bse.iloc[0]), rel=1e-8)
        bound = float(a._record.bias_bound.iloc[0])
        assert float(b._record.bias_bound.iloc[0]) <= bound + 1e-10 * abs(bound)
    assert widened_before >= 4, widened_before  # the false alarm the check removes ...
    assert widened_after <= widened_before // 2, (widened_before, widened_after)  # ... mostly


def _fixed_ridge_bounds(monkeypatch, compare_cv):
    from privinfer.nuisance import regularize

    monkeypatch.setattr(regularize, "FIXED_COMPARE_CV", compare_cv)
    fits = _widened_fits(True, range(300, 312), monkeypatch, ridge=1.0)
    err = np.array([float(r.params.iloc[0]) - 1.0 for r in fits])
    se = np.array([float(r.bse.iloc[0]) for r in fits])
    bound = np.array([float(r._record.bias_bound.iloc[0]) for r in fits])
    ci = np.array([r.conf_int().iloc[0].to_numpy(dtype=float) for r in fits])
    return err, se, bound, (ci[:, 0] <= 1.0) & (ci[:, 1] >= 1.0)


def test_a_fixed_heavy_ridge_is_compared_with_the_cv_choice_and_its_bound_tracks_the_bias(
    monkeypatch,
):
    # a fixed heavy ridge (1.0 relative to the mean eigenvalue) biases the estimate by
    # 3-6 SE at alpha = 1; its comparison fit is the private CV's own choice, so the bound
    # estimates the bias: within a factor of two of each fit's actual error (0.54 to 1.42
    # times it in these 12 fits), the interval widened in every fit and covering the truth
    # in 8 of 12 that the plain interval misses in all 12 (24 of 30 over seeds 300-329)
    err, se, bound, covers = _fixed_ridge_bounds(monkeypatch, True)
    assert np.all(np.abs(err) > 1.96 * se), err / se
    assert np.all(bound > 2.0 * se), bound / se
    ratio = bound / np.abs(err)
    assert np.all((ratio > 0.5) & (ratio < 2.0)), ratio
    assert covers.sum() >= 7, covers
    # the comparison before: the full basis at the ridge / 100, which inverts its 60
    # functions nearly unpenalised; its noise set the bound to 0 in 4 of these 12 fits
    # (it vanished in 9 of seeds 300-329) and to 2.5 to 6 times the error in 7
    err0, _, bound0, _ = _fixed_ridge_bounds(monkeypatch, False)
    np.testing.assert_allclose(err0, err, rtol=1e-10)  # the same fits: only the bound moves
    ratio0 = bound0 / np.abs(err0)
    assert np.sum((ratio0 < 0.5) | (ratio0 > 2.0)) >= 6, ratio0


def test_the_bias_warning_of_a_fixed_ridge_names_the_ridge_not_a_sample_size():
    # a relative ridge's bias does not fade with n: the warning named n >= 926864 here
    raw = _overlap(1000, np.random.default_rng(300))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pi.PrivateATE.from_formula("y ~ d | x1 + x2", raw, mechanism=MECH1, ridge=1.0).fit(
            random_state=np.random.default_rng(301)
        )
    bias = pi.exceptions.RegularizationBiasWarning
    texts = [str(w.message) for w in caught if w.category is bias]
    assert len(texts) == 1, texts
    assert "the fixed ridge=1 biases the estimate" in texts[0]
    assert "ridge='cv'" in texts[0] and "n >=" not in texts[0]


def test_a_fixed_ridge_just_above_the_noise_keeps_a_finite_bootstrap_standard_error():
    # alpha = 0.7, n = 4000: a fixed ridge of 1 clears the privatisation noise of the
    # estimate's own Gram matrices (seeds 102 and 103 of this design; 100 and 101 are
    # refused and name ridges of 1.11 and 1.3), but some bootstrap draws reweight the
    # folds below it: unfloored, those draws inverted noise and the bootstrap standard
    # error came out at 3e17 and 4e17. Floored at the draws' own noise guard it stays of
    # the order of the influence one, and the estimate does not move
    mech = pi.AlphaIdentity(0.7, MECH.reference)
    for seed in (102, 103):
        raw = _design(4000, np.random.default_rng(seed))
        rel = mech.privatize(raw, public=["d", "y"], random_state=np.random.default_rng(seed + 900))
        fits = []
        for variance in ("influence", "bootstrap"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = pi.PrivateATE.from_formula(
                    "y ~ d | x + z", rel, mechanism=mech, ridge=1.0, variance=variance
                )
                fits.append(model.fit(random_state=seed - 100))
        infl, boot = fits
        assert float(boot.params.iloc[0]) == pytest.approx(float(infl.params.iloc[0]), rel=1e-12)
        ratio = float(boot.bse.iloc[0] / infl.bse.iloc[0])
        assert 1.0 <= ratio < 5.0, ratio
        assert abs(float(boot.params.iloc[0]) - 1.36) < 0.2  # ATE = 1 + 0.3 E[x] = 1.36


@pytest.mark.parametrize(("n", "warns"), [(4000, True), (5760, False)])
def test_blanket_noise_warning_below_the_validated_effective_size(n, warns):
    # n * alpha^2 = 1000 (alpha = 0.5): the limited-overlap validation design missed its
    # bands there with 100 replications, so the fit warns and names the n needed; at 1440
    # it passed, and the blanket warning stays silent
    raw = _design(n, np.random.default_rng(3))
    rel = MECH.privatize(raw, public=["d", "y"], random_state=np.random.default_rng(4))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pi.PrivateATE.from_formula(
            "y ~ d | x + z", rel, mechanism=MECH, variance="influence"
        ).fit(random_state=np.random.default_rng(5))
    blanket = [
        str(w.message)
        for w in caught
        if issubclass(w.category, pi.exceptions.NuisanceNoiseWarning)
        and "effective sample size" in str(w.message)
    ]
    if warns:
        assert len(blanket) == 1 and "about n >= 4800 rows at alpha = 0.5" in blanket[0]
    else:
        assert blanket == []


def test_a_smaller_perturbation_share_keeps_the_variance_of_a_linear_statistic(monkeypatch):
    # the research option _PERTURB_SHARE perturbs by a share s of the bootstrap's variance
    # and scales the draws' deviations back by 1/sqrt(s): for a statistic linear in the
    # fold sums the two readings must agree exactly (same multinomial counts), while a
    # wrong scale (s instead of sqrt(s), or none) would not
    import privinfer.models._foldboot as fb

    rng = np.random.default_rng(5)
    F = 3
    fine = FoldStats(
        PP=np.zeros((F * N_BLOCKS, 1, 1, 1)),
        Py=np.zeros((F * N_BLOCKS, 1, 1)),
        P1=np.zeros((F * N_BLOCKS, 1, 1)),
        cnt=np.ones((F * N_BLOCKS, 1)),
        sy=rng.lognormal(size=(F * N_BLOCKS, 1)),
        AA=None,
        Ay=None,
        A1=None,
        F4=np.zeros((F * N_BLOCKS, 1)),
        FR=np.zeros((F * N_BLOCKS, 1)),
        RR=np.zeros((F * N_BLOCKS, 1)),
    )

    def stat(_fits, st):
        return np.array([st.sy.sum() / st.cnt.sum(), st.sy[0, 0] - 2 * st.sy[2, 0]])

    out = {}
    for share in (1.0, 0.5, 0.2):
        monkeypatch.setattr(fb, "_PERTURB_SHARE", share)
        out[share] = fb.bootstrap_se(fine, F, lambda st: None, stat, np.random.default_rng(9), 200)
    # the mean's denominator is fixed only at share 1 (multinomial counts sum to 16 per fold),
    # so compare the second, exactly linear, statistic, and the first loosely
    np.testing.assert_allclose(out[0.5].se[1], out[1.0].se[1], rtol=1e-10)
    np.testing.assert_allclose(out[0.2].se[1], out[1.0].se[1], rtol=1e-10)
    assert out[0.5].se[0] == pytest.approx(out[1.0].se[0], rel=0.02)
    assert not np.allclose(out[0.5].draws[:, 1], out[1.0].draws[:, 1])  # other draws


def _capture_block_terms(monkeypatch):
    """Record every ``_block_terms`` call of a fit with the studentized reading on."""
    from privinfer.models import _onestep

    calls = []
    orig = _onestep.TreatmentModel._block_terms

    def spy(self, fits, blocks, fine, contrast):
        out = orig(self, fits, blocks, fine, contrast)
        calls.append((self, fits, blocks, fine, contrast, out))
        return out

    monkeypatch.setattr(_onestep, "_STUDENTIZE", "record")
    monkeypatch.setattr(_onestep.TreatmentModel, "_block_terms", spy)
    return calls


@pytest.mark.parametrize("model", [pi.PrivateATE, pi.PrivatePOM, pi.PrivateATT])
def test_block_terms_add_up_to_the_estimate_and_their_spread_to_the_influence_se(
    monkeypatch, model
):
    # the studentized reading (research option _STUDENTIZE) rests on two facts: the held-out
    # blocks' terms of the estimate's own fits sum to the estimate (the ATT's linearised
    # terms to zero), and their within-fold spread estimates the influence standard error
    calls = _capture_block_terms(monkeypatch)
    raw = _design(3000, np.random.default_rng(11))
    rel = MECH.privatize(raw, public=["d", "y"], random_state=np.random.default_rng(5))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = model.from_formula("y ~ d | x + z", rel, mechanism=MECH, variance="bootstrap")
        res = m.fit(random_state=np.random.default_rng(6))
    first = calls[0][-1]  # the estimate's own fits come first
    total = first.sum(axis=(0, 1))
    if model is pi.PrivateATT:
        assert np.allclose(total, 0.0, atol=1e-10)
    else:
        assert np.allclose(total, res.params.to_numpy(), rtol=1e-9, atol=1e-10)
    plain, stud, _, se_if = m._stud_record
    self, fits, blocks, fine, contrast, _ = calls[0]
    block_se = self._block_se(fits, blocks, fine, contrast)
    # 5 folds x 16 blocks: the block estimate has about 8% relative noise
    assert np.all(np.abs(block_se / se_if - 1.0) < 0.3), (block_se, se_if)
    # 30 draws, each one's ratio computed on the same blocks
    assert len(calls) >= 1 + 15 and np.all(stud > 0) and np.all(plain > 0)
    assert np.all(stud <= plain * (1 + 1e-12))  # one-sided: no draw's deviation grows


def test_studentizing_divides_each_draws_deviation_by_its_ratio():
    from privinfer.models._foldboot import BootstrapSE
    from privinfer.models._onestep import _studentized

    dev = np.array([1.0, -1.0, 10.0, -10.0, 0.5, -0.5])
    ratio = np.array([1.0, 1.0, 10.0, 10.0, 0.5, np.nan])  # the NaN one is left as it is
    shift = np.arange(6.0)
    draws = np.column_stack([2.0 + dev, shift, ratio])
    out = BootstrapSE(draws.std(axis=0, ddof=1), 6, np.cov(draws.T), draws)
    stud = _studentized(out, 1, one_sided=False)
    expect = np.array([1.0, -1.0, 1.0, -1.0, 1.0, -0.5])
    assert stud.draws.shape == (6, 2)
    assert np.allclose(stud.draws[:, 0] - 2.0, expect)  # the draws' mean is 2
    assert np.allclose(stud.draws[:, 1], shift)  # other columns untouched
    assert stud.se[0] == pytest.approx(np.std(expect, ddof=1))
    # one-sided (the default): a ratio below 1 leaves its draw as it is
    one = _studentized(out, 1)
    assert np.allclose(one.draws[:, 0] - 2.0, [1.0, -1.0, 1.0, -1.0, 0.5, -0.5])
