"""PrivateGMM and the treatment models check inputs and describe mechanisms the same way."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer.exceptions import DataMismatchError, MechanismMismatchError, UnsupportedInputError


def _empirical_release(n: int = 300) -> tuple[pd.DataFrame, pi.AlphaIdentity]:
    rng = np.random.default_rng(0)
    support = np.round(rng.uniform(0, 1, 40), 3)
    x = rng.choice(support, n)
    d = (rng.random(n) < 0.3 + 0.4 * x).astype(int)
    raw = pd.DataFrame({"x": x, "d": d, "w": rng.normal(size=n)})
    raw["y"] = 1 + raw["x"] + raw["d"] + raw["w"] + rng.normal(size=n)
    mech = pi.AlphaIdentity(0.8, {"x": pi.reference.Empirical(pd.Series(support, name="x"))})
    return mech.privatize(raw, public=["d", "w", "y"], random_state=1), mech


def test_gmm_results_leave_out_an_empirical_reference_like_the_ate():
    released, mech = _empirical_release()
    gmm = pi.PrivateGMM.ols("y ~ w + x", released, mechanism=mech).fit(random_state=0)
    ate = pi.PrivateATE.from_formula("y ~ d | x", released, mechanism=mech).fit(random_state=0)
    # the reference sample is not copied into results; only the mechanism and alpha are
    assert gmm.mechanism == {"mechanism": "alpha-identity", "alpha": 0.8}
    assert gmm.mechanism == ate.mechanism
    assert "components" in mech.to_dict()
    assert gmm.guarantees.tv == pytest.approx(0.8) == ate.guarantees.tv


@pytest.mark.parametrize(
    ("build", "owner"),
    [
        (lambda df, m: pi.PrivateGMM.ols("y ~ w", df, mechanism=m), "PrivateGMM.ols"),
        (lambda df, m: pi.PrivateGMM.logit("d ~ w", df, mechanism=m), "PrivateGMM.logit"),
        (
            lambda df, m: pi.PrivateGMM(lambda b, f: f[["y"]].to_numpy() - b, df, m, 1),
            "PrivateGMM",
        ),
    ],
)
def test_gmm_input_checks_match_the_treatment_models(build, owner):
    released, _ = _empirical_release(50)
    with pytest.raises(MechanismMismatchError, match=rf"{owner}: mechanism must be an "
                       r"AlphaIdentity; got str"):
        build(released, "alpha-identity")
    with pytest.raises(UnsupportedInputError, match=rf"{owner} expects a DataFrame .*dict"):
        build(released.to_dict(), None)
    with pytest.raises(DataMismatchError, match=rf"{owner}: the data frame is empty"):
        build(released.iloc[:0], None)
    with pytest.raises(MechanismMismatchError, match="AlphaIdentity; got str"):
        pi.PrivateATE.from_formula("y ~ d | x", released, mechanism="alpha-identity")


def test_linear_design_passes_cover_every_row_across_chunks():
    # more rows than one chunk holds (2**19 cells / 4 columns = 131072 rows)
    n = 140_000
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x": rng.uniform(0, 1, n), "w": rng.normal(size=n)})
    df["y"] = df["x"] - df["w"] + rng.normal(size=n)
    mech = pi.AlphaIdentity(1.0, {"x": pi.reference.Uniform(0, 1)})
    design = pi.PrivateGMM.ols("y ~ w + x", df, mechanism=mech)._engine.design
    assert len(design.chunks()) == 2
    raw, pub_mean = design.raw_moments()
    C = np.column_stack([df["y"], np.ones(n), df["w"], df["x"]])
    np.testing.assert_allclose(raw, C.T @ C / n, rtol=1e-12)
    np.testing.assert_allclose(pub_mean, C[:, :3].mean(axis=0), rtol=1e-12)
