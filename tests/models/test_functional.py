import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer import exceptions as ex

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from _designs import FORMULAS, mechanism, simulate


def _ate_functional(public, mu):
    return mu[:, 1] - mu[:, 0]


def test_functional_reproduces_ate_and_pom_exactly():
    rng = np.random.default_rng(0)
    mech = mechanism("heterogeneous", 0.7)
    released = mech.privatize(
        simulate("heterogeneous", 4000, rng), public=["y", "d"], random_state=1
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ex.PrivinferWarning)
        ate = pi.PrivateATE.from_formula(FORMULAS["heterogeneous"], released, mechanism=mech).fit(
            random_state=3
        )
        fun = pi.PrivateFunctional.from_formula(
            FORMULAS["heterogeneous"],
            released,
            functional=_ate_functional,
            name="ATE",
            mechanism=mech,
        ).fit(random_state=3)
        pom = pi.PrivatePOM.from_formula(FORMULAS["heterogeneous"], released, mechanism=mech).fit(
            random_state=3
        )
        one = pi.PrivateFunctional.from_formula(
            FORMULAS["heterogeneous"],
            released,
            functional=lambda p, mu: mu[:, 1],
            name="m1",
            mechanism=mech,
        ).fit(random_state=3)
        # the functional's SE is the influence-function one at every alpha; PrivateATE's
        # default may dominate it with the fold-block bootstrap's, so compare like with like
        ate_if = pi.PrivateATE.from_formula(
            FORMULAS["heterogeneous"], released, mechanism=mech, variance="influence"
        ).fit(random_state=3)
    assert fun.params["ATE"] == pytest.approx(ate.params["ATE"], rel=1e-10)
    assert ate_if.params["ATE"] == pytest.approx(ate.params["ATE"], rel=1e-10)
    assert fun.bse["ATE"] == pytest.approx(ate_if.bse["ATE"], rel=1e-10)
    assert one.params["m1"] == pytest.approx(pom.params["E[Y(1)]"], rel=1e-10)


def test_public_policy_value_is_unbiased_small_seeded_monte_carlo():
    rng = np.random.default_rng(11)
    mech = mechanism("heterogeneous", 0.7)

    def policy(public, mu):  # a public 50/50 randomised policy (c_k from public columns)
        treat = (public["d"].to_numpy() >= 0).astype(float) * 0.5
        return treat * mu[:, 1] + (1 - treat) * mu[:, 0]

    big = simulate("heterogeneous", 400_000, np.random.default_rng(5))
    x1, x2 = big["x1"].to_numpy(), big["x2"].to_numpy()
    mu0 = x1 + x2 + x1**2
    target = float(np.mean(0.5 * (mu0 + 1 + x1 + 0.5 * x2**2) + 0.5 * mu0))
    est, se = [], []
    for _ in range(30):
        released = mech.privatize(
            simulate("heterogeneous", 3000, rng), public=["y", "d"], random_state=rng
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ex.PrivinferWarning)
            res = pi.PrivateFunctional.from_formula(
                FORMULAS["heterogeneous"], released, functional=policy, mechanism=mech
            ).fit(random_state=rng)
        est.append(res.params["chi"])
        se.append(res.bse["chi"])
    est, se = np.array(est), np.array(se)
    assert abs(est.mean() - target) < 4 * est.std(ddof=1) / np.sqrt(est.size)
    assert np.mean(np.abs(est - target) <= 1.96 * se) >= 0.8


def test_nonlinear_functional_is_rejected():
    rng = np.random.default_rng(2)
    released = simulate("nonlinear", 500, rng)
    mech = mechanism("nonlinear", 1.0)
    with pytest.raises(ex.NonLinearFunctionalError, match="not affine"):
        pi.PrivateFunctional.from_formula(
            "y ~ d | x1 + x2", released, functional=lambda p, mu: mu[:, 1] ** 2, mechanism=mech
        )
    with pytest.raises(ex.NonLinearFunctionalError, match="finite values"):
        pi.PrivateFunctional.from_formula(
            "y ~ d | x1 + x2", released, functional=lambda p, mu: mu, mechanism=mech
        )
    with pytest.raises(ValueError, match="riesz='auto'"):
        pi.PrivateFunctional.from_formula(
            "y ~ d | x1 + x2",
            released,
            functional=_ate_functional,
            mechanism=mech,
            riesz="propensity",
        )


def test_functional_sees_no_private_column():
    rng = np.random.default_rng(3)
    released = simulate("nonlinear", 500, rng)
    seen = {}

    def spy(public, mu):
        seen["cols"] = list(public.columns)
        return mu[:, 0]

    pi.PrivateFunctional.from_formula(
        "y ~ d | x1 + x2", released, functional=spy, mechanism=mechanism("nonlinear", 1.0)
    )
    assert "x1" not in seen["cols"] and "x2" not in seen["cols"]
    assert isinstance(released, pd.DataFrame)
