import itertools
import math

import numpy as np
import pandas as pd
import pytest

from privinfer.transport.measures import SyntheticMeasure, grow_tree
from privinfer.transport.privtree import (
    PrivTreeSynthesizer,
    grid_synthesize,
    privtree_synthesize,
    two_sided_geometric,
)

#: the seeded releases of this module are research runs on purpose
pytestmark = pytest.mark.filterwarnings("ignore::privinfer.exceptions.SeedReleaseWarning")

pytest.importorskip("ot")

UNIT2 = [(0.0, 1.0), (0.0, 1.0)]


def _curve(n, d, rng):
    t = rng.uniform(size=n)
    cols = [t, t**2, 0.5 + 0.4 * np.sin(3 * t)] + [np.full(n, 0.3)] * (d - 3)
    return np.column_stack(cols[:d])


@pytest.mark.parametrize("random_shift", [True, False])
@pytest.mark.parametrize("projection", ["tree", "lp"])
def test_weights_form_a_probability_measure(random_shift, projection):
    rng = np.random.default_rng(0)
    x = rng.uniform(size=(300, 2))
    nu, diag = privtree_synthesize(
        x, 0.5, UNIT2, random_shift=random_shift, projection=projection, random_state=1
    )
    assert np.all(nu.weights >= 0)
    assert nu.weights.sum() == pytest.approx(1.0, abs=1e-12)
    assert nu.points.shape == (diag.n_leaves, 2)
    assert not diag.degenerate


def test_small_eps_noise_still_gives_probability_measure():
    x = np.random.default_rng(3).uniform(size=(50, 3))
    for seed in range(5):
        nu, _ = privtree_synthesize(x, 0.05, [(0, 1)] * 3, random_state=seed)
        assert np.all(nu.weights >= 0)
        assert nu.weights.sum() == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("name", "n", "d"),
    [("uniform", 2000, 2), ("cluster", 2000, 3), ("atom", 300, 3)],
)
def test_expected_tree_size_within_seed_bound(name, n, d):
    rng = np.random.default_rng(11)
    if name == "uniform":
        x = rng.uniform(size=(n, d))
    elif name == "cluster":
        x = np.clip(rng.normal(0.4, 0.01, size=(n, d)), 0, 1)
    else:
        x = np.full((n, d), 0.37)  # one atom: the worst case for the tree size
    eps = 1.0
    sizes = np.array(
        [privtree_synthesize(x, eps, [(0, 1)] * d, random_state=s)[1].n_leaves for s in range(30)]
    )
    bound = 6 + eps * n / (4 * math.log(2))
    se = sizes.std(ddof=1) / np.sqrt(sizes.size)
    assert sizes.mean() - 3 * se <= bound


def test_large_eps_converges_to_cell_aggregation():
    rng = np.random.default_rng(2)
    x = rng.uniform(size=(400, 2))
    nu, diag = privtree_synthesize(x, 1e12, UNIT2, max_depth=10, random_state=0)
    assert np.array_equal(nu.weights, nu.leaf_masses(x))
    # the leaf noise vanishes: the released counts are the exact counts
    assert np.array_equal(nu.noisy_counts, np.rint(nu.leaf_masses(x) * 400).astype(np.int64))
    # every occupied cell at the depth cap is refined down to it
    assert diag.depth == 10


def test_leaf_noise_is_integer_and_nonzero():
    rng = np.random.default_rng(4)
    x = rng.uniform(size=(2000, 2))
    nu, _ = privtree_synthesize(x, 1.0, UNIT2, random_state=5)
    assert nu.noisy_counts.dtype == np.int64
    exact = nu.leaf_masses(x) * 2000
    assert np.allclose(exact, np.rint(exact))
    noise = nu.noisy_counts - np.rint(exact).astype(np.int64)
    assert np.any(noise != 0)


def test_two_sided_geometric_has_discrete_laplace_law():
    eps = 0.5
    z = two_sided_geometric(eps, 200_000, random_state=0)
    a = math.exp(-eps)
    assert z.dtype == np.int64
    assert abs(z.mean()) < 5 * math.sqrt(2 * a / (1 - a) ** 2 / z.size)
    assert z.var() == pytest.approx(2 * a / (1 - a) ** 2, rel=0.03)
    assert np.mean(z == 0) == pytest.approx((1 - a) / (1 + a), abs=0.005)


def test_random_shift_discards_exactly_cells_outside_window():
    rng = np.random.default_rng(6)
    d = 2
    x = rng.uniform(size=(3000, d))
    nu, diag = privtree_synthesize(x, 2.0, UNIT2, random_state=7)
    tree, u = nu.tree, nu.shift
    assert u is not None and np.all((u >= 0) & (u <= 1))
    total = 0
    for k, lev in enumerate(tree.levels[:-1]):
        j, t = k % d, k // d
        parents = lev.index[lev.split]
        # both children along coordinate j, in [0, 2] units: side 2 / 2**(t + 1)
        side = 2.0 / 2 ** (t + 1)
        lower = np.concatenate([2 * parents[:, j], 2 * parents[:, j] + 1]) * side
        misses = (lower >= u[j] + 1.0) | (lower + side <= u[j])
        assert lev.n_discarded == int(misses.sum())
        assert tree.levels[k + 1].index.shape[0] == 2 * parents.shape[0] - lev.n_discarded
        total += lev.n_discarded
    assert diag.n_discarded == total > 0
    # the surviving leaves tile the window: volumes of cell ∩ window sum to one
    lo, hi = tree.leaf_boxes()
    assert np.all(hi > lo)
    assert np.prod(hi - lo, axis=1).sum() == pytest.approx(1.0, abs=1e-12)
    # representatives lie in the public bounds
    assert np.all((nu.points >= 0) & (nu.points <= 1))


