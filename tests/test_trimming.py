"""The public trimming rule (Crump, Hotz, Imbens and Mitnik, 2009)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit

import privinfer as pi
from privinfer.exceptions import DataMismatchError, MechanismMismatchError, MissingValueError
from privinfer.trimming import optimal_threshold


def _publish(raw, alpha, seed):
    """Release ``raw`` with ``x`` private (U(0, 1) reference); everything else public."""
    mech = pi.AlphaIdentity(alpha, {"x": pi.reference.Uniform(0, 1)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = mech.privatize(raw, public=["y", "d", "w", "g"], random_state=seed + 1)
    return raw, rel, mech


def _release(n=3000, alpha=0.7, seed=0, slope=3.0):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=n)
    x = rng.uniform(0, 1, n)
    d = (rng.random(n) < expit(slope * w)).astype(int)
    y = x + w + d * (1 + w) + rng.normal(size=n)
    raw = pd.DataFrame({"y": y, "d": d, "x": x, "w": w, "g": rng.choice(["a", "b"], n)})
    return _publish(raw, alpha, seed)


def _variance_bound(e, gamma):
    """Crump et al. (2009)'s objective: E[h 1_A] / P(A)^2 with A = {gamma <= e <= 1 - gamma}."""
    keep = (e >= gamma) & (e <= 1 - gamma)
    h = 1 / (e * (1 - e))
    return np.mean(h * keep) / np.mean(keep) ** 2


@pytest.mark.parametrize("a,b", [(0.5, 0.5), (0.3, 0.8), (2.0, 2.0), (1.0, 1.0)])
def test_optimal_threshold_minimises_the_variance_bound(a, b):
    e = np.clip(np.random.default_rng(3).beta(a, b, 20_000), 1e-4, 1 - 1e-4)
    gamma = optimal_threshold(e)
    grid = np.linspace(0.0, 0.3, 601)
    best = min(_variance_bound(e, g) for g in grid)
    assert _variance_bound(e, gamma) <= best * 1.01


def test_no_trimming_under_good_overlap():
    e = np.random.default_rng(4).uniform(0.3, 0.7, 5000)  # sup h <= 2 E[h]
    assert optimal_threshold(e) == 0.0


def test_optimal_threshold_rejects_bad_propensities():
    with pytest.raises(DataMismatchError, match=r"\(0, 1\)"):
        optimal_threshold(np.array([0.2, 1.0]))


def test_rule_fits_the_public_propensity_like_statsmodels():
    sm = pytest.importorskip("statsmodels.api")
    _, rel, _ = _release(slope=1.0)
    rule = pi.PublicTrimming.from_formula("d ~ w + C(g)", rel).fit(ridge=0.0)
    assert rule.coef.index.tolist() == ["Intercept", "w", "C(g)[T.b]"]
    X = sm.add_constant(np.column_stack([rel.w, (rel.g == "b").astype(float)]))
    ref = sm.Logit(rel.d.to_numpy(), X).fit(disp=0).params
    np.testing.assert_allclose(rule.coef.to_numpy(), ref, rtol=1e-6, atol=1e-8)


def test_rule_survives_separation_and_trims_it():
    rng = np.random.default_rng(5)
    w = rng.normal(size=1000)
    df = pd.DataFrame({"d": (w > 0.8).astype(int), "w": w})  # separated
    rule = pi.PublicTrimming.from_formula("d ~ w", df).fit()
    assert np.isfinite(rule.coef).all()
    kept = rule.apply(df)  # a narrow band around the separating value, both arms in it
    assert kept.w.min() > 0.5 and kept.w.max() < 1.1
    assert min(rule.kept_by_arm.values()) >= 10
    with pytest.raises(DataMismatchError, match="per treatment arm"):
        pi.PublicTrimming.from_formula("d ~ w", df).fit(threshold=0.45)


def test_apply_keeps_metadata_and_models_accept_the_rows():
    _, rel, _ = _release()
    rule = pi.PublicTrimming.from_formula("d ~ w", rel).fit()
    kept = rule.apply(rel)
    assert 0 < len(kept) < len(rel) and len(kept) == rule.n_kept
    assert kept.attrs == rel.attrs
    p = rule.propensity(kept)
    assert p.min() >= rule.bounds[0] and p.max() <= rule.bounds[1]
    full = pi.PrivateATE.from_formula("y ~ d | x + w", rel).fit(random_state=0)
    trimmed = pi.PrivateATE.from_formula("y ~ d | x + w", kept).fit(random_state=0)
    # the trimmed population's ATE is identified with much less weight variance
    assert float(trimmed.bse["ATE"]) < 0.8 * float(full.bse["ATE"])


