"""The adaptive sieve: nested candidates, knots at deconvolved quantiles, public factors."""

import itertools

import numpy as np
import pytest

from privinfer.exceptions import DataMismatchError
from privinfer.nuisance.sieve import (
    _B2,
    MAX_LEVEL,
    SieveBasis,
    deconvolved_moments,
    deconvolved_quantiles,
)


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
    assert cands[0][1].size == 3  # 1, x1, x2
    additive = [idx for name, idx in cands if "interactions" not in name]
    inter = [idx for name, idx in cands if "interactions" in name]
    for family in (additive, inter):
        for small, big in itertools.pairwise(family):
            assert set(small.tolist()) < set(big.tolist())
    for plain, more in zip(additive, inter, strict=False):  # level a + interactions > level a
        assert set(plain.tolist()) < set(more.tolist())
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
    # the finest bumps peak highest: (2/3) / sqrt(width * B2 / 2), width 2^-(level - 3)
    width = 2.0 ** -(MAX_LEVEL - 3)
    bound = (2 / 3) / np.sqrt(width * _B2 / 2)
    assert 5.0 < bound < 8.0
    assert np.abs(b.private_only(ref)).max() <= bound * (1 + 1e-12)


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


# -- categorical covariates: tail indicators ---------------------------------------------
def _factor_rows(rng, n, probs):
    """Dummy columns of a factor (first level the base) and its level codes."""
    g = rng.choice(len(probs), n, p=probs)
    return (g[:, None] == np.arange(1, len(probs))[None, :]).astype(float), g


def _factor_basis(alpha=1.0, probs=(0.1, 0.6, 0.05, 0.25), public=False, **kw):
    rng = np.random.default_rng(3)
    D, g = _factor_rows(rng, 4000, probs)
    x = rng.uniform(-1, 1, (4000, 1))
    k = len(probs) - 1
    ref_g = np.repeat(np.arange(len(probs)), 64)
    ref = np.column_stack([
        np.tile(np.linspace(-1, 1, 64), len(probs)),
        (ref_g[:, None] == np.arange(1, len(probs))[None, :]).astype(float),
    ])  # fmt: skip
    names = ("x", *(f"C(g)[T.{j}]" for j in range(1, k + 1)))
    w = np.full(ref.shape[0], 1 / ref.shape[0])
    if public:
        b = SieveBasis.build(ref[:, :1], w, x, D, alpha, (0,), (1,) * k, names, **kw)
    else:
        b = SieveBasis.build(ref, w, np.column_stack([x, D]), np.zeros((4000, 0)), alpha,
                             (0, *((1,) * k)), (), names, **kw)  # fmt: skip
    return b, x, D, g


@pytest.mark.parametrize("public", [False, True])
def test_tail_contrasts_of_a_factor_pool_its_rarest_levels(public):
    # levels 0 (base) .. 3 with frequencies 0.1, 0.6, 0.05, 0.25: sorted 1, 3, 0, 2
    b, x, D, g = _factor_basis(public=public)
    tails = [i for i, nm in enumerate(b.names) if nm.startswith("C(g)[")]
    assert [b.names[i] for i in tails] == ["C(g)[3 rarest]", "C(g)[2 rarest]",
                                           "C(g)[1 rarest]"]  # fmt: skip
    assert [b.level[i] for i in tails] == [1, 1, 1]  # resolved levels: like dummies
    A, P = b.split(np.column_stack([x, D]) if not public else x, D if public else None)
    H = (P if A is None else A * P)[:, tails]
    # each contrast: one level against the pooled rarer ones, zero on the more frequent
    for col, (level, rarer, frequent) in enumerate([(1, [3, 0, 2], []), (3, [0, 2], [1]),
                                                    (0, [2], [1, 3])]):  # fmt: skip
        vals = {v: np.unique(H[g == v, col]) for v in range(4)}
        assert all(vals[v].size == 1 for v in range(4))
        assert len({float(vals[v][0]) for v in rarer}) == 1  # pooled
        assert vals[level][0] != vals[rarer[0]][0]
        assert all(vals[v][0] == 0.0 for v in frequent)
    # centred and orthogonal under the (alpha = 1) level frequencies
    np.testing.assert_allclose(H.mean(axis=0), 0.0, atol=1e-12)
    gram = H.T @ H / len(g)
    np.testing.assert_allclose(gram - np.diag(np.diag(gram)), 0.0, atol=1e-12)
    # the full basis spans what the dummies span
    dummies = np.column_stack([np.ones(len(g)), D])
    both = np.column_stack([np.ones(len(g)), H, dummies])
    assert np.linalg.matrix_rank(both) == np.linalg.matrix_rank(dummies) == 4


