"""Small seeded Monte Carlo studies of PrivateGMM that can fail (DESIGN.md §10)."""

from __future__ import annotations

import os
import sys
import warnings
from pathlib import Path

import numpy as np
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
