"""The bias bound also measures the move under halved sieve caps.

Where the CV's choices sit below half the cap the move is exactly zero, so nothing
changes; on a design whose propensity and outcome oscillate together (the validation
suite's held-out ``wiggle_confound``) the fits rest on the richest sieves the sample
affords, below ``alpha = 1`` at n = 4000 and at ``alpha = 1`` at n = 1000, the move is
not zero, and it enters the bias bound. A refit with the caps left as they are (not
halved), or the move left out of the bound, fails these tests.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
import privinfer.models._onestep as onestep

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import validate as V


class _Splits:
    """Collects the SplitFit of every cross-fit of the next fits."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.fits: list = []
        self.bootstrapped: list[bool] = []  # whether each call ran the fold-block bootstrap
        inner = onestep.TreatmentModel._fit_split

        def spy(model, *a, **k):
            out = inner(model, *a, **k)
            self.fits.append(out)
            self.bootstrapped.append((a[4] if len(a) > 4 else k.get("rng")) is not None)
            return out

        monkeypatch.setattr(onestep.TreatmentModel, "_fit_split", spy)


def _smooth(alpha: float, seed: int = 0) -> tuple[pd.DataFrame, pi.AlphaIdentity]:
    rng = np.random.default_rng(seed)
    n = 2000
    x = rng.uniform(-1, 1, n)
    d = (rng.random(n) < 1 / (1 + np.exp(-x))).astype(int)
    raw = pd.DataFrame({"x": x, "d": d, "y": d + x + rng.normal(size=n)})
    mech = pi.AlphaIdentity(alpha, {"x": pi.reference.Uniform(-1, 1)})
    return mech.privatize(raw, public=["d", "y"], random_state=seed + 1), mech


def _fit(model, data, mech, **options):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = model.from_formula("y ~ d | x", data, mechanism=mech, **options).fit(random_state=3)
    return res, caught


@pytest.mark.parametrize("alpha", [0.7, 1.0])
def test_the_move_is_exactly_zero_where_the_cap_does_not_bind(monkeypatch, alpha):
    data, mech = _smooth(alpha)
    spy = _Splits(monkeypatch)
    _fit(pi.PrivatePOM, data, mech, variance="influence")
    split = spy.fits[-1]
    assert split.cap_shift is not None and split.cap_shift.shape == (2,)
    assert np.all(split.cap_shift == 0.0)


def test_no_move_with_a_fixed_ridge(monkeypatch):
    spy = _Splits(monkeypatch)
    data, mech = _smooth(0.7)
    _fit(pi.PrivateATE, data, mech, ridge=1.0, variance="influence")
    assert [s.cap_shift for s in spy.fits] == [None]


@pytest.mark.parametrize(("seed", "alpha", "n"), [(1101, 0.7, 4000), (141, 1.0, 1000)])
def test_a_wiggly_design_moves_and_the_bound_takes_the_move(monkeypatch, seed, alpha, n):
    design = V.DESIGNS["wiggle_confound"]
    mech, released, _, _ = V.replication(seed, design.name, alpha, n, 0)
    spy = _Splits(monkeypatch)

    def fit(cap_sensitivity: bool):
        monkeypatch.setattr(onestep, "_CAP_SENSITIVITY", cap_sensitivity)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            res = (
                V.MODELS["POM"]
                .from_formula(design.formula, released, mechanism=mech)
                .fit(random_state=np.random.default_rng(1))
            )
        return res, caught

    with_move, caught = fit(True)
    split = spy.fits[-1]
    moved = np.sqrt(np.maximum(split.cap_shift**2 - split.cap_shift_se**2, 0.0))
    assert np.max(np.abs(split.cap_shift) / with_move.bse.to_numpy()) > 0.25
    bound = with_move._record.bias_bound.to_numpy()
    # the bound is at least the move minus its noise wherever that clears the note share
    clears = moved / with_move.bse.to_numpy() > onestep._BIAS_NOTE_SHARE
    assert clears.any() and np.all(bound[clears] >= moved[clears] - 1e-12)
    messages = [
        str(w.message) for w in caught if w.category is pi.exceptions.RegularizationBiasWarning
    ]
    assert any("cap is halved" in m for m in messages)
    without, _ = fit(False)
    assert spy.fits[-1].cap_shift is None
    pd.testing.assert_series_equal(without.params, with_move.params)  # the estimates stay
    assert np.all(without._record.bias_bound.to_numpy() <= bound + 1e-12)
    assert without.conf_int()["upper"].sub(without.conf_int()["lower"]).sum() < (
        with_move.conf_int()["upper"].sub(with_move.conf_int()["lower"]).sum()
    )


def test_a_bound_set_by_the_cap_move_skips_the_shift_bootstrap(monkeypatch):
    # at alpha = 1 a fit whose interval would widen is refitted with the bootstrap of the
    # comparison fit's shift; that can only lower the shift's part of the bound, so where
    # the halved-cap move sets the bound the refit would change nothing
    design = V.DESIGNS["wiggle_confound"]
    mech, released, _, _ = V.replication(141, design.name, 1.0, 1000, 0)
    spy = _Splits(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = (
            V.MODELS["POM"]
            .from_formula(design.formula, released, mechanism=mech)
            .fit(random_state=np.random.default_rng(1))
        )
    split = spy.fits[-1]
    moved = np.sqrt(np.maximum(split.cap_shift**2 - split.cap_shift_se**2, 0.0))
    bound = res._record.bias_bound.to_numpy()
    assert np.any(bound > 0) and np.allclose(bound[bound > 0], moved[bound > 0])
    assert spy.bootstrapped == [False] * len(spy.fits)