def test_contrasts_of_swamped_levels_climb_the_ladder():
    # alpha = 0.5, uniform reference over 4 levels, n = 4000: the 3% level is within two
    # standard errors of zero, so its contrast with the 2% level climbs; small candidates
    # pool the two rarest levels, and a product with x climbs with the contrast
    rng = np.random.default_rng(11)
    probs = np.array([0.55, 0.4, 0.03, 0.02])
    _, g = _factor_rows(rng, 4000, probs)
    g_rel = np.where(rng.random(4000) < 0.5, g, rng.integers(0, 4, 4000))
    D_rel = (g_rel[:, None] == np.arange(1, 4)[None, :]).astype(float)
    x = rng.uniform(-1, 1, (4000, 1))
    ref_g = np.repeat(np.arange(4), 64)
    ref = np.column_stack([np.tile(np.linspace(-1, 1, 64), 4),
                           (ref_g[:, None] == np.arange(1, 4)[None, :]).astype(float)])  # fmt: skip
    b = SieveBasis.build(ref, np.full(256, 1 / 256), np.column_stack([x, D_rel]),
                         np.zeros((4000, 0)), 0.5, (0, 1, 1, 1), (),
                         ("x", "C(g)[T.1]", "C(g)[T.2]", "C(g)[T.3]"))  # fmt: skip
    tails = [i for i, nm in enumerate(b.names) if nm.startswith("C(g)[")]
    assert [b.level[i] for i in tails] == [1, 1, 2]
    assert b.level[b.names.index("x*C(g)[1 rarest]")] == -2
    first = b.candidates()[0][1]
    assert [b.names[i] for i in first if b.names[i].startswith("C(g)[")] == [
        "C(g)[3 rarest]", "C(g)[2 rarest]"]  # fmt: skip


def test_interaction_candidates_span_a_curve_per_factor_level():
    # "level 3 + interactions" holds every product of a tail contrast with P_1, P_2 and P_3
    # of a continuous column, so an outcome that follows a different cubic in v on every
    # level of a factor is fitted exactly; with the contrasts' linear products alone it
    # is not (a sector-specific curve: the tenth round of held-out designs)
    b, x, D, g = _factor_basis()
    flat, *_ = _factor_basis(tail_tensor=False)
    v = np.interp(x[:, 0], *b.maps[0])
    shapes = np.array([[0.0, 1.0, 0.0, 2.0], [1.0, -1.0, 3.0, 0.0],
                       [0.5, 0.0, -2.0, -1.0], [-1.0, 2.0, 1.0, 1.5]])  # fmt: skip
    target = np.polynomial.polynomial.polyval(v, shapes[g].T, tensor=False)
    U = np.column_stack([x, D])

    def residual(basis):
        idx = dict(basis.candidates())["level 3 + interactions"]
        P = basis.private_only(U)[:, idx]
        coef, *_ = np.linalg.lstsq(P, target, rcond=None)
        return float(np.std(target - P @ coef) / np.std(target))

    assert residual(b) < 1e-10
    assert residual(flat) > 0.2  # the products the test guards
    assert "P3(x)*C(g)[1 rarest]" in b.names and "P3(x)*C(g)[1 rarest]" not in flat.names


def test_tail_order_comes_from_deconvolved_frequencies():
    # a reference with 70% on level 0 makes level 0 the most frequent released level,
    # while it is the rarest true one (2%): the order must come from the deconvolved
    # frequencies, so the finest contrast is level 0 against level 3 (the next rarest)
    rng = np.random.default_rng(5)
    probs, ref_probs = np.array([0.02, 0.5, 0.3, 0.18]), np.array([0.7, 0.1, 0.1, 0.1])
    D, g = _factor_rows(rng, 40000, probs)
    keep = rng.random(40000) < 0.5
    g_rel = np.where(keep, g, rng.choice(4, 40000, p=ref_probs))
    D_rel = (g_rel[:, None] == np.arange(1, 4)[None, :]).astype(float)
    ref = (np.arange(4)[:, None] == np.arange(1, 4)[None, :]).astype(float)
    b = SieveBasis.build(ref, ref_probs, D_rel, np.zeros((40000, 0)), 0.5, (0, 0, 0), (),
                         ("C(g)[T.1]", "C(g)[T.2]", "C(g)[T.3]"))  # fmt: skip
    finest = b.private_only(D)[:, b.names.index("C(g)[1 rarest]")]
    assert np.all(finest[np.isin(g, [1, 2])] == 0.0)
    assert np.all(finest[g == 0] > 0) and np.all(finest[g == 3] < 0)