def test_selecting_on_a_private_column_is_what_the_rule_refuses():
    _, rel, mech = _release(alpha=0.5)
    with pytest.raises(DataMismatchError, match=r"\['x'\] are private"):
        pi.PublicTrimming.from_formula("d ~ x + w", rel)
    plain = pd.DataFrame(rel)  # metadata dropped: the mechanism tells
    plain.attrs = {}
    with pytest.raises(DataMismatchError, match="private"):
        pi.PublicTrimming.from_formula("d ~ x", plain, mechanism=mech)
    # why: rows selected on released x are no release of a subpopulation
    with pytest.raises(MechanismMismatchError):
        pi.PrivateATE.from_formula("y ~ d | x + w", rel[rel.x < 0.5])


@pytest.mark.parametrize("formula", ["d ~ bs(x, df=4)", "d ~ w + center(x)", "d ~ poly(x, 2)"])
def test_a_private_column_inside_a_transform_is_refused(formula):
    # formulaic names no variable inside a stateful transform before it meets data
    _, rel, _ = _release(n=500)
    with pytest.raises(DataMismatchError, match=r"\['x'\] are private"):
        pi.PublicTrimming.from_formula(formula, rel)


def test_missing_values_inside_a_transform_are_named():
    _, rel, _ = _release(n=500)
    holes = rel.copy()
    holes.loc[holes.index[0], "w"] = np.nan
    with pytest.raises(MissingValueError, match="public column 'w' has missing values"):
        pi.PublicTrimming.from_formula("d ~ bs(w, df=3)", holes)


def test_sides_and_fixed_thresholds():
    _, rel, _ = _release()
    upper = pi.PublicTrimming.from_formula("d ~ w", rel).fit(threshold=0.05, side="upper")
    assert upper.bounds == (0.0, 0.95)
    assert (upper.propensity(upper.apply(rel)) <= 0.95).all()
    lower = pi.PublicTrimming.from_formula("d ~ w", rel).fit(threshold=0.05, side="lower")
    assert lower.bounds == (0.05, 1.0)
    assert "Rows kept" in lower.summary() and len(repr(lower).splitlines()) == 1


@pytest.mark.parametrize(
    "formula,kwargs,err,match",
    [
        ("d ~ w", {"threshold": 0.5}, ValueError, "threshold"),
        ("d ~ w", {"threshold": "crump"}, ValueError, "optimal"),
        ("d ~ w", {"side": "left"}, ValueError, "side"),
        ("d ~ w", {"ridge": -1.0}, ValueError, "ridge"),
    ],
)
def test_bad_fit_options(formula, kwargs, err, match):
    _, rel, _ = _release(n=500)
    with pytest.raises(err, match=match):
        pi.PublicTrimming.from_formula(formula, rel).fit(**kwargs)


def test_bad_inputs():
    _, rel, _ = _release(n=500)
    with pytest.raises(DataMismatchError, match="treatment ~"):
        pi.PublicTrimming("w", rel)
    with pytest.raises(DataMismatchError, match="not in the data"):
        pi.PublicTrimming("d ~ v", rel)
    with pytest.raises(DataMismatchError, match="continuous"):
        pi.PublicTrimming("y ~ w", rel)
    with pytest.raises(DataMismatchError, match="single value"):
        pi.PublicTrimming("d ~ w", rel.assign(d="treated"))  # one level: no contrast
    holes = rel.copy()
    holes.loc[holes.index[0], "w"] = np.nan
    with pytest.raises(MissingValueError, match="'w'"):
        pi.PublicTrimming("d ~ w", holes)
    rule = pi.PublicTrimming("d ~ w", rel).fit()
    with pytest.raises(MissingValueError):
        rule.keep(holes)


