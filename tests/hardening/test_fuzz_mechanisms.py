"""Fuzzing AlphaIdentity, its reference distributions, privatize and guarantees."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from _fuzz import assert_finite, call, examples
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

import privinfer as pi
from privinfer.mechanisms import alpha_identity_guarantees
from privinfer.mechanisms.reference import Categorical, Empirical, Uniform

WEIRD_FLOATS = st.sampled_from([0.0, -0.0, 1e-300, 1e300, math.nan, math.inf, -math.inf, -1.0])
ALPHAS = st.one_of(
    st.sampled_from([1e-3, 0.05, 0.5, 1.0, 1, 0, -0.1, 1.0000001, math.nan, math.inf, True,
                     "0.5", None, np.float32(0.3), np.int64(1), [0.5]]),
    st.floats(allow_nan=True, allow_infinity=True),
)


def _values(draw, kind: str, n: int) -> object:
    if kind == "float":
        base = draw(st.lists(st.floats(-5, 5) | WEIRD_FLOATS, min_size=n, max_size=n))
        return np.asarray(base, dtype=float)
    if kind == "int":
        return np.asarray(draw(st.lists(st.integers(-3, 6), min_size=n, max_size=n)), dtype=int)
    if kind == "bool":
        return np.asarray(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool)
    if kind == "str":
        return np.asarray(draw(st.lists(st.sampled_from(["a", "b", "c", "zz"]), min_size=n,
                                        max_size=n)), dtype=object)
    if kind == "cat":
        vals = draw(st.lists(st.sampled_from(["a", "b", "c"]), min_size=n, max_size=n))
        return pd.Categorical(vals, categories=["a", "b", "c", "d"])
    if kind == "none":
        return np.asarray(draw(st.lists(st.sampled_from([None, 1.0, "a"]), min_size=n,
                                        max_size=n)), dtype=object)
    raise AssertionError(kind)


KINDS = st.sampled_from(["float", "int", "bool", "str", "cat", "none"])


@st.composite
def frames(draw, columns=("x", "g", "w")):
    n = draw(st.integers(0, 25))
    cols = list(columns) + draw(st.lists(st.sampled_from(["x", "g", "w", "extra"]), max_size=2))
    data = {}
    arrays = []
    for _ in cols:
        arrays.append(_values(draw, draw(KINDS), n))
    frame = pd.DataFrame(dict(enumerate(arrays)))
    frame.columns = cols  # may hold duplicated names
    del data
    return frame


@st.composite
def components(draw):
    which = draw(st.sampled_from(["uniform", "categorical", "norm", "binom", "empirical",
                                  "bad_uniform", "bad_categorical", "junk", "poisson"]))
    if which == "uniform":
        lo = draw(st.floats(-10, 10))
        return Uniform(lo, lo + draw(st.floats(1e-6, 20)))
    if which == "bad_uniform":
        return (Uniform, draw(WEIRD_FLOATS | st.floats()), draw(WEIRD_FLOATS | st.floats()))
    if which == "categorical":
        levels = draw(st.lists(st.sampled_from(["a", "b", "c", "d", 1, 2.5, True]), min_size=1,
                               max_size=4, unique=True))
        return Categorical(levels)
    if which == "bad_categorical":
        levels = draw(st.lists(st.sampled_from(["a", "b", "a", None]), max_size=4))
        probs = draw(st.none() | st.lists(st.floats(-1, 2) | WEIRD_FLOATS, max_size=4))
        return (Categorical, levels, probs)
    if which == "norm":
        return stats.norm(draw(st.floats(-3, 3)), draw(st.floats(1e-3, 5)))
    if which == "binom":
        return stats.binom(draw(st.integers(1, 6)), draw(st.floats(0.05, 0.95)))
    if which == "poisson":
        return stats.poisson(draw(st.floats(0.1, 5)))
    if which == "empirical":
        n = draw(st.integers(1, 6))
        return Empirical(pd.Series(draw(st.lists(st.floats(-3, 3), min_size=n, max_size=n)),
                                   name="x"))
    return draw(st.sampled_from([None, 3, "uniform", [0, 1], {"a": 1}]))


def _build(comp):
    if isinstance(comp, tuple):
        return comp[0](*comp[1:])
    return comp


@examples(60)
@given(alpha=ALPHAS, comp=components(), comp2=components(), data=frames(),
       seed=st.integers(0, 2**32 - 1))
def test_fuzz_alpha_identity_privatize(alpha, comp, comp2, data, seed):
    def construct():
        return pi.AlphaIdentity(alpha, {"x": _build(comp), "g": _build(comp2)})

    mech, _ = call("AlphaIdentity()", construct)
    if mech is None:
        return
    out, _ = call("AlphaIdentity.privatize", lambda: mech.privatize(data, publish_undeclared=True,
                                                                  random_state=seed))
    if out is not None:
        assert out.shape == data.shape
        assert list(out.columns) == list(data.columns)
        # released private values stay in the support
        mech.reference.check_values(out, "fuzz")
        back = pi.AlphaIdentity.from_dict(out.attrs["privinfer_mechanism"])
        assert back == mech
    g, _ = call("AlphaIdentity.guarantees", mech.guarantees)
    if g is not None:
        assert_finite("AlphaIdentity.guarantees", g.tv, g.ldp_delta)
        assert not math.isnan(g.ldp_eps)
        assert g.tv == mech.alpha


@examples(60)
@given(alpha=ALPHAS, n_levels=st.integers(1, 6), c=st.floats(-1, 2) | WEIRD_FLOATS | st.none(),
       probs=st.none() | st.lists(st.floats(0, 1), min_size=1, max_size=6))
def test_fuzz_guarantees_discrete(alpha, n_levels, c, probs):
    levels = [f"l{i}" for i in range(n_levels)]

    def construct():
        if probs is not None and len(probs) == n_levels and sum(probs) > 0:
            p = np.asarray(probs) / np.sum(probs)
            return pi.AlphaIdentity(alpha, {"g": Categorical(levels, p)})
        return pi.AlphaIdentity(alpha, {"g": Categorical(levels)})

    mech, _ = call("AlphaIdentity()", construct)
    if mech is None:
        return
    g, _ = call("AlphaIdentity.guarantees", lambda: mech.guarantees(c))
    if g is not None:
        assert_finite("AlphaIdentity.guarantees", g.tv, g.ldp_delta)
        assert not math.isnan(g.ldp_eps) and not math.isnan(g.pml_eps)
        assert g.pml_eps <= g.ldp_eps + 1e-9
    q = call("alpha_identity_guarantees",
             lambda: alpha_identity_guarantees(alpha, probs and np.asarray(probs), c))[0]
    if q is not None and q.pml_eps is not None:
        assert not math.isnan(q.ldp_eps) and not math.isnan(q.pml_eps)


@examples(40)
@given(n=st.integers(-2, 40) | st.sampled_from([1.5, True, None, "3"]), comp=components(),
       seed=st.integers(0, 2**32 - 1))
def test_fuzz_reference_sample(n, comp, seed):
    def construct():
        return pi.AlphaIdentity(0.5, {"x": _build(comp)}).reference

    ref, _ = call("ProductReference()", construct)
    if ref is None:
        return
    frame, _ = call("ProductReference.sample", lambda: ref.sample(n, random_state=seed))
    if frame is not None:
        assert len(frame) == n
    draw, _ = call("ProductReference.draw_for_moments",
                   lambda: ref.draw_for_moments(64, random_state=seed))
    if draw is not None:
        assert np.isclose(draw.weights.sum(), 1.0)