def test_no_shift_discards_nothing():
    x = np.random.default_rng(8).uniform(size=(500, 2))
    nu, diag = privtree_synthesize(x, 1.0, UNIT2, random_shift=False, random_state=0)
    assert nu.shift is None
    assert diag.n_discarded == 0


def _recursive_leaves(x, lower, upper, depth, d, max_depth, threshold):
    inside = np.all((x >= lower) & (x < upper), axis=1)
    count = int(inside.sum())
    if depth == max_depth or count <= threshold:
        return [count]
    j = depth % d
    mid = 0.5 * (lower[j] + upper[j])
    up_left, lo_right = upper.copy(), lower.copy()
    up_left[j], lo_right[j] = mid, mid
    return _recursive_leaves(x, lower, up_left, depth + 1, d, max_depth, threshold) + (
        _recursive_leaves(x, lo_right, upper, depth + 1, d, max_depth, threshold)
    )


def test_vectorised_growth_matches_recursive_partition():
    rng = np.random.default_rng(9)
    d, bits = 3, 52
    x = rng.uniform(size=(500, d))
    grid = np.floor(x * 2.0**bits).astype(np.int64)
    lo = np.zeros(d, dtype=np.int64)
    hi = np.full(d, np.int64(1) << np.int64(bits))
    tree, counts, point_leaf = grow_tree(grid, lo, hi, max_depth=9, decide=lambda k, c: c > 20)
    expected = _recursive_leaves(x, np.zeros(d), np.ones(d), 0, d, 9, 20)
    assert sorted(counts.tolist()) == sorted(expected)
    assert np.array_equal(np.bincount(point_leaf, minlength=counts.size), counts)
    assert np.array_equal(tree.locate(grid), point_leaf)


def _ultrametric(tree):
    """Diameter of the smallest common cell of every pair of leaves (brute force)."""
    chains = []
    for k, lev in enumerate(tree.levels):
        for pos in np.flatnonzero(~lev.split):
            chain, kk, p = [], k, pos
            while kk >= 0:
                chain.append((kk, p))
                p = tree.levels[kk].parent[p]
                kk -= 1
            chains.append(set(chain))
    diam = {}
    for k in range(len(tree.levels)):
        lo, hi = tree.level_boxes(k)
        for p, v in enumerate(np.linalg.norm(hi - lo, axis=1)):
            diam[(k, p)] = v
    m = len(chains)
    out = np.zeros((m, m))
    for a, b in itertools.combinations(range(m), 2):
        common = chains[a] & chains[b]
        out[a, b] = out[b, a] = diam[max(common)]
    return out


def test_tree_projection_is_exact_for_the_ultrametric():
    from scipy.optimize import linprog

    rng = np.random.default_rng(10)
    x = rng.uniform(size=(300, 2))
    nu, _ = privtree_synthesize(x, 0.3, UNIT2, random_state=3)
    tree = nu.tree
    target = nu.noisy_counts / nu.noisy_counts.sum()
    assert np.any(target < 0)  # the projection has work to do
    cost, kept = tree.cancel(target)
    dist = _ultrametric(tree)
    m = target.size
    q, r = np.nonzero(~np.eye(m, dtype=bool))
    a_ub = np.zeros((m, q.size))
    a_ub[q, np.arange(q.size)] += 1
    a_ub[r, np.arange(q.size)] -= 1
    res = linprog(dist[q, r], A_ub=a_ub, b_ub=target, bounds=(0, None), method="highs")
    assert cost == pytest.approx(res.fun, rel=1e-9, abs=1e-12)
    assert np.all(kept >= 0)
    assert kept.sum() == pytest.approx(1.0)


def test_lp_projection_is_no_worse_than_tree_projection_in_euclidean_w1():
    ot = pytest.importorskip("ot")
    rng = np.random.default_rng(12)
    x = rng.uniform(size=(300, 2))
    nu_lp, d_lp = privtree_synthesize(x, 0.3, UNIT2, projection="lp", random_state=3)
    nu_tree, d_tree = privtree_synthesize(x, 0.3, UNIT2, projection="tree", random_state=3)
    assert np.array_equal(nu_lp.noisy_counts, nu_tree.noisy_counts)
    # Euclidean W1(projected, signed) via the partial-transport identity
    target = nu_tree.noisy_counts / nu_tree.noisy_counts.sum()
    pos, neg = np.maximum(target, 0), np.maximum(-target, 0)
    cost = ot.dist(nu_tree.points, nu_tree.points, metric="euclidean")
    w_tree = ot.emd2(pos, nu_tree.weights + neg, cost)
    assert d_lp.projection_cost <= w_tree + 1e-9
    assert w_tree <= d_tree.projection_cost + 1e-9  # the ultrametric cost bounds it


