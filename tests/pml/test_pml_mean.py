import pickle

import numpy as np
import pandas as pd
import pytest

from privinfer.pml import (
    PrivateMean,
    PrivateVectorMean,
    eps_star,
    eta_tv,
    pml_epsilon,
)


@pytest.mark.parametrize(("eps", "c"), [(0.5, 0.0), (1.0, 0.2), (0.3, 0.4), (3.0, 0.3)])
def test_grid_kernel_pml_equals_eps(eps, c):
    pm = PrivateMean(bounds=(-1.0, 1.0), eps=eps, c=c)
    _, K, c_grid = pm.grid_kernel(201)
    expected = min(eps, eps_star(c, 2.0))
    assert pml_epsilon(K, c_grid) == pytest.approx(expected, abs=1e-10)
    assert pm.guarantee().eps == pytest.approx(expected)


@pytest.mark.parametrize(("eps", "c"), [(1.0, 0.0), (1.5, 0.05)])
def test_vector_mean_grid_kernel_pml_equals_eps(eps, c):
    vm = PrivateVectorMean(bounds=[(-1, 1), (0, 3)], eps=eps, c=c)
    _, K, c_grid = vm.grid_kernel(5)
    assert K.shape == (25, 4)
    np.testing.assert_allclose(K.sum(axis=1), 1.0)
    assert vm.eta == pytest.approx(eta_tv(eps, c, 6.0))
    assert pml_epsilon(K, c_grid) == pytest.approx(min(eps, eps_star(c, 6.0)), abs=1e-10)


def test_private_mean_is_unbiased_and_ci_covers():
    pm = PrivateMean(bounds=(-2.0, 2.0), eps=1.0, c=0.1)
    rng = np.random.default_rng(7)
    n, reps = 400, 400
    x = rng.beta(2, 3, size=(reps, n)) * 4 - 2  # mean -0.4
    theta = 0.4 * 4 - 2
    bits = pm.privatize(x.ravel(), random_state=rng).reshape(reps, n)
    res = [pm.estimate(b) for b in bits]
    est = np.array([r.params["mean"] for r in res])
    se_mc = est.std(ddof=1) / np.sqrt(reps)
    assert abs(est.mean() - theta) < 4 * se_mc
    # n * MSE / b^2 is at most 1 / eta^2 (within MC error)
    risk = n * np.mean((est - theta) ** 2) / 4.0
    assert risk < 1.2 / pm.eta**2
    for method, band in (("normal", (0.92, 0.98)), ("exact", (0.93, 1.0)),
                         ("hoeffding", (0.95, 1.0))):
        ci = np.array([r.conf_int(0.05, method=method).iloc[0].to_numpy() for r in res])
        cover = np.mean((ci[:, 0] <= theta) & (theta <= ci[:, 1]))
        assert band[0] <= cover <= band[1], (method, cover)
    ses = np.array([r.std_errors["mean"] for r in res])
    assert np.mean(ses) == pytest.approx(est.std(ddof=1), rel=0.15)


def test_vector_mean_is_unbiased():
    vm = PrivateVectorMean(bounds=[(-1, 1), (0, 2), (0, 1)], eps=2.0, c=0.2)
    rng = np.random.default_rng(8)
    X = np.column_stack([rng.uniform(-1, 1, 20000) ** 3, rng.uniform(0, 2, 20000),
                         rng.beta(5, 1, 20000)])
    res = vm.estimate(vm.privatize(X, random_state=rng))
    theta = np.array([0.0, 1.0, 5 / 6])
    z = (res.params.to_numpy() - theta) / res.std_errors.to_numpy()
    assert np.all(np.abs(z) < 4)
    assert res.conf_int(method="hoeffding").shape == (3, 2)


