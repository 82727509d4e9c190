"""The adaptive sieve: nested candidates, knots at deconvolved quantiles, public factors."""

import itertools

import numpy as np
import pytest

from privinfer.exceptions import DataMismatchError
from privinfer.nuisance.sieve import SieveBasis, deconvolved_moments, deconvolved_quantiles


def _basis(alpha=1.0, public=None, groups=((0, 1), ()), names=("x1", "x2"), **kw):
    rng = np.random.default_rng(0)
    ref = rng.uniform(-1, 1, (2048, 2))
    released = rng.uniform(-1, 1, (500, 2))
    public = np.zeros((500, 0)) if public is None else public
    return SieveBasis.build(ref, np.full(2048, 1 / 2048), released, public, alpha,
                            groups[0], groups[1], names, **kw)  # fmt: skip


def test_candidates_are_nested_and_grow():
    b = _basis()
    cands = b.candidates()
    sizes = [idx.size for _, idx in cands]
    assert sizes == sorted(sizes) and sizes[0] == 3  # 1, x1, x2
    additive = [idx for name, idx in cands if "interactions" not in name]
    for small, big in itertools.pairwise(additive):
        assert set(small.tolist()) < set(big.tolist())
    assert all(0 in idx for _, idx in cands)  # the constant is in every candidate


def test_candidates_respect_size_limit_and_restrict_keeps_it():
    b = _basis()
    cands = b.candidates(max_size=8)
    assert max(idx.size for _, idx in cands) <= 8
    keep = np.unique(np.concatenate([idx for _, idx in cands]))
    r = b.restrict(keep, 8)
    assert r.n_basis == keep.size
    assert max(idx.size for _, idx in r.candidates()) <= 8


def test_split_matches_direct_evaluation_with_public_column():
    rng = np.random.default_rng(1)
    ref = rng.uniform(-1, 1, (1024, 1))
    released = rng.uniform(-1, 1, (300, 1))
    pub = rng.normal(size=(300, 1))
    b = SieveBasis.build(ref, np.full(1024, 1 / 1024), released, pub, 1.0, (0,), (1,),
                         ("x", "w"), max_level=3)  # fmt: skip
    A, P = b.split(released, pub)
    assert A is not None and b.has_public
    Phi = A * P
    vx = np.interp(released[:, 0], *b.maps[0])
    vw = np.interp(pub[:, 0], *b.maps[1])
    assert np.all(np.abs(vx) <= 1) and np.all(np.abs(vw) <= 1)
    np.testing.assert_allclose(Phi[:, b.names.index("x*w")], 3 * vx * vw)
    np.testing.assert_allclose(
        Phi[:, b.names.index("P3(w)")], np.sqrt(7) * (2.5 * vw**3 - 1.5 * vw)
    )
    # private factors alone at reference points
    np.testing.assert_allclose(
        b.private_only(ref)[:, b.names.index("P2(x)")],
        np.sqrt(5) * (1.5 * np.interp(ref[:, 0], *b.maps[0]) ** 2 - 0.5),
    )
    # the map is the (deconvolved) CDF: about uniform on [-1, 1] over the data
    assert np.quantile(vw, 0.5) == pytest.approx(0.0, abs=0.05)


def test_basis_is_bounded_for_a_reference_much_wider_than_the_data():
    rng = np.random.default_rng(7)
    x = rng.lognormal(0, 0.5, 4000)
    z = np.where(rng.random(4000) < 0.5, x, rng.uniform(0, 100, 4000))
    ref = np.linspace(0, 100, 4001)[:, None]
    b = SieveBasis.build(ref, np.full(4001, 1 / 4001), z[:, None], np.zeros((4000, 0)), 0.5,
                         (0,), (), ("x",))  # fmt: skip
    assert np.abs(b.private_only(ref)).max() <= 6.0


def test_binary_and_categorical_columns_enter_linearly():
    rng = np.random.default_rng(2)
    ref = np.column_stack([rng.uniform(-1, 1, 512), rng.integers(0, 2, 512)]).astype(float)
    rel = np.column_stack([rng.uniform(-1, 1, 200), rng.integers(0, 2, 200)]).astype(float)
    b = SieveBasis.build(ref, np.full(512, 1 / 512), rel, np.zeros((200, 0)), 1.0, (0, 1), (),
                         ("x", "g"))  # fmt: skip
    assert "P2(g)" not in b.names and "P2(x)" in b.names and "x*g" in b.names


def test_deconvolved_quantiles_follow_the_data_not_the_reference():
    rng = np.random.default_rng(3)
    n, alpha = 40_000, 0.5
    x = rng.lognormal(0.0, 0.6, n).clip(max=10)
    z = np.where(rng.random(n) < alpha, x, rng.uniform(0, 10, n))
    ref = np.linspace(0, 10, 2001)
    q = deconvolved_quantiles(z, ref, np.full(ref.size, 1 / ref.size), alpha,
                              np.array([0.25, 0.5, 0.75]))  # fmt: skip
    np.testing.assert_allclose(q, np.quantile(x, [0.25, 0.5, 0.75]), rtol=0.08)
    m, s = deconvolved_moments(z, ref, np.full(ref.size, 1 / ref.size), alpha)
    assert m == pytest.approx(x.mean(), rel=0.05) and s == pytest.approx(x.std(), rel=0.1)


def test_basis_is_about_orthonormal_over_uniform_data():
    """On the CDF scale the data are uniform: the additive ladder is nearly orthonormal."""
    rng = np.random.default_rng(8)
    x = rng.exponential(size=(20000, 1))
    b = SieveBasis.build(x[:512], np.full(512, 1 / 512), x, np.zeros((20000, 0)), 1.0, (0,),
                         (), ("x",), max_level=5)  # fmt: skip
    P = b.private_only(x)
    G = P.T @ P / x.shape[0]
    np.testing.assert_allclose(np.diag(G), 1.0, atol=0.15)
    assert np.linalg.cond(G) < 1000  # truncated powers: > 1e5


def test_build_rejects_mismatched_columns():
    with pytest.raises(DataMismatchError, match="column counts"):
        SieveBasis.build(np.zeros((4, 2)), np.full(4, 0.25), np.zeros((3, 1)), np.zeros((3, 0)),
                         1.0, (0, 1), (), ("a", "b"))  # fmt: skip