def test_a_ridge_shrinks_a_rare_level_toward_the_rare_levels():
    # 12 levels, 80% of the rows on two; level effects: the frequent ones high, the rare
    # ones low. A heavy ridge on the tail indicators pulls the rarest level toward the
    # other rare levels' mean (about -1), not toward the row-weighted mean (about 0.6).
    probs = np.r_[0.45, 0.35, 0.2 * 0.7 ** np.arange(10) / np.sum(0.7 ** np.arange(10))]
    effect = np.r_[1.0, 1.0, -np.ones(10)]
    rng = np.random.default_rng(7)
    g = rng.choice(12, 20000, p=probs)
    D = (g[:, None] == np.arange(1, 12)[None, :]).astype(float)
    y = effect[g] + rng.normal(size=20000)
    ref = (np.repeat(np.arange(12), 8)[:, None] == np.arange(1, 12)[None, :]).astype(float)
    names = tuple(f"C(g)[T.{j}]" for j in range(1, 12))
    b = SieveBasis.build(ref, np.full(96, 1 / 96), D, np.zeros((20000, 0)), 1.0,
                         (0,) * 11, (), names)  # fmt: skip
    Phi = b.private_only(D)
    G, c = Phi.T @ Phi / len(y), Phi.T @ y / len(y)
    pen = np.eye(b.n_basis) * 0.05
    pen[0, 0] = 0.0  # the constant is not penalised
    fit = Phi @ np.linalg.solve(G + pen, c)
    rarest = fit[g == 11].mean()
    assert rarest < -0.5
    # the dummies' coding with the same ridge: pulled toward the frequent levels
    Phi_d = np.column_stack([np.ones(len(y)), D])
    Gd, cd = Phi_d.T @ Phi_d / len(y), Phi_d.T @ y / len(y)
    pen_d = np.eye(12) * 0.05
    pen_d[0, 0] = 0.0
    fit_d = Phi_d @ np.linalg.solve(Gd + pen_d, cd)
    assert fit_d[g == 11].mean() > 0.3


def test_interaction_candidates_span_the_tensor_polynomials():
    # "level 3 + interactions" spans every product P_i(v1) P_j(v2), i, j <= 3 (a bivariate
    # cubic in each coordinate), so a function of the thin direction v1 - v2 up to its
    # cube is fitted exactly; the additive ladder with linear products alone cannot
    rng = np.random.default_rng(3)
    u = rng.uniform(-1, 1, (4000, 2))
    basis = SieveBasis.build(u, np.full(4000, 1 / 4000), u, np.zeros((4000, 0)), 1.0, (0, 1), (),
                             ("x1", "x2"), max_level=4)
    flat = SieveBasis.build(u, np.full(4000, 1 / 4000), u, np.zeros((4000, 0)), 1.0, (0, 1), (),
                            ("x1", "x2"), max_level=4, tensor=False)
    v = np.column_stack([np.interp(u[:, j], *basis.maps[j]) for j in range(2)])
    target = (v[:, 0] - v[:, 1]) ** 3 + v[:, 0] ** 2 * v[:, 1] ** 2

    def residual(b, name):
        idx = dict(b.candidates())[name]
        P = b.private_only(u)[:, idx]
        coef, *_ = np.linalg.lstsq(P, target, rcond=None)
        return float(np.std(target - P @ coef) / np.std(target))

    assert residual(basis, "level 3 + interactions") < 1e-10
    assert residual(flat, "level 3 + interactions") > 0.3  # the block the test guards
    assert dict(basis.candidates())["level 1 + interactions"].size == 4  # x1 * x2 only


