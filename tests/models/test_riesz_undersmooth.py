"""The research option that undersmooths the Riesz fits (``_RIESZ_UNDERSMOOTH``)."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
import privinfer.models._nuisances as nuisances


def _facts(res: pi.PrivateResults) -> dict[str, tuple[int, float]]:
    text = res.summary().as_text()
    found = re.findall(r"((?:Outcome|Riesz)\[\d\]):\s+(\d+) fns, ridge ([0-9.e+-]+)", text)
    return {k: (int(size), float(ridge)) for k, size, ridge in found}


def test_undersmoothing_divides_the_riesz_ridges_and_leaves_the_outcome_fits(monkeypatch):
    rng = np.random.default_rng(11)
    n = 1500
    x = np.minimum(np.exp(rng.normal(size=n)), 10.0)
    d = (rng.random(n) < 1 / (1 + np.exp(-(0.8 - 0.5 * x)))).astype(int)
    y = np.sin(1.5 * x) + 0.3 * x + d * (1 + 0.1 * x) + rng.normal(size=n)
    mech = pi.AlphaIdentity(1.0, {"x": pi.reference.Uniform(0, 10)})
    with pytest.warns(pi.exceptions.SeedReleaseWarning):
        rel = mech.privatize(pd.DataFrame({"y": y, "d": d, "x": x}), public=["y", "d"],
                             random_state=1)  # fmt: skip

    def fit() -> pi.PrivateResults:
        model = pi.PrivatePOM.from_formula("y ~ d | x", rel, mechanism=mech)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # only the regularisation facts are read
            return model.fit(random_state=2)

    base = fit()
    monkeypatch.setattr(nuisances, "_RIESZ_UNDERSMOOTH", 10.0)
    under = fit()
    a, b = _facts(base), _facts(under)
    assert set(a) == {"Outcome[0]", "Outcome[1]", "Riesz[0]", "Riesz[1]"} == set(b)
    for k in ("Outcome[0]", "Outcome[1]"):
        assert b[k] == a[k]
    divided = 0
    for k in ("Riesz[0]", "Riesz[1]"):
        assert b[k][0] == a[k][0]  # the CV's sieve choice is kept
        if a[k][1] > 0:
            assert b[k][1] == pytest.approx(a[k][1] / 10.0, rel=0.05)  # 2 digits shown
            divided += 1
    assert divided >= 1  # not vacuous
    assert not np.allclose(under.params, base.params, rtol=0, atol=1e-12)
