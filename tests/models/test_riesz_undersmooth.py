"""The undersmoothed Riesz fits at alpha = 1 (``_RIESZ_UNDERSMOOTH``, ``_RIESZ_ENERGY_BUDGET``)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
import privinfer.models._nuisances as nuisances

FACT = re.compile(
    r"((?:Outcome|Riesz)\[\d\]):\s+(\d+) fns, ridge ([0-9.e+-]+)(?: \(CV/([0-9.]+)\))?"
)


def _facts(res: pi.PrivateResults) -> dict[str, tuple[int, float, float | None]]:
    """Sieve size, relative ridge and (where undersmoothed) the factor below the CV's."""
    found = FACT.findall(res.summary().as_text())
    return {k: (int(size), float(r), float(f) if f else None) for k, size, r, f in found}


def _release(alpha: float) -> tuple[pd.DataFrame, pi.AlphaIdentity]:
    """A top-coded lognormal confounder with few treated at large x (``lognormal_clip``)."""
    rng = np.random.default_rng(11)
    n = 1500
    x = np.minimum(np.exp(rng.normal(size=n)), 10.0)
    d = (rng.random(n) < 1 / (1 + np.exp(-(0.8 - 0.5 * x)))).astype(int)
    y = np.sin(1.5 * x) + 0.3 * x + d * (1 + 0.1 * x) + rng.normal(size=n)
    mech = pi.AlphaIdentity(alpha, {"x": pi.reference.Uniform(0, 10)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pi.exceptions.SeedReleaseWarning)
        rel = mech.privatize(pd.DataFrame({"y": y, "d": d, "x": x}), public=["y", "d"],
                             random_state=1)  # fmt: skip
    return rel, mech


def _fit(rel: pd.DataFrame, mech: pi.AlphaIdentity) -> pi.PrivateResults:
    model = pi.PrivatePOM.from_formula("y ~ d | x", rel, mechanism=mech)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # only the regularisation facts and estimates are read
        return model.fit(random_state=2)


def test_riesz_fits_are_undersmoothed_within_the_budget_at_alpha_one(monkeypatch):
    rel, mech = _release(1.0)
    default = _fit(rel, mech)
    monkeypatch.setattr(nuisances, "_RIESZ_UNDERSMOOTH", 1.0)
    off = _fit(rel, mech)
    monkeypatch.setattr(nuisances, "_RIESZ_UNDERSMOOTH", 10.0)
    monkeypatch.setattr(nuisances, "_RIESZ_ENERGY_BUDGET", None)
    whole = _fit(rel, mech)
    a, b, c = _facts(off), _facts(default), _facts(whole)
    assert set(a) == {"Outcome[0]", "Outcome[1]", "Riesz[0]", "Riesz[1]"} == set(b) == set(c)
    for k in ("Outcome[0]", "Outcome[1]"):
        assert a[k] == b[k] == c[k]  # the outcome fits are untouched
        assert a[k][2] is None
    divided = 0
    for k in ("Riesz[0]", "Riesz[1]"):
        size, cv_ridge, none = a[k]
        assert none is None
        assert b[k][0] == c[k][0] == size  # the CV's sieve choice is kept
        if cv_ridge > 0:
            # the whole factor divides the CV's ridge by 10 and says so
            assert c[k][1] == pytest.approx(cv_ridge / 10.0, rel=0.05)  # 2 digits shown
            assert c[k][2] == pytest.approx(10.0)
            # the budget stops at one of the steps 1, sqrt(10), 10, and says which
            ratio = cv_ridge / b[k][1]
            assert min(abs(ratio - s) / s for s in (1.0, 10**0.5, 10.0)) < 0.1
            assert (b[k][2] is None) == (ratio < 1.5)
            if b[k][2] is not None:
                assert b[k][2] == pytest.approx(ratio, rel=0.1)
            divided += ratio > 1.5
    assert divided >= 1  # the budget undersmoothed at least one arm here: not vacuous
    assert not np.allclose(default.params, off.params, rtol=0, atol=1e-12)


def test_below_alpha_one_the_riesz_fits_keep_the_cv_ridge(monkeypatch):
    rel, mech = _release(0.8)
    default = _fit(rel, mech)
    monkeypatch.setattr(nuisances, "_RIESZ_UNDERSMOOTH", 1.0)
    off = _fit(rel, mech)
    np.testing.assert_array_equal(default.params, off.params)
    np.testing.assert_array_equal(default.bse, off.bse)
    assert all(f[2] is None for f in _facts(default).values())


def test_the_kernel_outcome_route_keeps_the_cv_ridge_at_alpha_one(monkeypatch):
    """The rule is measured with the series outcome fits only: with the kernel route it
    moved ``sieve_drift``'s ATE at alpha = 1, n = 1000 by -0.87 SE (validation page), so
    the kernel route's Riesz fits keep their CV ridge and the summary shows no factor."""
    rel, mech = _release(1.0)

    def kernel() -> pi.PrivateResults:
        model = pi.PrivatePOM.from_formula("y ~ d | x", rel, mechanism=mech,
                                           outcome_model="kernel")  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return model.fit(random_state=2)

    default = kernel()
    monkeypatch.setattr(nuisances, "_RIESZ_UNDERSMOOTH", 1.0)
    off = kernel()
    np.testing.assert_array_equal(default.params, off.params)
    np.testing.assert_array_equal(default.bse, off.bse)
    facts = _facts(default)
    assert {"Riesz[0]", "Riesz[1]"} <= set(facts)
    assert all(f[2] is None for f in facts.values())
    # ... while the series fit of the same release divides at least one Riesz ridge
    monkeypatch.setattr(nuisances, "_RIESZ_UNDERSMOOTH", 10.0)
    assert any(f[2] is not None for f in _facts(_fit(rel, mech)).values())