def test_bump_by_linear_interactions_span_a_curve_times_a_line(monkeypatch):
    # BUMP_BY_LINEAR (the default): "level 5 + interactions" holds every product of x1's
    # level-4/5 bumps with x2's linear term, so g(v1) * v2 with g in the span of x1's
    # level-5 functions is fitted exactly; the tensor block alone (products of cubics)
    # cannot, and the option adds no function below level 4
    import privinfer.nuisance.sieve as sieve

    rng = np.random.default_rng(4)
    u = rng.uniform(-1, 1, (4000, 2))

    def build():
        return SieveBasis.build(u, np.full(4000, 1 / 4000), u, np.zeros((4000, 0)), 1.0,
                                (0, 1), (), ("x1", "x2"), max_level=5)  # fmt: skip

    default = build()
    monkeypatch.setattr(sieve, "BUMP_BY_LINEAR", False)
    plain = build()
    monkeypatch.setattr(sieve, "BUMP_BY_LINEAR", True)
    rich = build()
    assert default.functions == rich.functions != plain.functions
    v = np.column_stack([np.interp(u[:, j], *rich.maps[j]) for j in range(2)])
    cands, plain_cands = dict(rich.candidates()), dict(plain.candidates())
    # a curve in x1 alone: a random combination of its functions up to level 5
    x1_only = [i for i, f in enumerate(rich.functions) if f and all(
        rich.atoms[a][0] == 0 for a in f)]  # fmt: skip
    g = rich.private_only(u)[:, x1_only] @ np.random.default_rng(5).normal(size=len(x1_only))
    target = g * v[:, 1]

    def residual(b, idx):
        P = b.private_only(u)[:, idx]
        coef, *_ = np.linalg.lstsq(P, target, rcond=None)
        return float(np.std(target - P @ coef) / np.std(target))

    assert residual(rich, cands["level 5 + interactions"]) < 1e-10
    assert residual(plain, plain_cands["level 5 + interactions"]) > 0.1  # 0.23 measured
    for name in ("level 3 + interactions", "level 3"):
        assert cands[name].size == plain_cands[name].size


def _residual(basis, name, private, public, target):
    """Relative residual of the least-squares fit of ``target`` on a candidate's functions."""
    A, P = basis.split(private, public)
    X = (P if A is None else A * P)[:, dict(basis.candidates())[name]]
    coef, *_ = np.linalg.lstsq(X, target, rcond=None)
    return float(np.std(target - X @ coef) / np.std(target))


def test_triples_span_a_public_group_times_two_private_curves(monkeypatch):
    # TRIPLES (a research switch, off by default): "bump" adds every bump of one private
    # column times the linear terms of another private column and a public one, so
    # w * g(v1) * v2 (g: x1's line and bumps) is fitted exactly at level 5 + interactions,
    # while the pairwise block cannot; each product splits into one public and one
    # private factor (the separable form the inversion needs), and the default basis is
    # unchanged
    import privinfer.nuisance.sieve as sieve

    rng = np.random.default_rng(6)
    n = 4000
    u = rng.uniform(-1, 1, (n, 2))
    w = (rng.random((n, 1)) < 0.4).astype(float)

    def build():
        return SieveBasis.build(u, np.full(n, 1 / n), u, w, 1.0, (0, 1), (2,),
                                ("x1", "x2", "w"), max_level=5)  # fmt: skip

    default = build()
    monkeypatch.setattr(sieve, "TRIPLES", "bump")
    rich = build()
    assert rich.functions[: default.n_basis] == default.functions
    triples = [i for i, f in enumerate(rich.functions) if len(f) == 3]
    assert triples and all(rich.level[i] <= -2 for i in triples)
    A, P = rich.split(u, w)
    v = np.column_stack([np.interp(u[:, j], *rich.maps[j]) for j in range(2)])
    # a curve in x1: a random combination of its line and its bumps up to level 5
    x1_only = [i for i, f in enumerate(rich.functions) if len(f) == 1
               and rich.atoms[f[0]][0] == 0 and rich.atoms[f[0]][1] in ("lin", "bump")]
    g = P[:, x1_only] @ np.random.default_rng(7).normal(size=len(x1_only))
    target = w[:, 0] * g * v[:, 1]

    assert _residual(rich, "level 5 + interactions", u, w, target) < 1e-10
    assert _residual(default, "level 5 + interactions", u, w, target) > 0.1
    # a triple's public factor is w (times ones), its private factor the two curves
    i = next(i for i in triples if any(rich.atoms[a][0] == 2 for a in rich.functions[i]))
    priv = [a for a in rich.functions[i] if rich.atoms[a][0] < 2]
    assert np.allclose(A[:, i], w[:, 0])  # a 0/1 column enters as it is
    solo = {f[0]: j for j, f in enumerate(rich.functions) if len(f) == 1}
    assert np.allclose(P[:, i], P[:, solo[priv[0]]] * P[:, solo[priv[1]]])


