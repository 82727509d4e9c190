import numpy as np
import pandas as pd
import pytest
from scipy import stats

from privinfer.pml import (
    PMLTest,
    eps_star,
    eta_tv,
    optimal_binary_mechanism,
    pml_epsilon,
    tv_distance,
)


@pytest.mark.parametrize("seed", range(4))
def test_kstar_attains_eta_tv_and_has_pml_exactly_eps(seed):
    rng = np.random.default_rng(seed)
    for _ in range(40):
        n = int(rng.integers(2, 12))
        c = rng.uniform(0, 1.0 / n)
        k = int(rng.integers(1, n))
        A = rng.permutation(n)[:k]
        t = max(k, n - k)
        eps_max = np.inf if c == 0 else -np.log(c * t)
        eps = rng.uniform(0.05, min(eps_max, 6.0))
        mech = optimal_binary_mechanism(eps, c, A, n)
        K = mech.kernel
        assert mech.eps == pytest.approx(min(eps, eps_star(c, n)))
        assert pml_epsilon(K, c) == pytest.approx(mech.eps, abs=1e-9)
        P, Q = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
        gap = abs(P[A].sum() - Q[A].sum())
        assert tv_distance(P @ K, Q @ K) == pytest.approx(eta_tv(mech.eps, c, n) * gap, abs=1e-12)


def test_kstar_above_eps_star_is_the_deterministic_indicator():
    n, c = 6, 0.1
    mech = optimal_binary_mechanism(5.0, c, [0, 2, 4], n)
    assert mech.eps == pytest.approx(eps_star(c, n)) and mech.eta == pytest.approx(1.0)
    np.testing.assert_allclose(mech.kernel[:, 0], [1, 0, 1, 0, 1, 0], atol=1e-12)
    assert pml_epsilon(mech.kernel, c) == pytest.approx(eps_star(c, n))


def test_soft_set_for_odd_alphabet_reaches_eps_star():
    n, c = 5, 0.1
    a = np.array([1.0, 1.0, 0.5, 0.0, 0.0])
    mech = optimal_binary_mechanism(10.0, c, a, n)
    assert mech.eta == pytest.approx(1.0)
    assert pml_epsilon(mech.kernel, c) == pytest.approx(eps_star(c, n))


def test_kstar_at_c_zero_is_randomised_response():
    mech = optimal_binary_mechanism(np.log(3), 0.0, [True, False], 2)
    np.testing.assert_allclose(mech.kernel, [[0.75, 0.25], [0.25, 0.75]])


def test_kstar_on_an_interval_matches_its_cell_discretisation():
    lo, hi, c, eps = -1.0, 1.0, 0.2, 0.8
    mech = optimal_binary_mechanism(eps, c, [(-1.0, -0.5), (0.0, 0.5)], (lo, hi))
    n_cells = 40
    mids = np.linspace(lo, hi, n_cells + 1)[:-1] + 1 / n_cells
    p0 = mech.prob_zero(mids)
    K = np.column_stack([p0, 1 - p0])
    assert pml_epsilon(K, c * (hi - lo) / n_cells) == pytest.approx(eps, abs=1e-9)
    assert mech.eta == pytest.approx(eta_tv(eps, c, 2.0))
    box = optimal_binary_mechanism(eps, 0.1, [[(0, 1), (0, 1)]], [(0, 2), (0, 2)])
    assert box.mass == pytest.approx(1.0) and box.measure == pytest.approx(4.0)
    assert box.prob_zero([[0.5, 0.5], [1.5, 0.5]])[0] > box.prob_zero([[1.5, 0.5]])[0]


P4 = np.array([0.35, 0.3, 0.2, 0.15])
Q4 = np.array([0.15, 0.2, 0.3, 0.35])


def test_pmltest_size_never_exceeds_nominal_level():
    t = PMLTest(P4, Q4, eps=0.7, c=0.1, alpha=0.05)
    plan = t.plans[0]
    ns = np.arange(5, 400)
    assert np.all(plan.size(ns, 0.05) <= 0.05 + 1e-12)
    rng = np.random.default_rng(11)
    n, reps = 80, 500
    x = rng.choice(4, size=(reps, n), p=P4)
    bits = t.privatize(x.ravel(), random_state=rng).reshape(reps, n)
    rejects = np.array([t.test(b).reject for b in bits])
    # exact size at n plus 3 Monte Carlo SEs
    size = float(plan.size(n, 0.05))
    assert rejects.mean() <= size + 3 * np.sqrt(0.05 * 0.95 / reps)


def test_pmltest_simulated_power_matches_computed_power():
    t = PMLTest(P4, Q4, eps=0.7, c=0.1)
    n, reps = 60, 600
    rng = np.random.default_rng(12)
    x = rng.choice(4, size=(reps, n), p=Q4)
    bits = t.privatize(x.ravel(), random_state=rng).reshape(reps, n)
    rejects = np.array([t.test(b).reject for b in bits])
    power = float(t.power(n))
    assert 0.2 < power < 0.95
    assert abs(rejects.mean() - power) <= 4 * np.sqrt(power * (1 - power) / reps)


def test_pmltest_privacy_for_free_above_eps_star():
    c = 0.1
    t = PMLTest(P4, Q4, eps=eps_star(c, 4) + 0.5, c=c)
    pml, ldp, nonpriv = t.plans
    assert pml.eta_tv == pytest.approx(1.0)
    assert pml.tv_bits == pytest.approx(nonpriv.tv_bits)
    assert ldp.tv_bits < pml.tv_bits
    frame = t.compare(100)
    assert list(frame.index) == ["PML (c-interior)", "LDP (c = 0)", "non-private"]
    assert frame.loc["PML (c-interior)", "n_exact"] == frame.loc["non-private", "n_exact"]


