"""The bias bound also measures the move under a halved noise guard (below alpha = 1).

The noise guard is one ridge per fit, sized by the noise of the whole Gram matrix, so it
also shrinks small but well-measured directions; the comparison fit of the bias bound is
floored at the same guard and cannot see that bias. Where the guard is zero (a smooth
one-covariate design) the move is exactly zero; on the validation suite's held-out
``factor_cells`` (two private factors whose cells confound) it is more than a standard
error, enters the bound and names itself in the warning. A refit with the guard left as
it is (not halved), or the move left out of the bound, fails these tests.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import privinfer as pi
import privinfer.models._onestep as onestep

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from test_cap_sensitivity import _fit, _smooth, _Splits
from validate import DESIGNS


@pytest.mark.parametrize("alpha", [0.7, 0.5])
def test_the_move_is_exactly_zero_where_the_guard_does_not_bite(monkeypatch, alpha):
    data, mech = _smooth(alpha)
    spy = _Splits(monkeypatch)
    _fit(pi.PrivatePOM, data, mech, variance="influence")
    split = spy.fits[-1]
    assert split.guard_shift is not None and split.guard_shift.shape == (2,)
    assert np.all(split.guard_shift == 0.0)


def test_no_move_at_alpha_one_or_with_a_fixed_ridge(monkeypatch):
    spy = _Splits(monkeypatch)
    _fit(pi.PrivateATE, *_smooth(1.0), variance="influence")
    _fit(pi.PrivateATE, *_smooth(0.7), ridge=1.0, variance="influence")
    assert [s.guard_shift for s in spy.fits] == [None, None]


def _cells_release():
    design = DESIGNS["factor_cells"]
    raw = design.simulate(8000, np.random.default_rng(7))
    mech = pi.AlphaIdentity(0.5, design.reference())
    return design, mech.privatize(raw, public=design.public, random_state=8), mech


def _fit_cells(design, data, mech):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = pi.PrivateATE.from_formula(
            design.formula, data, mechanism=mech, variance="influence"
        )
        res = model.fit(random_state=3)
    res._test_model = model  # the bound's parts live on the model
    return res, caught


def test_cells_that_confound_move_and_the_bound_takes_the_move(monkeypatch):
    design, data, mech = _cells_release()
    spy = _Splits(monkeypatch)
    res, caught = _fit_cells(design, data, mech)
    split = spy.fits[-1]
    se = float(res.bse["ATE"])
    move, noise = float(split.guard_shift[0]), float(split.guard_shift_se[0])
    # the guard's shrinkage leaves confounding in: the estimate is biased upward (its
    # error here is +1.0 SE), and halving the guard moves it down by more than 1 SE
    assert move > 1.0 * se and move > 2.0 * noise
    bound = float(res._record.bias_bound["ATE"])
    assert bound == pytest.approx(np.sqrt(move**2 - noise**2), rel=1e-9)
    # the bound's parts by source: the guard's is this bound, and the bound their maximum
    parts = res._test_model._bound_parts
    assert parts.loc["ATE", "guard"] == pytest.approx(bound, rel=1e-12)
    assert parts.loc["ATE", "shift"] < bound and parts.loc["ATE", "cap"] < bound
    bias_warning = pi.exceptions.RegularizationBiasWarning
    texts = [str(w.message) for w in caught if w.category is bias_warning]
    assert texts and "when the guard is halved" in texts[0]
    # without the move the bound that ships sees less than half of it
    monkeypatch.setattr(onestep, "_GUARD_SENSITIVITY", False)
    without, _ = _fit_cells(design, data, mech)
    # the same estimate: the move is a refit beside the fit, not a change of it (equal up
    # to round-off: on some CPUs a spectrum cached by the refit's batched path differs
    # from the plain path's in the last bit)
    assert without.params["ATE"] == pytest.approx(res.params["ATE"], rel=1e-12, abs=0)
    assert float(without._record.bias_bound["ATE"]) < 0.5 * bound


def test_guard_extrapolation_rule_reproduces_and_widens_only_where_the_guard_bites():
    """``benchmarks/guard_extrapolation.py`` rebuilds the recorded intervals at K = 1 and,
    at K = 2, widens only the rows whose guard part sets the bound."""
    import pandas as pd
    from guard_extrapolation import intervals

    from privinfer._critical import bias_aware_critical_value

    rows = pd.DataFrame(
        {
            "est": [1.0, 2.0, 3.0],
            "se": [0.1, 0.1, 0.1],
            "bound_shift": [0.0, 0.2, 0.0],
            "bound_cap": [0.0, 0.0, np.nan],
            "bound_guard": [0.02, 0.05, 0.15],
        }
    )
    # K = 1: row 0 under the note share (plain 1.96), row 1 set by the shift, row 2 by
    # the guard
    c = bias_aware_critical_value(np.array([0.0, 2.0, 1.5]), 0.05)
    one = intervals(rows, 1.0)
    np.testing.assert_allclose(one.upper - rows.est, c * 0.1, rtol=1e-12)
    assert c[0] == pytest.approx(1.959964, abs=1e-6)
    two = intervals(rows, 2.0)
    # row 0: 0.04 / 0.1 = 0.4 now clears the note share; row 1 stays the shift's; row 2
    # doubles its bound
    c2 = bias_aware_critical_value(np.array([0.4, 2.0, 3.0]), 0.05)
    np.testing.assert_allclose(two.upper - rows.est, c2 * 0.1, rtol=1e-12)
    assert two.upper[1] == one.upper[1]
    assert two.upper[2] > one.upper[2]


def test_the_switch_refits_where_the_guard_moves_and_nowhere_else(monkeypatch):
    """The per-fit guard switch (``_GUARD_SWITCH``): a split whose halved-guard move
    exceeds the share is the per-direction fit, exactly; a split with no move is the
    common fit, exactly. A switch that refitted under the common guard, or that compared
    the move with the wrong standard error, fails it."""
    import privinfer.nuisance.regularize as rg

    design, data, mech = _cells_release()
    common, _ = _fit_cells(design, data, mech)
    monkeypatch.setattr(rg, "GUARD_DIRECTIONS", True)
    directions, _ = _fit_cells(design, data, mech)
    monkeypatch.setattr(rg, "GUARD_DIRECTIONS", False)
    # the two guards give different fits here (else the test could not tell them apart)
    assert abs(directions.params["ATE"] - common.params["ATE"]) > 0.3 * common.bse["ATE"]
    monkeypatch.setattr(onestep, "_GUARD_SWITCH", 0.1)
    switched, _ = _fit_cells(design, data, mech)
    assert switched.params["ATE"] == pytest.approx(directions.params["ATE"], rel=1e-10)
    assert switched.bse["ATE"] == pytest.approx(directions.bse["ATE"], rel=1e-10)
    assert switched._test_model._guard_switched == 1.0
    assert "Noise guard:" in str(switched.summary())
    assert "per direction (1 of 1 splits)" in str(switched.summary())
    assert not rg.GUARD_DIRECTIONS  # the switch restores the option
    # a share above the move (in influence SEs) keeps the common fit
    bound = float(common._record.bias_bound["ATE"])
    monkeypatch.setattr(onestep, "_GUARD_SWITCH", 1.01 * bound / float(common.bse["ATE"]))
    kept, _ = _fit_cells(design, data, mech)
    assert kept.params["ATE"] == pytest.approx(common.params["ATE"], rel=1e-10)
    assert kept._test_model._guard_switched == 0.0
    assert "Noise guard:" not in str(kept.summary())
    # and a share just below it switches: the rule is the bound's move over the SE
    monkeypatch.setattr(onestep, "_GUARD_SWITCH", 0.99 * bound / float(common.bse["ATE"]))
    again, _ = _fit_cells(design, data, mech)
    assert again.params["ATE"] == pytest.approx(directions.params["ATE"], rel=1e-10)


def test_the_switch_keeps_the_common_fit_where_the_guard_does_not_bite(monkeypatch):
    data, mech = _smooth(0.5)
    common, _ = _fit(pi.PrivateATE, data, mech, variance="influence")
    monkeypatch.setattr(onestep, "_GUARD_SWITCH", 0.0)  # any move at all switches
    spy = _Splits(monkeypatch)
    kept, _ = _fit(pi.PrivateATE, data, mech, variance="influence")
    assert kept.params["ATE"] == common.params["ATE"]
    assert [s.guard_directions for s in spy.fits] == [False]


def test_the_switch_is_off_at_the_defaults():
    assert onestep._GUARD_SWITCH is None
    move, se = np.array([5.0]), np.array([1.0])
    assert not onestep.TreatmentModel._switches_guard(move, np.zeros(1), se)