def test_public_lead_adds_candidates_richer_in_the_public_column():
    rng = np.random.default_rng(1)
    w = rng.normal(size=(500, 1))
    names = ("x1", "x2", "w")
    plain = _basis(0.5, public=w, groups=((0, 1), (2,)), names=names, max_level=5)
    led = _basis(0.5, public=w, groups=((0, 1), (2,)), names=names, max_level=5,
                 public_head_start=2)  # fmt: skip
    assert plain.public_head == 0 and led.public_head == 2
    assert plain.names == led.names and plain.level == led.level  # same functions
    base = {tuple(idx.tolist()) for _, idx in plain.candidates()}
    cands = led.candidates()
    assert base <= {tuple(idx.tolist()) for _, idx in cands}  # the plain ladder stays
    by_name = dict(cands)
    level1 = {led.names[i] for i in by_name["level 1, public +2"]}
    # the public column gets its cubic at level 1, the private ones stay linear
    assert level1 == {"1", "x1", "x2", "w", "P2(w)", "P3(w)"}
    # with one knot more (level 4 -> 2) for the public column at level 2
    level2 = {led.names[i] for i in by_name["level 2, public +2"]}
    assert "P2(x1)" in level2 and "P3(x1)" not in level2
    assert sum(nm.startswith("B(w;") for nm in level2) == 1
    # the interaction candidates still end with "interactions" (the models read that)
    assert all(
        ("interactions" in nm) == nm.endswith("interactions") for nm, _ in led.candidates()
    )
    # the variant survives restrict, and a basis without continuous public columns has none
    assert led.restrict(np.arange(led.n_basis)).public_head == 2
    binary = (rng.random((500, 1)) < 0.5).astype(float)
    no_cont = _basis(0.5, public=binary, groups=((0, 1), (2,)), names=names,
                     public_head_start=2)  # fmt: skip
    assert not any("public" in nm for nm, _ in no_cont.candidates())


def test_public_lead_is_zero_at_alpha_one():
    from privinfer.models._nuisances import public_head_start

    assert public_head_start(1.0) == 0
    assert public_head_start(0.7) == 1 and public_head_start(0.5) == 2
    assert public_head_start(0.1) == 3


def test_public_only_functions_are_spared_by_the_guard_below_alpha_one():
    from privinfer.models._nuisances import noiseless_functions

    rng = np.random.default_rng(2)
    w = rng.normal(size=(500, 1))
    names = ("x1", "x2", "w")
    b = _basis(0.5, public=w, groups=((0, 1), (2,)), names=names, max_level=4)
    public = {nm for nm, p in zip(b.names, b.public_only, strict=True) if p}
    assert public == {"1", "w", "P2(w)", "P3(w)", "B(w; +0)"}
    assert noiseless_functions(b, 1.0) is None  # alpha = 1: one guard for all
    assert np.array_equal(noiseless_functions(b, 0.5), b.public_only)
    assert noiseless_functions(_basis(0.5), 0.5) is None  # no public function


