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


def _release(n=3000, alpha=0.7, seed=0, slope=3.0):
    rng = np.random.default_rng(seed)
    w = rng.normal(size=n)
    x = rng.uniform(0, 1, n)
    d = (rng.random(n) < expit(slope * w)).astype(int)
    y = x + w + d * (1 + w) + rng.normal(size=n)
    raw = pd.DataFrame({"y": y, "d": d, "x": x, "w": w, "g": rng.choice(["a", "b"], n)})
    mech = pi.AlphaIdentity(alpha, {"x": pi.reference.Uniform(0, 1)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = mech.privatize(raw, public=["y", "d", "w", "g"], random_state=seed + 1)
    return raw, rel, mech


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
    with pytest.raises(DataMismatchError, match="binary"):
        pi.PublicTrimming("y ~ w", rel)
    holes = rel.copy()
    holes.loc[holes.index[0], "w"] = np.nan
    with pytest.raises(MissingValueError, match="'w'"):
        pi.PublicTrimming("d ~ w", holes)
    rule = pi.PublicTrimming("d ~ w", rel).fit()
    with pytest.raises(MissingValueError):
        rule.keep(holes)


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
