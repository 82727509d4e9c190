"""Each nuisance fit's sieve is capped by the rows of the arm whose Gram matrix it solves."""

from __future__ import annotations

import re
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
import privinfer.models._nuisances as nuisances
from privinfer.models._nuisances import arm_caps, sieve_cap


def test_caps_follow_each_arm_and_the_odds_follow_the_controls(monkeypatch):
    inputs = SimpleNamespace(arm_counts=np.array([3500, 490]))
    assert arm_caps(inputs, 1.0) == ([160, 49], 160)
    assert arm_caps(inputs, 0.5) == ([87, 12], 87)
    monkeypatch.setattr(nuisances, "_ODDS_CAP_ARM", "treated")
    assert arm_caps(inputs, 1.0) == ([160, 49], 49)
    monkeypatch.setattr(nuisances, "_ARM_CAPS", False)  # the rule before: the smallest arm
    assert arm_caps(inputs, 1.0) == ([49, 49], 49)


def test_the_research_cap_binds_below_alpha_one_only(monkeypatch):
    inputs = SimpleNamespace(arm_counts=np.array([3500, 490]))
    monkeypatch.setattr(nuisances, "_MAX_ARM_CAP", 40)
    assert arm_caps(inputs, 0.5) == ([40, 12], 40)
    assert arm_caps(inputs, 1.0) == ([160, 49], 160)


def test_sieve_cap_keeps_two_functions_and_the_compute_cap():
    assert sieve_cap(5, 0.5) == 2
    assert sieve_cap(1e6, 1.0) == 160


def _sizes(res: pi.PrivateResults) -> dict[str, int]:
    text = res.summary().as_text()
    return {k: int(v) for k, v in re.findall(r"(Outcome\[\d\]|Odds \(ATT\)):\s+(\d+) fns", text)}


@pytest.mark.parametrize("own_arm", [True, False])
def test_the_large_arm_may_take_a_richer_sieve_than_the_small_arm(monkeypatch, own_arm):
    """About 10% treated (cap 31 functions), 90% controls (cap 160) and a control outcome
    that oscillates: the control fit takes a candidate beyond the treated arm's cap, the
    treated fit never does; with the smallest arm's cap for all (``_ARM_CAPS = False``,
    the rule before) neither can."""
    rng = np.random.default_rng(3)
    n = 3000
    x = rng.uniform(-1, 1, n)
    d = (rng.random(n) < 1 / (1 + np.exp(2.2 - 0.5 * x))).astype(int)
    y = np.sin(8 * x) + d * (1 + 0.5 * np.sin(8 * x)) + 0.3 * rng.normal(size=n)
    mech = pi.AlphaIdentity(1.0, {"x": pi.reference.Uniform(-1, 1)})
    with pytest.warns(pi.exceptions.SeedReleaseWarning):
        rel = mech.privatize(
            pd.DataFrame({"y": y, "d": d, "x": x}), public=["y", "d"], random_state=1
        )
    monkeypatch.setattr(nuisances, "_ARM_CAPS", own_arm)
    model = pi.PrivateATT.from_formula("y ~ d | x", rel, mechanism=mech)
    caps, _ = arm_caps(model.inputs, 1.0)
    assert caps == ([160, 31] if own_arm else [31, 31])
    sizes = _sizes(model.fit(random_state=2))
    assert sizes["Outcome[1]"] <= 31
    if own_arm:
        assert sizes["Outcome[0]"] > 31
    else:
        assert sizes["Outcome[0]"] <= 31