def test_index_atoms_span_a_step_in_a_sum_of_binary_items(monkeypatch):
    # INDEX_ATOMS (a research switch, off by default): the P2, P3 and bumps of a linear
    # index of the private columns span any function of a score of six binary items,
    # which the additive terms and pairwise products cannot draw (the held-out
    # item_index design); index atoms are private factors (no public part), take no
    # part in the interaction block, and a basis without indices is unchanged
    import types

    import privinfer.nuisance.sieve as sieve
    from privinfer.models._nuisances import index_coefficients

    rng = np.random.default_rng(11)
    n = 4000
    latent = rng.normal(size=n)
    items = (0.6 * latent[:, None] + rng.normal(size=(n, 6)) > 0.3).astype(float)
    w = rng.normal(size=(n, 1))
    ref = rng.integers(0, 2, (512, 6)).astype(float)
    names = (*(f"i{j}" for j in range(6)), "w")

    def build(coefs=()):
        return SieveBasis.build(ref, np.full(512, 1 / 512), items, w, 1.0, tuple(range(6)),
                                (6,), names, max_level=6, index_coefs=coefs)  # fmt: skip

    default, rich = build(), build([np.ones(6)])
    assert default.indices == () and all(a[0] >= 0 for a in default.atoms)
    on_index = [i for i, f in enumerate(rich.functions) if any(rich.atoms[a][0] < 0 for a in f)]
    assert len(on_index) == 2 + 1 + 2 + 4  # P2, P3 and the bumps of levels 4-6
    assert all(len(rich.functions[i]) == 1 and rich.level[i] > 0 for i in on_index)
    target = (items.sum(axis=1) >= 4).astype(float)

    assert _residual(rich, "level 6", items, w, target) < 1e-8
    assert _residual(default, "level 6 + interactions", items, w, target) > 0.05
    A, P = rich.split(items, w)
    assert np.allclose(A[:, on_index], 1.0)  # purely private functions
    # the index's private factor at the reference points is the same function there
    P_ref = rich.private_only(ref)
    same = np.flatnonzero((ref.sum(axis=1)[:, None] == items.sum(axis=1)[None, :100]).any(1))
    j = on_index[2]
    by_score = {s: P[items.sum(axis=1) == s, j][0] for s in np.unique(items.sum(axis=1))}
    assert np.allclose(P_ref[same, j], [by_score[s] for s in ref.sum(axis=1)[same]])

    # index_coefficients: deconvolved least squares on a release at alpha = 0.5 recovers
    # the direction of the outcome's index (cosine on the standardised scale); the
    # released rows' own least squares, which mix correlated kept rows with independent
    # reference draws, turn it
    monkeypatch.setattr(sieve, "INDEX_ATOMS", True)
    m = 40000
    beta = np.array([1.0, -2.0, 0.5, 0.0, 1.5, 1.0])
    x = rng.normal(size=(m, 1)) + 0.7 * rng.normal(size=(m, 6))  # a common factor
    y = x @ beta + rng.normal(size=m)
    ref_x = rng.normal(size=(4096, 6)) * 1.2
    keep = rng.random(m) < 0.5
    released = np.where(keep[:, None], x, ref_x[rng.integers(0, 4096, m)])
    inputs = types.SimpleNamespace(
        spec=types.SimpleNamespace(private_groups=tuple(range(6))),
        U_priv=released, U_pub=np.zeros((m, 0)), d=np.zeros(m, dtype=int), y=y,
    )
    reference = types.SimpleNamespace(U=ref_x, weights=np.full(4096, 1 / 4096))
    (b,) = index_coefficients(inputs, reference, 0.5)
    naive = np.linalg.lstsq(np.column_stack([np.ones(m), released]), y, rcond=None)[0][1:]

    def cosine(a):
        return float(a @ beta / np.linalg.norm(a) / np.linalg.norm(beta))

    assert cosine(b) > 0.99  # 0.998 on this seed
    assert cosine(naive) < 0.95  # 0.90



@pytest.mark.parametrize("alpha, expected", [(1.0, True), (0.7, False)])
def test_index_atoms_alpha1_fits_them_at_alpha_one_only(monkeypatch, alpha, expected):
    # INDEX_ATOMS = "alpha1": the indices are fitted where nothing is replaced; below
    # alpha = 1 (indices on deconvolved moments) they cost cells
    import warnings

    import pandas as pd

    import privinfer as pi
    import privinfer.models._nuisances as nuisances
    import privinfer.nuisance.sieve as sieve
    from privinfer.models._nuisances import index_atoms_on

    calls = []
    original = nuisances.index_coefficients

    def spy(*args, **kwargs):
        out = original(*args, **kwargs)
        calls.append(len(out))
        return out

    monkeypatch.setattr(nuisances, "index_coefficients", spy)
    monkeypatch.setattr(sieve, "INDEX_ATOMS", "alpha1")
    rng = np.random.default_rng(5)
    n = 1500
    X = rng.uniform(-1, 1, (n, 3))
    d = (rng.random(n) < 1 / (1 + np.exp(-X.sum(axis=1)))).astype(int)
    y = np.tanh(2 * X.sum(axis=1)) + d + rng.normal(size=n)
    raw = pd.DataFrame(X, columns=["x1", "x2", "x3"]).assign(y=y, d=d)
    mech = pi.AlphaIdentity(alpha, {c: pi.reference.Uniform(-1, 1) for c in ("x1", "x2", "x3")})
    released = mech.privatize(raw, public=["y", "d"], random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pi.PrivateATE.from_formula("y ~ d | x1 + x2 + x3", released).fit(random_state=0)
    assert index_atoms_on(alpha) is expected
    assert bool(calls) is expected and (not calls or calls[0] >= 1)
    monkeypatch.setattr(sieve, "INDEX_ATOMS", True)  # the research setting: every alpha
    assert index_atoms_on(0.7) and index_atoms_on(1.0)
    monkeypatch.setattr(sieve, "INDEX_ATOMS", False)
    assert not index_atoms_on(1.0)
