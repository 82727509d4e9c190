"""Fuzzing privinfer.pml: eta_tv, pml_epsilon, K*, PMLTest and PrivateMean."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from _fuzz import assert_finite, call, examples
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import stats

from privinfer import pml

REALS = st.floats(0, 20) | st.floats(0, 20) | st.floats(-1, 50) | st.sampled_from(
    [0.0, 1e-300, 1e-3, 1.0, 700.0, 1e300, math.nan, math.inf, -math.inf, True, None, "1", 3])
SMALL = st.floats(0, 1) | st.floats(0, 0.2) | st.sampled_from(
    [0.0, 1e-300, 0.05, 0.5, 1.0, 2.0, -0.1, math.nan])


@examples(150)
@given(eps=REALS, c=SMALL, measure=REALS)
def test_fuzz_eta_tv_family(eps, c, measure):
    for name, fn in [
        ("eta_tv", lambda: pml.eta_tv(eps, c, measure)),
        ("eps_star", lambda: pml.eps_star(c, measure)),
        ("gamma_star", lambda: pml.gamma_star(eps, c, measure)),
        ("pml_to_pure_ldp", lambda: pml.pml_to_pure_ldp(eps, c, measure)),
        ("xi_constants", lambda: pml.xi_constants(eps, c, measure)),
    ]:
        out, _ = call(name, fn)
        if out is not None:
            assert_finite(name, out)
            if name == "eta_tv":
                assert 0.0 <= out <= 1.0


@st.composite
def kernels(draw):
    n, k = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    raw = draw(hnp.arrays(np.float64, (n, k), elements=st.floats(0, 1)))
    rows = raw.sum(axis=1, keepdims=True)
    K = np.where(rows > 0, raw / np.where(rows > 0, rows, 1.0), 1.0 / k)
    if draw(st.integers(0, 4)) == 0:
        K = draw(hnp.arrays(np.float64, hnp.array_shapes(min_dims=0, max_dims=3, max_side=4),
                            elements=st.floats(allow_nan=True, allow_infinity=True)))
    return K


@examples(150)
@given(K=kernels(), c=SMALL)
def test_fuzz_pml_epsilon(K, c):
    for name, fn in [
        ("pml_epsilon", lambda: pml.pml_epsilon(K, c)),
        ("kernel_ldp_epsilon", lambda: pml.kernel_ldp_epsilon(K)),
        ("dobrushin", lambda: pml.dobrushin(K)),
        ("PMLGuarantee.from_kernel", lambda: pml.PMLGuarantee.from_kernel(K, c)),
    ]:
        out, _ = call(name, fn)
        if out is not None and not isinstance(out, pml.PMLGuarantee):
            assert not math.isnan(out)
            assert out >= 0


@examples(150)
@given(eps=REALS, c=SMALL,
       N=st.integers(1, 8) | st.integers(2, 8) | st.sampled_from([0, -1, 2.5, True]),
       A=st.lists(st.booleans(), max_size=8) | st.lists(st.floats(-0.5, 1.5), max_size=8)
       | st.lists(st.integers(-2, 9), max_size=4),
       reduce=st.booleans(), x=st.lists(st.integers(-1, 8), max_size=10),
       seed=st.integers(0, 2**32 - 1))
def test_fuzz_optimal_binary_mechanism(eps, c, N, A, reduce, x, seed):
    if isinstance(N, int) and N >= 1 and isinstance(c, float) and c > 1.0 / N:
        c = c / N  # mostly inside [0, 1/N]
    mech, _ = call("optimal_binary_mechanism",
                   lambda: pml.optimal_binary_mechanism(eps, c, A, N, reduce_eps=reduce))
    if mech is None:
        return
    K, _ = call("BinaryMechanism.kernel", lambda: mech.kernel)
    if K is not None:
        assert_finite("BinaryMechanism.kernel", K)
        assert np.all(K >= -1e-12) and np.allclose(K.sum(axis=1), 1.0)
    bits, _ = call("BinaryMechanism.privatize", lambda: mech.privatize(x, random_state=seed))
    if bits is not None:
        assert set(np.unique(bits)) <= {0, 1}


@st.composite
def pmf_pairs(draw):
    kind = draw(st.sampled_from(["discrete", "discrete", "continuous", "junk"]))
    if kind == "discrete":
        N = draw(st.integers(1, 6))
        p = draw(hnp.arrays(np.float64, (N,), elements=st.floats(0, 1)))
        q = draw(hnp.arrays(np.float64, (N,), elements=st.floats(0, 1)))
        norm = lambda v: v / v.sum() if v.sum() > 0 else v  # noqa: E731
        return norm(p), norm(q), None
    if kind == "continuous":
        a = draw(st.floats(0.5, 3))
        return stats.beta(a, 1.0), stats.beta(1.0, draw(st.floats(0.5, 3))), draw(
            st.none() | st.sampled_from([(0.0, 1.0), (0.2, 0.8), (1.0, 0.0), (0.0, math.inf)]))
    return draw(st.sampled_from([[], [[0.5]], "p", [math.nan, 1.0]])), [0.5, 0.5], None


@examples(60)
@given(pq=pmf_pairs(), eps=REALS, c=SMALL,
       alpha=st.sampled_from([0.05, 0.05, 0.05, 0.2, 0.0, 1.0, 0.5, -1]),
       grid=st.sampled_from([4096, 64, 2, 0]), n=st.integers(0, 30), seed=st.integers(0, 99))
def test_fuzz_pml_test(pq, eps, c, alpha, grid, n, seed):
    p, q, bounds = pq
    if isinstance(c, float) and c > 0.3:
        c = c / 10  # mostly a plausible floor
    t, _ = call("PMLTest", lambda: pml.PMLTest(p, q, eps=eps, c=c, bounds=bounds, alpha=alpha,
                                                grid_size=grid))
    if t is None:
        return
    rng = np.random.default_rng(seed)
    x = (rng.integers(0, len(p), n) if bounds is None and not hasattr(p, "rvs")
         else p.rvs(size=n, random_state=rng))
    bits, _ = call("PMLTest.privatize", lambda: t.privatize(x, random_state=seed))
    if bits is None:
        return
    res, _ = call("PMLTest.test", lambda: t.test(bits))
    if res is not None:
        assert 0.0 <= res.p_value <= 1.0
    ss, _ = call("PMLTest.sample_size", t.sample_size)
    if ss is not None:
        assert not math.isnan(ss)


@examples(100)
@given(lo=st.floats(-10, 10) | st.floats(-10, 10) | st.floats(-1e6, 1e6)
       | st.sampled_from([math.nan, math.inf]),
       width=st.floats(0.1, 10) | st.floats(1e-9, 1e6) | st.sampled_from([0.0, -1.0, 1e308]),
       eps=REALS, c_frac=st.floats(0, 1) | st.floats(0, 1) | st.sampled_from([1.2, math.nan, -0.1]),
       x_u=st.lists(st.floats(0, 1), max_size=30)
       | st.lists(st.floats(-0.2, 1.2) | st.sampled_from([math.nan, math.inf]), max_size=12),
       series=st.booleans(), seed=st.integers(0, 2**32 - 1))
def test_fuzz_private_mean(lo, width, eps, c_frac, x_u, series, seed):
    bounds = (lo, lo + width)
    c = c_frac / width if width > 0 and math.isfinite(width) else c_frac
    pm, _ = call("PrivateMean", lambda: pml.PrivateMean(bounds=bounds, eps=eps, c=c))
    if pm is None:
        return
    x = lo + np.asarray(x_u, dtype=float) * width
    if series:
        x = pd.Series(x, name="v")
    bits, _ = call("PrivateMean.privatize", lambda: pm.privatize(x, random_state=seed))
    if bits is None:
        return
    res, _ = call("PrivateMean.estimate", lambda: pm.estimate(bits))
    if res is not None:
        assert_finite("PrivateMean.estimate", res.params, res.std_errors)
        ci, _ = call("PrivateMeanResult.conf_int", res.conf_int)
        if ci is not None:
            assert_finite("PrivateMeanResult.conf_int", ci.to_numpy())