def test_pmltest_sample_size_formula_and_series_roundtrip():
    t = PMLTest(P4, Q4, eps=0.5, c=0.1)
    tv = tv_distance(P4, Q4)
    eta = t.plans[0].eta_tv
    assert t.sample_size(0.05) == pytest.approx(8 * np.log(20) / (eta**2 * tv**2))
    # the sample-size bound indeed gives small errors
    n = int(np.ceil(t.sample_size(0.05)))
    assert float(t.power(n)) > 0.95
    x = pd.Series(np.random.default_rng(3).choice(4, 300, p=Q4), name="grade")
    released = t.privatize(x, random_state=4)
    assert isinstance(released, pd.Series) and released.name == "grade"
    res = t.test(released)
    assert "PMLTest" in str(res) and res.n_obs == 300
    assert set(vars(res)) == {"statistic", "n_obs", "counted_label", "p_value", "alpha",
                              "reject", "power", "plans", "zeta", "target_power",
                              "null_mass", "alt_mass"}


def test_pmltest_continuous_densities_level_set_and_power():
    P = stats.uniform(-1, 2)
    Q = stats.truncnorm(-1.2, 0.8, loc=0.2, scale=1.0)
    t = PMLTest(P, Q, eps=1.0, c=0.2, grid_size=2000)
    mech = t.mechanism
    assert mech.kind == "lebesgue"
    # A is a level set {p - q > tau} (here both tails): p - q is larger on A than off A
    grid = np.linspace(-0.999, 0.999, 401)
    a = mech.indicator(grid)
    d = P.pdf(grid) - Q.pdf(grid)
    assert 0 < a.sum() < a.size
    assert d[a == 1].min() >= d[a == 0].max() - 5e-3
    n, reps = 150, 300
    rng = np.random.default_rng(5)
    x = Q.rvs(size=(reps, n), random_state=rng)
    bits = t.privatize(x.ravel(), random_state=rng).reshape(reps, n)
    rejects = np.array([t.test(b).reject for b in bits])
    power = float(t.power(n))
    assert abs(rejects.mean() - power) <= 4 * np.sqrt(power * (1 - power) / reps) + 1e-3


@pytest.mark.parametrize("bits", [[1], [0], [1, 1, 1, 1, 1]])
def test_pmltest_all_equal_bits_give_positive_se_and_warn(bits):
    from privinfer.exceptions import OutsideBoundsWarning

    t = PMLTest([0.3, 0.3, 0.2, 0.2], [0.2, 0.2, 0.3, 0.3], eps=1.0, c=0.15)
    with pytest.warns(OutsideBoundsWarning, match="outside"):
        res = t.test(np.array(bits))
    m = float(res.params["mass_A"])
    assert not 0.0 <= m <= 1.0  # the unbiased estimate is kept, not clipped
    ends = np.array([t.mechanism.base, t.mechanism.base + t.mechanism.eta])
    floor = float(np.min(ends * (1.0 - ends)))
    expected = np.sqrt(floor / len(bits)) / t.mechanism.eta
    assert float(res.bse["mass_A"]) == pytest.approx(expected, rel=1e-12)
    assert np.isfinite(float(res.tvalues["mass_A"]))
    ci = res.conf_int().iloc[0]
    assert ci["upper"] > ci["lower"]


# -- row order: the bit is protected, the order and index are not ---------------------------
def test_binary_privatize_refuses_atoms_sorted_or_indexed_by_value():
    """Old code released the bits in the input order (a file sorted by grade published each
    record's grade class through its position) and under the input's index."""
    from privinfer.exceptions import RowOrderError

    t = PMLTest(P4, Q4, eps=0.7, c=0.1)
    x = np.random.default_rng(13).choice(4, 1000, p=Q4)
    for mech in (t, t.mechanism):
        with pytest.raises(RowOrderError, match="sorted by the value"):
            mech.privatize(np.sort(x), random_state=0)
        with pytest.raises(RowOrderError, match="index"):
            mech.privatize(pd.Series(x, index=np.argsort(x)), random_state=0)
        assert mech.privatize(x, random_state=0).shape == (1000,)


def test_pmltest_release_shuffles_and_keeps_bits_with_their_public_columns():
    from privinfer.exceptions import UndeclaredColumnWarning

    rng = np.random.default_rng(14)
    n = 3000
    raw = pd.DataFrame({"grade": np.sort(rng.choice(4, n, p=Q4)),
                        "id": rng.permutation(n), "name": "x"})
    t = PMLTest(P4, Q4, eps=0.7, c=0.1)
    with pytest.warns(UndeclaredColumnWarning, match="name"):
        released = t.release(raw, "grade", public=["id"], random_state=15)
    assert released.columns.tolist() == ["grade", "id"]
    assert released.index.equals(pd.RangeIndex(n))
    pos = np.arange(n)
    assert abs(np.corrcoef(pos, released["grade"])[0, 1]) < 0.1
    # bit i belongs to record id i: its mean follows that record's grade (in A or not)
    grade_of = raw.set_index("id")["grade"].loc[released["id"]].to_numpy()
    a = t.mechanism.indicator(grade_of)
    assert released["grade"][a == 1].mean() != pytest.approx(
        released["grade"][a == 0].mean(), abs=0.2)
    res = t.test(released["grade"])
    assert res.n_obs == n and res.reject
