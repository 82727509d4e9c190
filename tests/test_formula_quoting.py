"""Quoted formula terms keep their meaning: ``{x**2}`` and backtick names.

Formulaic prints a Python term ``{x**2}`` as ``x ** 2`` and a backtick name without its
backticks; text rebuilt from those prints re-parses as something else (``x ** 2`` is the
term power of ``x``, i.e. ``x``). The models must fit what the user wrote.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer.exceptions import DataMismatchError


@pytest.fixture(scope="module")
def released() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 1500
    x = rng.uniform(0, 1, n)
    d = rng.integers(0, 2, n)
    raw = pd.DataFrame({"y": d + 3 * x**2 + rng.normal(size=n), "d": d, "x": x})
    raw["my x"] = raw["x"]
    mech = pi.AlphaIdentity(1.0, {"x": pi.reference.Uniform(0, 1),
                                  "my x": pi.reference.Uniform(0, 1)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mech.privatize(raw, public=["y", "d"], random_state=1)


def _ate(formula: str, data: pd.DataFrame) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = pi.PrivateATE.from_formula(formula, data, degree=1, variance="influence")
        return float(model.fit(random_state=2).params.iloc[0])


def test_a_python_term_in_braces_is_the_square_not_the_column(released):
    linear = _ate("y ~ d | x", released)
    braces = _ate("y ~ d | {x**2}", released)
    call = _ate("y ~ d | I(x**2)", released)
    assert braces == pytest.approx(call, abs=1e-12)
    assert abs(braces - linear) > 1e-4
    assert _ate("y ~ d | x + {x**2}", released) == pytest.approx(
        _ate("y ~ d | x + I(x**2)", released), abs=1e-12)


def test_a_backtick_name_fits_like_its_q_quoted_form(released):
    assert _ate("y ~ d | `my x`", released) == pytest.approx(
        _ate('y ~ d | Q("my x")', released), abs=1e-12)


def test_gmm_keeps_a_python_term(released):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = pi.PrivateGMM.ols("y ~ x + {x**2}", released).fit(random_state=0)
        ref = pi.PrivateGMM.ols("y ~ x + I(x**2)", released).fit(random_state=0)
    assert len(res.params) == 3
    np.testing.assert_allclose(res.params.to_numpy(), ref.params.to_numpy(), atol=1e-10)


def _continuous_release() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    n = 1500
    x = rng.uniform(0, 1, n)
    d = (rng.random(n) < x).astype(int)
    raw = pd.DataFrame({"y": d + 3 * x + rng.normal(size=n), "d": d, "x": x})
    mech = pi.AlphaIdentity(0.7, {"x": pi.reference.Uniform(0, 1)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mech.privatize(raw, public=["y", "d"], random_state=1)


def test_a_factor_of_a_continuous_private_column_is_refused():
    # the reference's draws are levels the release never showed: formulaic codes them as
    # rows of zeros, which removed the adjustment for x (ATE 1.99 against a truth of 1)
    rel = _continuous_release()
    with pytest.raises(DataMismatchError, match=r"C\(x\).*Categorical reference"):
        pi.PrivateATE.from_formula("y ~ d | C(x)", rel).fit(random_state=2)


def test_a_stateful_transform_of_a_private_column_is_refused_in_our_words():
    rel = _continuous_release()
    with pytest.raises(DataMismatchError, match=r"bs\(x, df=4\).*reference"):
        pi.PrivateATE.from_formula("y ~ d | bs(x, df=4)", rel).fit(random_state=2)


def test_a_factor_with_a_categorical_reference_still_fits():
    rng = np.random.default_rng(3)
    n = 800
    raw = pd.DataFrame({"y": rng.normal(size=n), "d": rng.integers(0, 2, n),
                        "g": rng.choice(["a", "b", "c"], n), "x": rng.uniform(size=n)})
    mech = pi.AlphaIdentity(0.7, {"g": pi.reference.Categorical(["a", "b", "c", "e"]),
                                  "x": pi.reference.Uniform(0, 1)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = mech.privatize(raw, public=["y", "d"], random_state=1)
        res = pi.PrivateATE.from_formula("y ~ d | C(g) + x", rel).fit(random_state=0)
    assert np.isfinite(res.params.iloc[0]) and res.bse.iloc[0] > 0
