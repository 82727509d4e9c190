"""The oracle of ``benchmarks/bias_sources.py`` explains a one-step estimate's bias.

Given its cross-fitted nuisances, the one-step estimate of :math:`E[Y(k)]` has expectation
:math:`E[Y(k)] + R_k` with :math:`R_k = E[\\pi_k(g_k - \\hat g_k)(\\hat\\mu_k - \\mu_k)]`.
The oracle computes :math:`R_k` from the fitted coefficients evaluated at true covariates;
with a deliberately heavy fixed ridge (large remainders) the mean error over releases must
match the mean remainder within Monte Carlo error. Evaluating the fits at the wrong rows or
with the wrong sign breaks the match (checked by mutation).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import bias_sources as BS
import validate as V
from bias_by_region import Capture

REPS = 6


def test_oracle_remainder_matches_the_bias_of_shrunk_fits(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setattr(BS, "ORACLE_SIZE", 20_000)
    design = V.DESIGNS["wiggle_confound"]
    errs, rems = [], []
    for rep in range(REPS):
        mech, released, s_fit, truths = V.replication(7, design.name, 1.0, 2000, rep)
        model = V.MODELS["POM"].from_formula(design.formula, released, mechanism=mech, ridge=1.0)
        with Capture() as cap, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = model.fit(random_state=np.random.default_rng(s_fit))
        stats, errors = BS._oracle(design, model, cap.basis, cap.fits)
        assert stats.shape == (2, 6) and errors.shape == (2, 3, 20_000)
        errs.append([res.params[p] - truths[p] for p in res.params.index])
        rems.append(stats[:, 0])
    errs, rems = np.asarray(errs), np.asarray(rems)
    mc = (errs - rems).std(axis=0, ddof=1) / np.sqrt(REPS)
    # the heavy ridge leaves remainders far from zero (about -0.13 and +0.15) ...
    assert np.all(np.abs(rems.mean(axis=0)) > 0.06)
    # ... which the errors repeat up to Monte Carlo error (about 0.01 to 0.02)
    assert np.all(np.abs(errs.mean(axis=0) - rems.mean(axis=0)) <= 4 * mc + 0.01)
