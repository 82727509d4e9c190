"""Fuzzing the public helpers of privinfer.inversion."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from _fuzz import assert_finite, call, examples
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import privinfer as pi
from privinfer.inversion import (
    ReferenceMoments,
    index_expectation,
    invert,
    private_cross_moment,
    private_expectation,
    private_gram,
    private_mean,
    qbar_linear,
    qbar_quadratic,
)

ALPHAS = st.sampled_from([1e-3, 0.05, 0.5, 1.0, 0.0, -1.0, math.nan, True, None, "a", 2])
ELEMENTS = st.floats(-1e3, 1e3) | st.sampled_from([math.nan, math.inf, 0.0, 1e-300])


def arrays(max_dims=2, max_side=6):
    return hnp.arrays(
        np.float64, hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=0, max_side=max_side),
        elements=ELEMENTS,
    )


FINITE = st.floats(-1e3, 1e3) | st.sampled_from([0.0, 1e-300, 1e-3])


@st.composite
def moment_inputs(draw):
    """Mostly consistent shapes and finite values; sometimes one part is corrupted."""
    n, J, M = draw(st.integers(0, 8)), draw(st.integers(1, 4)), draw(st.integers(1, 8))
    P = draw(hnp.arrays(np.float64, (n, J), elements=FINITE))
    feats = draw(hnp.arrays(np.float64, (M, J), elements=FINITE))
    w = draw(hnp.arrays(np.float64, (M,), elements=st.floats(0, 1)))
    w = w / w.sum() if w.sum() > 0 else np.full(M, 1.0 / M)
    A = draw(st.none() | hnp.arrays(np.float64, (n, J), elements=FINITE))
    weights = draw(st.none() | hnp.arrays(np.float64, (n,), elements=FINITE))
    y = draw(hnp.arrays(np.float64, (n,), elements=FINITE))
    parts = {"P": P, "feats": feats, "w": w, "A": A, "weights": weights, "y": y}
    corrupt = draw(st.sampled_from([None, None, None, *parts]))
    if corrupt is not None:
        parts[corrupt] = draw(arrays())
    return parts


@examples(80)
@given(inp=moment_inputs(), alpha=ALPHAS, repl=st.booleans())
def test_fuzz_moment_helpers(inp, alpha, repl):
    P, feats, w, A, weights, y = (inp[k] for k in ("P", "feats", "w", "A", "weights", "y"))

    def make_ref():
        replicate = np.arange(len(w)) % 2 if repl and np.ndim(w) == 1 and len(w) > 1 else None
        return ReferenceMoments.from_features(feats, w, replicate)

    ref, _ = call("ReferenceMoments.from_features", make_ref)
    if ref is None:  # a well-formed reference, to reach the helpers
        J = P.shape[1] if P.ndim == 2 else 1
        ref = ReferenceMoments.from_features(np.ones((2, J)), np.array([0.5, 0.5]))
    for name, fn in [
        ("private_mean", lambda: private_mean(P, ref, alpha, A=A, weights=weights)),
        ("private_gram", lambda: private_gram(P, ref, alpha, A=A, weights=weights)),
        ("private_cross_moment",
         lambda: private_cross_moment(P, y, ref, alpha, A=A, weights=weights)),
    ]:
        out, _ = call(name, fn)
        if out is not None:
            assert_finite(name, out)
    out, _ = call("invert", lambda: invert(P, 0.0, alpha))
    if out is not None and np.all(np.isfinite(P)):
        assert_finite("invert", out)


@examples(60)
@given(inp=moment_inputs())
def test_fuzz_qbar(inp):
    coef = inp["feats"][0] if inp["feats"].ndim == 2 and len(inp["feats"]) else inp["w"]
    mean = inp["P"][0] if inp["P"].ndim == 2 and len(inp["P"]) else coef
    outer = np.outer(mean, mean) if np.ndim(mean) == 1 else mean
    A = inp["A"]
    out, _ = call("qbar_linear", lambda: qbar_linear(coef, mean, A))
    if out is not None:
        assert_finite("qbar_linear", out)
    out, _ = call("qbar_quadratic", lambda: qbar_quadratic(coef, mean, outer, A))
    if out is not None:
        assert_finite("qbar_quadratic", out)


@examples(40)
@given(t=hnp.arrays(np.float64, st.integers(0, 200), elements=FINITE) | arrays(1, 40),
       inp=moment_inputs(), grid=st.sampled_from([4, 9, 129, 2, 0]))
def test_fuzz_index_expectation(t, inp, grid):
    feats, w = inp["feats"], inp["w"]
    eta = feats[:, 0] if feats.ndim == 2 and feats.shape[1] else feats

    def link(x):
        return 1.0 / (1.0 + np.exp(-np.clip(x, -500, 500)))

    out, _ = call("index_expectation",
                  lambda: index_expectation(t, eta, feats, w, link, grid_size=grid))
    if out is not None:
        assert_finite("index_expectation", out[0], out[1])


@examples(40)
@given(alpha=st.sampled_from([1e-3, 0.05, 0.5, 1.0]),
       x=st.lists(st.floats(0, 1), max_size=20)
       | st.lists(st.floats(0, 1) | st.sampled_from([math.nan, 2.0, -1.0]), max_size=20),
       m=st.sampled_from([2, 16, 64, 1, 0, 2.5]),
       func_kind=st.sampled_from(["ok", "ok", "ok", "short", "nan"]))
def test_fuzz_private_expectation(alpha, x, m, func_kind):
    mech = pi.AlphaIdentity(alpha, {"x": pi.reference.Uniform(0, 1)})
    data = pd.DataFrame({"x": np.asarray(x, dtype=float)})

    def func(f):
        v = f["x"].to_numpy(dtype=float)
        return {"ok": v, "short": v[:1], "nan": v * np.nan}[func_kind]

    out, _ = call("private_expectation",
                  lambda: private_expectation(func, data, mech, m=m, random_state=0))
    if out is not None:
        assert_finite("private_expectation", *out)
