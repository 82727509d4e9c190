"""Fuzzing privinfer.transport: DPOTSource/DPOT, DPDASource/DPDA, PrivTreeSynthesizer."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from _fuzz import assert_finite, call, examples
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

pytest.importorskip("ot")
from privinfer.transport import (
    DPDA,
    DPOT,
    DPDASource,
    DPOTSource,
    PrivTreeSynthesizer,
)

EPS = st.one_of(*[st.floats(0.1, 10)] * 5, st.sampled_from(
    [1e-3, 1e3, 0.0, -1.0, math.nan, math.inf, True, None, "1"]))
DELTA = st.sampled_from([1e-5, 1e-3, 0.1, 1e-5, 1e-3, 0.1, 0.0, 1.0, -0.1, math.nan])
ELL = st.integers(1, 12) | st.integers(1, 12) | st.sampled_from([0, -1, 2.5, True])
CELL = st.floats(-5, 5) | st.sampled_from([0.0, 1e-300, 1e6])
BAD = st.sampled_from([math.nan, math.inf, -math.inf])


@st.composite
def matrices(draw, max_rows=12, max_cols=4, cols=None):
    n = draw(st.integers(1, max_rows))
    k = cols if cols is not None else draw(st.integers(1, max_cols))
    X = draw(hnp.arrays(np.float64, (n, k), elements=CELL))
    how = draw(st.integers(0, 19))
    if how == 0:
        X[0, 0] = draw(BAD)
    elif how == 1:
        X = X[:0]
    elif how == 2:
        X = X.ravel()
    elif how == 3:
        X = np.full_like(X, 1.0)  # constant columns
    elif how == 4:
        X = X.astype(object)
        X[0, 0] = "a"
    elif how == 5:
        X = X > 0  # bools as numbers
    return X


@examples(40)
@given(eps=EPS, delta=DELTA, ell=ELL,
       rel=st.sampled_from(["entry", "record", "entry", "record", "other"]),
       clip=st.floats(0.1, 10) | st.floats(0.1, 10) | st.sampled_from([None, 0.0, -1.0, math.inf]),
       data=st.data(), method=st.sampled_from(["emd", "emd", "sinkhorn", "x"]),
       reg=st.none() | st.sampled_from([0.05, 1.0, 0.0, -1.0]), seed=st.integers(0, 2**32 - 1))
def test_fuzz_dpot(eps, delta, ell, rel, clip, data, method, reg, seed):
    k = data.draw(st.integers(1, 4))
    Xs = data.draw(matrices(cols=k))
    Xt = data.draw(matrices(cols=k if data.draw(st.integers(0, 9)) else k + 1))
    src = DPOTSource(eps, delta, ell, neighbour=rel, clip_norm=clip, random_state=seed)
    pub, _ = call("DPOTSource.publish", lambda: src.publish(Xs))
    if pub is None:
        return
    assert_finite("DPOTSource.publish", pub.rows, pub.sigma)
    est, _ = call("DPOT.fit", lambda: DPOT(method=method, reg=reg).fit(pub, Xt))
    if est is not None:
        assert_finite("DPOT.fit", est.plan_, est.w_tilde_)
        assert np.all(est.plan_ >= -1e-12)


@examples(25)
@given(eps=EPS, eps_l=EPS, ell=ELL, Xs=matrices(cols=3), Xt=matrices(cols=3),
       classes=st.sampled_from([[0, 1], [0, 1, 2], ["a", "b"], [0, 1], [0, 1, 2], ["a", "b"],
                                [], [0, 0], [[0, 1]]]),
       ylab=st.lists(st.integers(0, 3), min_size=0, max_size=12),
       reg_e=st.sampled_from([0.1, 1.0, 0.1, 1.0, 0.0, -1.0, math.nan]),
       seed=st.integers(0, 2**32 - 1))
def test_fuzz_dpda(eps, eps_l, ell, Xs, Xt, classes, ylab, reg_e, seed):
    n = len(Xs) if np.ndim(Xs) == 2 else len(ylab)
    base = np.asarray(classes, dtype=object).ravel() if len(classes) else np.array([0])
    ys = [base[i % len(base)] for i in ylab[:n]] + [base[0]] * max(0, n - len(ylab))
    if ys and ylab and ylab[0] == 3:
        ys[0] = "unknown"  # a label outside the public classes
    src = DPDASource(eps, 1e-3, ell, eps_l, classes=classes, random_state=seed)
    pub, _ = call("DPDASource.publish", lambda: src.publish(Xs, ys))
    if pub is None:
        return
    assert pub.noisy_counts.dtype.kind == "i"
    est, _ = call("DPDA.fit", lambda: DPDA(reg_e=reg_e, max_iter=3).fit(pub, Xt))
    if est is not None:
        Zs, _ = call("DPDA.transform", est.transform)
        if Zs is not None:
            assert_finite("DPDA.transform", Zs)


@examples(60)
@given(eps=EPS, d=st.integers(1, 3), X=st.data(), shift=st.booleans(),
       proj=st.sampled_from(["tree", "tree", "lp", "x"]), clip=st.booleans(),
       depth=st.none() | st.sampled_from([0, 3, 200, -1]),
       bounds_kind=st.sampled_from(["ok", "ok", "ok", "reversed", "nan", "shape"]),
       frame=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_fuzz_privtree(eps, d, X, shift, proj, clip, depth, bounds_kind, frame, seed):
    data = X.draw(matrices(max_rows=60, cols=d))
    bounds = {"ok": [(-5, 5)] * d, "reversed": [(5, -5)] * d, "nan": [(0, math.nan)] * d,
              "shape": [(0, 1, 2)] * d}[bounds_kind]
    if frame and np.ndim(data) == 2:
        data = pd.DataFrame(data, columns=[f"c{j}" for j in range(d)])
    synth = PrivTreeSynthesizer(eps, bounds, random_shift=shift, projection=proj, clip=clip,
                                max_depth=depth, random_state=seed)
    fitted, _ = call("PrivTreeSynthesizer.fit", lambda: synth.fit(data))
    if fitted is None:
        return
    nu = fitted.measure_
    assert_finite("PrivTreeSynthesizer.fit", nu.weights, nu.points)
    assert np.isclose(nu.weights.sum(), 1.0) and np.all(nu.weights >= 0)
    assert nu.noisy_counts.dtype.kind == "i"
    draws, _ = call("PrivTreeSynthesizer.sample", lambda: fitted.sample(5, random_state=seed))
    if draws is not None:
        assert_finite("PrivTreeSynthesizer.sample", draws)