def test_wasserstein_exact_matches_pot_and_tree_bound_dominates():
    ot = pytest.importorskip("ot")
    rng = np.random.default_rng(13)
    bounds = [(-2.0, 2.0), (10.0, 30.0)]
    x = np.column_stack([rng.uniform(-2, 2, 800), rng.uniform(10, 30, 800)])
    nu = PrivTreeSynthesizer(1.0, bounds, random_state=0).fit(x).measure_
    exact = nu.wasserstein(x, method="exact")
    ref = ot.emd2(np.full(800, 1 / 800), nu.weights, ot.dist(x, nu.points, metric="euclidean"))
    assert exact == pytest.approx(ref, rel=1e-7)
    assert nu.wasserstein(x, method="tree") >= exact
    unit = nu.wasserstein(x, method="exact", unit_cube=True)
    assert unit < exact  # the second coordinate spans 20 units
    assert nu.wasserstein(x) == pytest.approx(exact)


@pytest.mark.parametrize("unit", [1e-12, 1e-6, 1e6])
def test_wasserstein_exact_is_equivariant_to_the_units(unit):
    # POT's network simplex has absolute tolerances; distances of order 1e-13 gave a
    # plan 30% too costly before the cost was rescaled
    rng = np.random.default_rng(21)
    x = rng.uniform(size=(600, 2))
    nu, _ = privtree_synthesize(x, 1.0, UNIT2, random_state=0)
    nu_scaled, _ = privtree_synthesize(x * unit, 1.0, [(0.0, unit)] * 2, random_state=0)
    assert nu_scaled.wasserstein(x * unit, method="exact") / unit == pytest.approx(
        nu.wasserstein(x, method="exact"), rel=1e-7)


def test_frame_sample_and_units():
    rng = np.random.default_rng(14)
    frame = pd.DataFrame({"age": rng.uniform(20, 60, 1000), "income": rng.uniform(0, 5, 1000)})
    synth = PrivTreeSynthesizer(2.0, [(18, 65), (0, 10)], random_state=1).fit(frame)
    out = synth.measure_.to_frame()
    assert list(out.columns) == ["age", "income", "weight"]
    assert out["age"].between(18, 65).all() and out["income"].between(0, 10).all()
    draws = synth.sample(50, random_state=2)
    assert draws.shape == (50, 2)
    assert np.array_equal(draws, synth.sample(50, random_state=2))
    assert synth.diagnostics_.n_obs == 1000
    assert not hasattr(synth.measure_, "data")


def test_hyperparameters_unchanged_and_seeded_reproducible():
    x = np.random.default_rng(15).uniform(size=(500, 2))
    synth = PrivTreeSynthesizer(1, UNIT2, random_state=4)
    a = synth.fit(x).measure_
    assert synth.eps == 1 and synth.bounds is UNIT2 and synth.max_depth is None
    b = PrivTreeSynthesizer(1, UNIT2, random_state=4).fit(x).measure_
    assert np.array_equal(a.weights, b.weights)
    c = PrivTreeSynthesizer(1, UNIT2).fit(x).measure_
    d = PrivTreeSynthesizer(1, UNIT2).fit(x).measure_
    assert not np.array_equal(c.noisy_counts, d.noisy_counts) or c.n_atoms != d.n_atoms


def test_grid_baseline_has_fixed_partition():
    x = np.random.default_rng(16).uniform(size=(1000, 3))
    nu, diag = grid_synthesize(x, 1.0, [(0, 1)] * 3, depth=7, random_state=0)
    assert nu.n_atoms == 2**7 == diag.n_leaves
    assert nu.weights.sum() == pytest.approx(1.0)


def test_privtree_adapts_to_a_curve_better_than_grid():
    rng = np.random.default_rng(17)
    x = _curve(4000, 4, rng)
    w_tree = np.mean(
        [
            privtree_synthesize(x, 1.0, [(0, 1)] * 4, random_state=s)[0].wasserstein(x)
            for s in range(3)
        ]
    )
    w_grid = np.mean(
        [grid_synthesize(x, 1.0, [(0, 1)] * 4, n_bound=4000, random_state=s)[0].wasserstein(x)
         for s in range(3)]
    )
    assert w_tree < w_grid


@pytest.mark.parametrize("d", [1, 2])
def test_plot_draws_cells(d):
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    x = np.random.default_rng(18).uniform(size=(500, d))
    nu, _ = privtree_synthesize(x, 1.0, [(0, 1)] * d, random_state=0)
    ax = nu.plot()
    assert ax is not None
    plt.close("all")


def test_measure_is_a_synthetic_measure():
    x = np.random.default_rng(19).uniform(size=(200, 1))
    nu, _ = privtree_synthesize(x[:, 0], 1.0, [(0, 1)], random_state=0)
    assert isinstance(nu, SyntheticMeasure)
    assert nu.dim == 1