def test_from_formula_gives_group_means():
    rng = np.random.default_rng(9)
    n = 6000
    region = rng.choice(["north", "south"], size=n)
    income = np.where(region == "north", 0.6, -0.2) + rng.uniform(-0.3, 0.3, n)
    pm = PrivateMean(bounds=(-1, 1), eps=2.0, c=0.2)
    released = pd.DataFrame({"income": pm.privatize(income, random_state=1), "region": region})
    res = PrivateMean.from_formula("income ~ C(region)", released, bounds=(-1, 1), eps=2.0,
                                   c=0.2).fit()
    assert len(res.params) == 2
    z = (res.params.to_numpy() - np.array([0.6, -0.2])) / res.std_errors.to_numpy()
    assert np.all(np.abs(z) < 4)
    overall = PrivateMean.from_formula("income ~ 1", released, bounds=(-1, 1), eps=2.0,
                                       c=0.2).fit()
    assert overall.params.index.tolist() == ["mean"]
    assert "PrivateMean Results" in str(overall.summary())


def test_results_hold_no_raw_or_released_records():
    pm = PrivateMean(bounds=(0, 1), eps=1.0, c=0.5)
    res = pm.estimate(pm.privatize(np.full(5000, 0.3), random_state=0))
    blob = pickle.dumps(res)
    assert len(blob) < 20000
    for value in vars(res).values():
        assert np.size(value) <= 1 or len(value) == 1


def test_all_equal_bits_give_a_positive_se_at_the_mechanism_floor_and_a_warning():
    from privinfer.exceptions import OutsideBoundsWarning

    pm = PrivateMean(bounds=(0.0, 1.0), eps=2.0, c=0.0)
    with pytest.warns(OutsideBoundsWarning, match="outside the public bounds"):
        res = pm.estimate(np.ones(8, dtype=int))
    b, eta = 0.5, pm.eta
    # unbiased estimate kept (not clipped): m + b / eta
    assert res.params["mean"] == pytest.approx(0.5 + b / eta)
    floor_se = b * np.sqrt(1.0 - eta**2) / eta / np.sqrt(8)
    assert res.std_errors["mean"] == pytest.approx(floor_se, rel=1e-12)
    ci = res.conf_int().iloc[0]
    assert ci["upper"] - ci["lower"] > 0.5


def test_group_with_all_equal_bits_warns_at_fit():
    from privinfer.exceptions import OutsideBoundsWarning

    pm = PrivateMean(bounds=(0.0, 1.0), eps=1.0, c=0.0)
    rng = np.random.default_rng(0)
    g = np.array(["a"] * 200 + ["b"] * 3)
    bits = np.concatenate([pm.privatize(rng.uniform(0, 1, 200), random_state=1), [0, 0, 0]])
    model = PrivateMean.from_formula("y ~ C(g)", pd.DataFrame({"y": bits, "g": g}),
                                     bounds=(0.0, 1.0), eps=1.0, c=0.0)
    with pytest.warns(OutsideBoundsWarning, match=r"C\(g\)\[b\]"):
        res = model.fit()
    assert res.params["C(g)[b]"] < 0 and res.std_errors["C(g)[b]"] > 0


def test_se_floor_does_not_bind_on_ordinary_samples():
    import warnings

    pm = PrivateMean(bounds=(0.0, 1.0), eps=1.0, c=0.0)
    bits = pm.privatize(np.random.default_rng(0).uniform(0, 1, 500), random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = pm.estimate(bits)
    terms = 0.5 * (2.0 * bits - 1.0) / pm.eta
    assert res.std_errors["mean"] == pytest.approx(terms.std(ddof=1) / np.sqrt(500), rel=1e-12)


def test_groups_with_too_few_bits_are_named():
    from privinfer.exceptions import DataMismatchError

    rng = np.random.default_rng(0)
    g = rng.choice(["a", "b"], 300).astype(object)
    g[0] = "rare"
    pm = PrivateMean(bounds=(0.0, 1.0), eps=1.0, c=0.5)
    bits = pm.privatize(rng.uniform(size=300), random_state=1)
    df = pd.DataFrame({"y": bits, "g": g})
    with pytest.raises(DataMismatchError, match=r"C\(g\)\[rare\]': 1"):
        PrivateMean.from_formula("y ~ C(g)", df, bounds=(0, 1), eps=1.0, c=0.5)
    # an unused level of a categorical (rows selected on a public column) has no bits
    df["gc"] = pd.Categorical(g, categories=["a", "b", "rare", "never"])
    with pytest.raises(DataMismatchError, match=r"never\]': 0.*remove_unused_categories"):
        PrivateMean.from_formula("y ~ C(gc)", df, bounds=(0, 1), eps=1.0, c=0.5)