@pytest.mark.parametrize("side", ["both", "upper", "lower"])
def test_two_level_treatment_is_coded_like_the_models(side):
    """A non-0/1 two-level treatment: its levels in the models' order (sorted, or a
    categorical's order), the second one treated, give the rule of the 0/1 coding."""
    _, rel, _ = _release(slope=2.0)
    words = rel.assign(d=np.where(rel.d == 1, "treated", "control"))
    ref = pi.PublicTrimming.from_formula("d ~ w", rel).fit(threshold=0.1, side=side)
    rule = pi.PublicTrimming.from_formula("d ~ w", words).fit(threshold=0.1, side=side)
    np.testing.assert_allclose(rule.propensity(words), ref.propensity(rel), rtol=1e-12)
    np.testing.assert_array_equal(rule.keep(words), ref.keep(rel))
    assert (rule.bounds, rule.n_kept, rule.arms) == (ref.bounds, ref.n_kept, ("control", "treated"))
    assert rule.kept_by_arm == {"control": ref.kept_by_arm[0], "treated": ref.kept_by_arm[1]}
    # the models agree on which level is treated: "treated" vs "control"
    assert pi.PrivateATT.from_formula("y ~ d | x + w", words).levels == ["control", "treated"]
    # a categorical's own order, as in the models: here "treated" comes first (control)
    flipped = words.assign(d=pd.Categorical(words.d, categories=["treated", "control"]))
    back = pi.PublicTrimming.from_formula("d ~ w", flipped).fit(threshold=0.1)
    np.testing.assert_allclose(back.propensity(flipped), 1 - ref.propensity(rel), rtol=1e-9)
    assert back.arms == ("treated", "control")
    # any two numbers: the larger is treated
    shifted = pi.PublicTrimming.from_formula("d ~ w", rel.assign(d=rel.d + 1)).fit()
    np.testing.assert_allclose(shifted.coef, pi.PublicTrimming("d ~ w", rel).fit().coef)
    pytest.importorskip("matplotlib").use("Agg")
    labels = rule.plot(words).get_legend_handles_labels()[1]
    assert labels[:2] == ["d = control (control)", "d = treated (treated)"]


@pytest.mark.parametrize("side", ["both", "upper", "lower"])
def test_reference_level_names_the_control_as_in_the_models(side):
    _, rel, _ = _release(slope=2.0)
    ref = pi.PublicTrimming.from_formula("d ~ w", rel).fit(threshold=0.1, side=side)
    # "treated" sorts first: by default it is the control, as in the models
    words = rel.assign(d=np.where(rel.d == 1, "treated", "untreated"))
    rule = pi.PublicTrimming.from_formula("d ~ w", words, reference_level="untreated").fit(
        threshold=0.1, side=side)
    np.testing.assert_allclose(rule.propensity(words), ref.propensity(rel), rtol=1e-12)
    np.testing.assert_array_equal(rule.keep(words), ref.keep(rel))
    assert rule.arms == ("untreated", "treated")
    assert rule.kept_by_arm == {"untreated": ref.kept_by_arm[0], "treated": ref.kept_by_arm[1]}
    assert pi.PrivateATT.from_formula("y ~ d | x + w", words,
                                      reference_level="untreated").levels == list(rule.arms)
    # a 0/1 treatment with 1 the control: the propensity of 0, and upper <-> lower
    flip = {"both": "both", "upper": "lower", "lower": "upper"}[side]
    back = pi.PublicTrimming.from_formula("d ~ w", rel, reference_level=1).fit(
        threshold=0.1, side=flip)
    np.testing.assert_allclose(back.propensity(rel), 1 - ref.propensity(rel), rtol=1e-9)
    np.testing.assert_array_equal(back.keep(rel), ref.keep(rel))
    assert back.arms == (1, 0) and back.kept_by_arm == ref.kept_by_arm


def test_reference_level_is_the_base_of_several_levels():
    _, rel, _ = _release_levels()
    ref = pi.PublicTrimming.from_formula("d ~ w", rel).fit(ridge=0.0)
    rule = pi.PublicTrimming.from_formula("d ~ w", rel, reference_level=2).fit(ridge=0.0)
    assert rule.levels == (2, 0, 1) and list(rule.coef.columns) == [0, 1]
    # without a ridge the multinomial logit's fit does not depend on its base level
    np.testing.assert_allclose(rule.propensity(rel), ref.propensity(rel)[:, [2, 0, 1]],
                               rtol=1e-6, atol=1e-10)
    np.testing.assert_array_equal(rule.keep(rel), ref.keep(rel))
    assert rule.kept_by_arm == ref.kept_by_arm


@pytest.mark.parametrize("levels", [2, 3])
def test_an_unknown_reference_level_is_refused(levels):
    _, rel, _ = _release(n=500) if levels == 2 else _release_levels(n=600)
    with pytest.raises(DataMismatchError, match=r"reference_level 7 not in \[0, 1"):
        pi.PublicTrimming("d ~ w", rel, reference_level=7)


