"""The covariance of a treatment model as a reduction over partitions (models._reduce).

Oracle: :func:`privinfer.covariance.influence_cov` on the row-level influence values
:math:`\\varphi_i = C'\\omega_i(s_i - \\hat m)`, computed directly.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from privinfer.covariance import influence_cov
from privinfer.models._reduce import LazyInfluence, ScoreMoments, cluster_dims


def _data(n: int = 500, q: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    s = rng.normal(size=(n, q)) + 5.0 * rng.normal(size=q)  # far-from-zero means
    w = rng.uniform(0.2, 3.0, n)
    w = w / w.mean()
    codes = np.column_stack([rng.integers(0, 40, n), rng.integers(0, 7, n)])
    return s, w, codes


def _reduced(s, w, clusters, cuts):
    dims = cluster_dims(clusters)
    sizes = tuple(int(c.max()) + 1 for c in dims)
    bounds = [0, *cuts, s.shape[0]]
    out = None
    for a, b in itertools.pairwise(bounds):
        part = ScoreMoments.of_rows(s[a:b], w[a:b], [c[a:b] for c in dims], sizes)
        out = part if out is None else out.merge(part)
    return out


@pytest.mark.parametrize("clusters", [None, "one", "two"])
@pytest.mark.parametrize("cuts", [[], [1, 250, 250, 499]])  # includes empty partitions
def test_reduced_covariance_equals_influence_cov(clusters, cuts):
    s, w, codes = _data()
    cl = {None: None, "one": codes[:, 0], "two": codes}[clusters]
    mom = _reduced(s, w, cl, cuts)
    m = (w @ s) / s.shape[0]
    np.testing.assert_allclose(mom.mean, m, rtol=1e-13)
    C = np.array([[1.0, 0.0], [-1.0, 0.5], [0.0, 2.0]])
    phi = (w[:, None] * (s - m)) @ C
    np.testing.assert_allclose(mom.covariance(C), influence_cov(phi, cl), rtol=1e-11, atol=0)


@pytest.mark.parametrize("clusters", [None, "one"])
def test_reduced_covariance_survives_one_dominant_weight(clusters):
    """One normalised weight near n, the others near 1e-9 with scores near 1e9 (as after
    a weight of 1e12): merging partitions loses no precision (the variance was negative)."""
    s, w, codes = _data(n=3000, q=2)
    w = np.full(s.shape[0], 3e-9)
    w[3] = s.shape[0]
    s[np.arange(s.shape[0]) != 3] *= 1e9
    cl = None if clusters is None else codes[:, 0]
    mom = _reduced(s, w, cl, [430, 860, 1290, 1720, 2150, 2580])
    m = (w @ s) / s.shape[0]
    phi = (w[:, None] * (s - m)) @ np.eye(2)
    np.testing.assert_allclose(mom.covariance(np.eye(2)), influence_cov(phi, cl), rtol=1e-9)


def test_att_type_contrast_from_the_means():
    """ATT: components (numerator score, treated indicator), contrast (1, -tau) / p1."""
    rng = np.random.default_rng(1)
    n = 400
    d = rng.integers(0, 2, n).astype(float)
    att = d * rng.normal(2.0, 1.0, n) + rng.normal(0, 0.3, n)
    w = np.ones(n)
    mom = _reduced(np.column_stack([att, d]), w, None, [100, 300])
    tau, p1 = mom.mean[0] / mom.mean[1], mom.mean[1]
    phi = (w * (att - d * tau) / p1)[:, None]  # the pandas formula (scores.att_estimate)
    cov = mom.covariance(np.array([[1 / p1], [-tau / p1]]))
    np.testing.assert_allclose(cov, influence_cov(phi), rtol=1e-12)


def test_lazy_influence_selects_and_scales_lazily():
    da = pytest.importorskip("dask.array")
    full = np.arange(12.0).reshape(4, 3)
    calls = []

    def make():
        calls.append(1)
        return da.from_array(full, chunks=(2, 3))

    lazy = LazyInfluence(4, 3, make) * np.array([1.0, 2.0, 3.0])
    sub = lazy[:, [2, 0]]
    assert sub.shape == (4, 2) and not calls  # nothing computed yet
    np.testing.assert_array_equal(np.asarray(sub), full[:, [2, 0]] * np.array([3.0, 1.0]))
    np.testing.assert_array_equal(lazy[1:3], (full * np.array([1.0, 2.0, 3.0]))[1:3])
    np.testing.assert_array_equal(2.0 * sub, 2.0 * np.asarray(sub))  # stays lazy, same values
    np.testing.assert_array_equal(sub - sub, np.zeros((4, 2)))
