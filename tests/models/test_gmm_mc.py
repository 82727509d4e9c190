"""Small seeded Monte Carlo studies of PrivateGMM that can fail (DESIGN.md §10)."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import privinfer as pi

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from mc_gmm import iv_design as _iv_draw
from mc_gmm import ols_design as _ols_draw

SEEDS = (
    range(int(os.environ.get("PRIVINFER_ALL_SEEDS", "0")) + 1)
    if os.environ.get("PRIVINFER_ALL_SEEDS")
    else [0]
)


@pytest.mark.parametrize("seed", SEEDS)
def test_private_regressor_ols_unbiased_with_coverage(seed):
    reps, n, alpha = 300, 1000, 0.5
    mech = pi.AlphaIdentity(alpha, {"x": pi.reference.Uniform(0, 1)})
    root = np.random.SeedSequence(seed)
    est, se = np.empty(reps), np.empty(reps)
    for r, child in enumerate(root.spawn(reps)):
        rng = np.random.default_rng(child)
        released = mech.privatize(_ols_draw(rng, n), public=["y", "w"], random_state=rng)
        res = pi.PrivateGMM.ols("y ~ x + w", released, mechanism=mech).fit(random_state=r)
        est[r], se[r] = res.params["x"], res.bse["x"]
    mc_se = est.std(ddof=1) / np.sqrt(reps)
    assert abs(est.mean() - 2.0) < 4 * mc_se
    cover = np.mean(np.abs(est - 2.0) <= 1.959964 * se)
    assert 0.91 <= cover <= 0.985, cover
    assert 0.85 <= se.mean() / est.std(ddof=1) <= 1.15


@pytest.mark.parametrize("seed", SEEDS)
def test_private_instruments_gmm_coverage_and_j_size(seed):
    reps, n, alpha = 300, 1000, 0.7
    mech = pi.AlphaIdentity(
        alpha, {"z1": pi.reference.Uniform(0, 1), "z2": pi.reference.Uniform(0, 1)}
    )
    root = np.random.SeedSequence(1000 + seed)
    est, se, pj = np.empty(reps), np.empty(reps), np.empty(reps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pi.exceptions.IndefiniteGramWarning)
        for r, child in enumerate(root.spawn(reps)):
            rng = np.random.default_rng(child)
            released = mech.privatize(_iv_draw(rng, n), public=["y", "x"], random_state=rng)
            res = pi.PrivateGMM.iv("y ~ 1 + [x ~ z1 + z2]", released, mechanism=mech).fit(
                random_state=r
            )
            est[r], se[r], pj[r] = res.params["x"], res.bse["x"], res.j_test.pvalue
    mc_se = est.std(ddof=1) / np.sqrt(reps)
    assert abs(est.mean() - 1.0) < 4 * mc_se + 0.02 * est.std()  # GMM's O(1/n) bias
    cover = np.mean(np.abs(est - 1.0) <= 1.959964 * se)
    assert 0.90 <= cover <= 0.985, cover
    assert 0.01 <= np.mean(pj < 0.05) <= 0.10


@pytest.mark.parametrize("seed", SEEDS)
def test_private_anderson_rubin_keeps_its_size_with_a_weak_private_first_stage(seed):
    """alpha = 0.4 makes the private instrument weak (mean F about 3); AR size stays ~5%."""
    from mc_weak_iv import private_z

    reps, n, alpha = 400, 1000, 0.4
    mech = pi.AlphaIdentity(alpha, {"z": pi.reference.Uniform(0, 1)})
    root = np.random.SeedSequence(2000 + seed)
    rej, F = np.empty(reps, dtype=bool), np.empty(reps)
    for r, child in enumerate(root.spawn(reps)):
        rng = np.random.default_rng(child)
        released = mech.privatize(private_z(rng, n), public=["y", "x"], random_state=rng)
        model = pi.PrivateGMM.iv("y ~ 1 + [x ~ z]", released, mechanism=mech)
        weak = model.anderson_rubin(random_state=r)
        rej[r] = weak.ar_test(1.0).pvalue < 0.05
        F[r] = weak.first_stage()["first_stage[x]"].stat
    assert F.mean() < 5  # the design is weak
    assert 0.025 <= rej.mean() <= 0.08, rej.mean()


def test_clr_keeps_its_size_with_weak_private_instruments():
    """Two weak private instruments at alpha = 0.4 (mean F below 5): CLR size ~5%."""
    rng0 = np.random.SeedSequence(77)
    mech = pi.AlphaIdentity(
        0.4, {"z1": pi.reference.Uniform(0, 1), "z2": pi.reference.Uniform(0, 1)}
    )
    reps, rej, F = 300, [], []
    for r, child in enumerate(rng0.spawn(reps)):
        rng = np.random.default_rng(child)
        n = 1000
        z1, z2 = rng.uniform(0, 1, n), rng.uniform(0, 1, n)
        e = rng.standard_normal((n, 2))
        x = 0.3 * z1 + 0.3 * z2 + e[:, 0]
        y = 1 + x + 0.8 * e[:, 0] + 0.6 * e[:, 1]
        raw = pd.DataFrame({"y": y, "x": x, "z1": z1, "z2": z2})
        released = mech.privatize(raw, public=["y", "x"], random_state=rng)
        weak = pi.PrivateGMM.iv("y ~ 1 + [x ~ z1 + z2]", released, mechanism=mech).anderson_rubin(
            random_state=r
        )
        rej.append(weak.clr_test(1.0).pvalue < 0.05)
        F.append(weak.first_stage()["first_stage[x]"].stat)
    assert np.mean(F) < 5
    assert 0.02 <= np.mean(rej) <= 0.09, np.mean(rej)