@pytest.mark.extended  # the rule's exact checks (kept rows, metadata, bounds) stay
def test_trimmed_fits_cover_the_trimmed_population_effect():
    """Small seeded Monte Carlo (``benchmarks/mc_trimming.py`` is the full study): on a
    design whose overlap problem is a public confounder, the ATE on the rows the rule
    keeps is centred on the subpopulation's effect, with honest standard errors."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import validate as V

    design = V.DESIGNS["public_overlap"]
    pop = design.covariates(400_000, np.random.default_rng(777))
    tau = design.mean(pop, 1) - design.mean(pop, 0)
    err, se, cover, kept = [], [], [], []
    for rep in range(30):
        _, released, s_fit, _ = V.replication(5, "public_overlap", 1.0, 2000, rep)
        rule = pi.PublicTrimming.from_formula("d ~ w", released).fit()
        truth = tau[rule.keep(pop)].mean()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = pi.PrivateATE.from_formula(design.formula, rule.apply(released)).fit(
                random_state=np.random.default_rng(s_fit)
            )
        lo, hi = res.conf_int().iloc[0]
        err.append(float(res.params["ATE"]) - truth)
        se.append(float(res.bse["ATE"]))
        cover.append(lo <= truth <= hi)
        kept.append(rule.share_kept)
    err, se = np.array(err), np.array(se)
    R = err.size
    assert abs(err.mean()) < 3 * err.std(ddof=1) / np.sqrt(R)
    assert 0.6 < se.mean() / err.std(ddof=1) < 1.6
    assert np.mean(cover) >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / R)
    assert 0.4 < np.mean(kept) < 0.8  # the rule bites: public propensities reach 0.02


# ---------------------------------------------------------------------------------------
# Multi-valued treatments: a multinomial public propensity, keep min_k p_k(w) >= gamma


def _release_levels(n=3000, alpha=0.7, seed=0, slope=1.5):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=n)
    x = rng.uniform(0, 1, n)
    g = rng.choice(["a", "b", "c"], n)
    eta = np.column_stack([np.zeros(n), slope * w + 0.3 * (g == "b"), -1.0 - 1.3 * slope * w])
    P = np.exp(eta) / np.exp(eta).sum(axis=1, keepdims=True)
    d = (rng.random(n)[:, None] > P.cumsum(axis=1)[:, :-1]).sum(axis=1)
    y = x + w + d * (1 + w) + rng.normal(size=n)
    raw = pd.DataFrame({"y": y, "d": d, "x": x, "w": w, "g": g})
    return _publish(raw, alpha, seed)


def _level_bound(P, gamma):
    """The sample variance bound E[h 1_A] / P(A)^2, h = sum_k 1/p_k, A = {min_k p_k >= gamma}."""
    keep = P.min(axis=1) >= gamma
    return np.mean((1 / P).sum(axis=1) * keep) / np.mean(keep) ** 2


def test_multinomial_propensity_matches_statsmodels():
    sm = pytest.importorskip("statsmodels.api")
    _, rel, _ = _release_levels()
    rule = pi.PublicTrimming.from_formula("d ~ w + C(g)", rel).fit(ridge=0.0)
    X = sm.add_constant(pd.get_dummies(rel[["w", "g"]], drop_first=True, dtype=float))
    ref = sm.MNLogit(rel["d"].to_numpy(), X).fit(disp=0)
    np.testing.assert_allclose(rule.coef.to_numpy(), ref.params.to_numpy(), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(rule.propensity(rel), ref.predict(), rtol=1e-6, atol=1e-10)
    assert rule.levels == (0, 1, 2) and list(rule.coef.columns) == [1, 2]


def test_level_threshold_minimises_the_level_bound_and_reduces_to_crump():
    rng = np.random.default_rng(5)
    eta = rng.normal(size=(20_000, 3)) * np.array([0.0, 1.5, 2.5])
    P = np.exp(eta) / np.exp(eta).sum(axis=1, keepdims=True)
    gamma = optimal_threshold(P)
    assert 0.0 < gamma < 1 / 3
    grid = np.linspace(0.0, 0.3, 601)
    assert _level_bound(P, gamma) <= min(_level_bound(P, g) for g in grid) * 1.001
    e = np.clip(rng.beta(0.5, 0.5, 5000), 1e-4, 1 - 1e-4)  # two columns: Crump's own rule
    assert optimal_threshold(np.column_stack([1 - e, e])) == optimal_threshold(e)
    assert optimal_threshold(np.full((50, 4), 0.25)) == 0.0  # perfect overlap
    with pytest.raises(DataMismatchError, match="sum to 1"):
        optimal_threshold(np.full((5, 3), 0.2))


def test_level_rule_keeps_rows_where_every_level_is_likely():
    _, rel, _ = _release_levels()
    rule = pi.PublicTrimming.from_formula("d ~ w", rel).fit()
    P = rule.propensity(rel)
    keep = rule.keep(rel)
    assert np.array_equal(keep, P.min(axis=1) >= rule.threshold)
    assert 0.3 < rule.share_kept < 0.95 and rule.threshold > 0
    assert rule.bounds == (rule.threshold, 1 - 2 * rule.threshold)
    assert rule.kept_by_arm == {k: int(np.sum(keep & (rel.d == k))) for k in (0, 1, 2)}
    assert rule.max_h <= (1 / P[keep]).sum(axis=1).max() + 1e-9 < rule.max_h_all
    kept = rule.apply(rel)
    assert kept.attrs == rel.attrs and len(kept) == rule.n_kept
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = pi.PrivateATE.from_formula("y ~ d | x + w", kept).fit(random_state=0)
    assert list(res.params.index) == ["ATE[1 vs 0]", "ATE[2 vs 0]"]
    text = rule.summary()
    assert "multinomial" in text and "every level" in text and len(text.splitlines()) <= 15
    fixed = pi.PublicTrimming.from_formula("d ~ w", rel).fit(threshold=0.1)
    assert fixed.threshold == 0.1 and (fixed.propensity(fixed.apply(rel)).min(axis=1) >= 0.1).all()
    pytest.importorskip("matplotlib").use("Agg")
    assert rule.plot(rel).get_xlabel().startswith("smallest level probability")


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"side": "upper"}, "side='both'"),
        ({"threshold": 0.34}, "threshold"),
        ({"threshold": "x"}, "1/3"),
    ],
)
def test_level_rule_bad_options(kwargs, match):
    _, rel, _ = _release_levels(n=600)
    with pytest.raises(ValueError, match=match):
        pi.PublicTrimming.from_formula("d ~ w", rel).fit(**kwargs)


def test_level_rule_refuses_to_empty_a_level():
    _, rel, _ = _release_levels(n=600, slope=6.0)
    with pytest.raises(DataMismatchError, match="per treatment level"):
        pi.PublicTrimming.from_formula("d ~ w", rel).fit(threshold=0.3)


@pytest.mark.extended  # the level rule's exact checks (kept rows, refusals) stay
def test_trimmed_fits_cover_the_trimmed_effects_of_several_levels():
    """Small seeded Monte Carlo of the multinomial rule (``benchmarks/mc_trimming.py
    --designs public_arms`` is the full study): three levels pushed apart by a public
    covariate; both effects on the rows kept are centred on the subpopulation's effects,
    with honest standard errors."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import validate as V

    design = V.DESIGNS["public_arms"]
    pop = design.covariates(400_000, np.random.default_rng(777))
    taus = {f"ATE[{k} vs 0]": design.mean(pop, k) - design.mean(pop, 0) for k in (1, 2)}
    err = {p: [] for p in taus}
    se = {p: [] for p in taus}
    cover = {p: [] for p in taus}
    kept = []
    for rep in range(30):
        _, released, s_fit, _ = V.replication(5, "public_arms", 1.0, 2000, rep)
        rule = pi.PublicTrimming.from_formula(
            "d ~ bs(w, df=4, extrapolation='clip')", released
        ).fit()
        k = rule.keep(pop)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = pi.PrivateATE.from_formula(design.formula, rule.apply(released)).fit(
                random_state=np.random.default_rng(s_fit)
            )
        ci = res.conf_int()
        for p, tau in taus.items():
            truth = tau[k].mean()
            err[p].append(float(res.params[p]) - truth)
            se[p].append(float(res.bse[p]))
            cover[p].append(ci.loc[p, "lower"] <= truth <= ci.loc[p, "upper"])
        kept.append(rule.share_kept)
    R = 30
    for p in taus:
        e, s = np.array(err[p]), np.array(se[p])
        assert abs(e.mean()) < 3 * e.std(ddof=1) / np.sqrt(R), p
        assert 0.6 < s.mean() / e.std(ddof=1) < 1.6, p
        assert np.mean(cover[p]) >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / R), p
    assert 0.4 < np.mean(kept) < 0.9  # the rule bites: a tenth of the rows below 0.007
