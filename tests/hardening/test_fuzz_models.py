"""Fuzzing PrivateGMM.ols/iv/logit and PrivateATE/PrivateATT (black box)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from _fuzz import assert_finite, call, examples
from hypothesis import given
from hypothesis import strategies as st

import privinfer as pi

ALPHA = st.sampled_from([1e-3, 0.05, 0.3, 0.8, 1.0])


@st.composite
def released_frames(draw, n_min=0, n_max=120):
    """A released frame with private x (Uniform(-1, 1)), g (Categorical) and public y, d, w, z."""
    n = draw(st.sampled_from([n_min, 1, 3]) | st.integers(max(n_min, 30), n_max)
             | st.integers(max(n_min, 30), n_max) | st.integers(max(n_min, 30), n_max))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    alpha = draw(ALPHA)
    x = rng.uniform(-1, 1, n)
    g = rng.choice(["a", "b", "c"], n)
    w = rng.normal(size=n)
    z = x + rng.normal(size=n)
    d = (rng.random(n) < 1 / (1 + np.exp(-x))).astype(int)
    y = 1 + d + 2 * x + w + rng.normal(size=n)
    raw = pd.DataFrame({"y": y, "d": d, "x": x, "g": g, "w": w, "z": z})
    mech = pi.AlphaIdentity(alpha, {"x": pi.reference.Uniform(-1, 1),
                                    "g": pi.reference.Categorical(["a", "b", "c"])})
    rel = mech.privatize(raw, public=["y", "d", "w", "z"], random_state=rng)
    how = draw(st.sampled_from(["none"] * 6 + ["nan_y", "inf_w", "const_w", "const_d",
                                               "bool_d", "bool_w", "dup", "str_y", "int_y",
                                               "d_two", "all_treated"]))
    if n and how == "nan_y":
        rel.loc[rel.index[0], "y"] = math.nan
    elif n and how == "inf_w":
        rel.loc[rel.index[0], "w"] = math.inf
    elif how == "const_w":
        rel["w"] = 1.0
    elif how == "const_d":
        rel["d"] = 0
    elif how == "bool_d":
        rel["d"] = rel["d"].astype(bool)
    elif how == "bool_w":
        rel["w"] = rel["w"] > 0
    elif how == "dup":
        attrs = rel.attrs
        rel = pd.concat([rel, rel[["w"]]], axis=1)
        rel.attrs = attrs
    elif how == "str_y":
        rel["y"] = rel["y"].astype(str)
    elif how == "int_y":
        rel["y"] = rel["y"].round().astype(int)
    elif how == "d_two":
        rel["d"] = rel["d"] * 2
    elif how == "all_treated":
        rel["d"] = 1
    return rel, mech


GMM_FORMULAS = {
    "ols": ["y ~ x + w", "y ~ x + C(g) + w", "y ~ x", "y ~ w", "y ~ x + x", "y ~ nope",
            "y ~ x + w + z + I(w * 2)", "", "y ~ x + w - 1"],
    "iv": ["y ~ w + [x ~ z]", "y ~ 1 + [x ~ z + w]", "y ~ [w ~ x]", "y ~ w + [x ~ z", "y ~ x"],
    "logit": ["d ~ x + w", "d ~ x", "d ~ w + C(g)", "y ~ x", "d ~ nope"],
}


@examples(25)
@given(fr=released_frames(), kind=st.sampled_from(["ols", "iv", "logit"]), data=st.data(),
       weighting=st.sampled_from(["two-step", "one-step", "iterated", "two-step", "bad"]),
       ref_size=st.sampled_from([64, 256, 64, 256, 1, True]))
def test_fuzz_gmm(fr, kind, data, weighting, ref_size):
    rel, mech = fr
    formula = data.draw(st.sampled_from(GMM_FORMULAS[kind]))
    ctor = getattr(pi.PrivateGMM, kind)
    entry = f"PrivateGMM.{kind}"
    model, _ = call(entry, lambda: ctor(formula, rel, mechanism=mech, reference_size=ref_size))
    if model is None:
        return
    res, _ = call(f"{entry}.fit", lambda: model.fit(weighting=weighting, random_state=0))
    if res is not None:
        assert_finite(f"{entry}.fit", res.params.to_numpy())
        assert_finite(f"{entry}.fit (bse)", res.bse.to_numpy())


ATE_FORMULAS = ["y ~ d | x + w", "y ~ d | x + C(g)", "y ~ d | x", "y ~ d | w", "d ~ y | x",
                "y ~ d", "y ~ d | nope", "y ~ d | x + x"]


@examples(12)
@given(fr=released_frames(n_min=0, n_max=600), data=st.data(),
       cls=st.sampled_from([pi.PrivateATE, pi.PrivateATT]),
       n_folds=st.sampled_from([2, 3, 2, 3, 1]), degree=st.sampled_from([None, 1, 2, None, 0]))
def test_fuzz_treatment(fr, data, cls, n_folds, degree):
    rel, mech = fr
    formula = data.draw(st.sampled_from(ATE_FORMULAS))
    entry = f"{cls.__name__}.from_formula"
    model, _ = call(entry, lambda: cls.from_formula(formula, rel, mechanism=mech,
                                                    n_folds=n_folds, degree=degree,
                                                    reference_size=256))
    if model is None:
        return
    res, _ = call(f"{cls.__name__}.fit", lambda: model.fit(random_state=0))
    if res is not None:
        assert_finite(f"{cls.__name__}.fit", res.params.to_numpy(), res.bse.to_numpy())
