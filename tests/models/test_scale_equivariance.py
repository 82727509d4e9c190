"""Units do not matter: rescaling a private covariate (with its reference) and the outcome.

The fifteenth round's ``dollar_scale`` design (income up to 250,000 next to a share in
[0, 1], an outcome in dollars) asked whether the sieve's scaling, the noise guards and
the CV's tolerances hold in raw units. An estimator whose nuisance stage depends on the
units would give other estimates in thousands of dollars; these tests refit the same
release in both units, below ``alpha = 1`` (bootstrap, bias bound, noise guard) and at
``alpha = 1``.
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import privinfer as pi


def _release(alpha: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    n = 1500
    income = np.minimum(np.exp(rng.normal(np.log(40_000.0), 0.7, n)), 250_000.0)
    saving = rng.beta(2.0, 8.0, n)
    owner = (rng.random(n) < 0.6).astype(float)
    p = 1 / (1 + np.exp(-(-0.5 + 0.9 * np.log(income / 40_000) + 4 * (saving - 0.2))))
    d = (rng.random(n) < p).astype(int)
    y = (20_000 * np.log(income / 40_000) + 150_000 * saving * income / 100_000
         + 15_000 * owner + d * (5_000 + 0.05 * income) + 8_000 * rng.normal(size=n))  # fmt: skip
    raw = pd.DataFrame({"y": y, "d": d, "income": income, "saving": saving, "owner": owner})
    mech = pi.AlphaIdentity(alpha, {"income": pi.reference.Uniform(0, 250_000),
                                    "saving": pi.reference.Uniform(0, 1)})  # fmt: skip
    return mech.privatize(raw, public=["y", "d", "owner"], random_state=rng)


@pytest.mark.parametrize("model", [pi.PrivateATE, pi.PrivateATT])
@pytest.mark.parametrize("alpha", [1.0, 0.7])
def test_estimates_and_errors_scale_with_the_units(model, alpha):
    rel = _release(alpha, 3)
    fits = []
    for unit in (1.0, 1000.0):
        data = rel.copy()
        data.attrs.clear()  # a new release in other units: the stamp names the old mechanism
        data["income"] = data["income"] / unit
        data["y"] = data["y"] / unit
        mech = pi.AlphaIdentity(alpha, {"income": pi.reference.Uniform(0, 250_000 / unit),
                                        "saving": pi.reference.Uniform(0, 1)})  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = model.from_formula("y ~ d | income + saving + owner", data,
                                     mechanism=mech).fit(random_state=4)  # fmt: skip
        ci = res.conf_int()
        fits.append((float(res.params.iloc[0]) * unit, float(res.bse.iloc[0]) * unit,
                     float(ci.iloc[0, 0]) * unit, float(ci.iloc[0, 1]) * unit))  # fmt: skip
    (e1, s1, l1, u1), (e2, s2, l2, u2) = fits
    assert s1 > 0
    # the same fit in other units, up to round-off relative to the standard error
    assert abs(e1 - e2) < 1e-6 * s1, (e1, e2)
    assert s2 == pytest.approx(s1, rel=1e-6)
    assert (l2, u2) == pytest.approx((l1, u1), abs=1e-6 * s1)


@pytest.mark.parametrize("alpha", [1.0, 0.7])
def test_a_two_valued_covariate_fits_alike_in_any_coding(alpha):
    # a public dummy coded 0/2, 1/2 or -1/1 is the same covariate as its 0/1 coding: it
    # got powers and bumps of its own, 14 more functions and another estimate
    rel = _release(alpha, 5)
    fits = []
    for recode in (lambda o: o, lambda o: 2 * o, lambda o: o + 1, lambda o: 2 * o - 1):
        data = rel.assign(owner=recode(rel["owner"]))
        data.attrs = rel.attrs
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = pi.PrivateATE.from_formula("y ~ d | income + saving + owner", data,
                                               variance="influence")
            fits.append(model.fit(random_state=2))
    for res in fits[1:]:
        assert res.params.iloc[0] == pytest.approx(fits[0].params.iloc[0], rel=1e-9)
        assert res.bse.iloc[0] == pytest.approx(fits[0].bse.iloc[0], rel=1e-9)


@pytest.mark.parametrize("alpha", [1.0, 0.7])
def test_single_index_atoms_are_unit_free(monkeypatch, alpha):
    # the index fits' eigenvalue floor was relative to an unscaled moment matrix: with
    # income in dollars, the ATE moved by 3% at alpha = 1 (INDEX_ATOMS, a research switch)
    import privinfer.nuisance.sieve as sieve

    monkeypatch.setattr(sieve, "INDEX_ATOMS", True)
    test_estimates_and_errors_scale_with_the_units(pi.PrivateATE, alpha)
