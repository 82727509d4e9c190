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


# -- row order and index: the bit is protected, the order and index are not -----------------
def _sorted_file(n=4000, seed=0):
    """A raw file sorted by the private value, with an unrelated public column."""
    rng = np.random.default_rng(seed)
    x = np.sort(rng.uniform(0.0, 1.0, n))
    return pd.DataFrame({"x": x, "g": rng.choice(["a", "b"], n), "note": rng.normal(size=n)})


@pytest.mark.parametrize("order", ["sorted", "descending", "nearly sorted", "grouped"])
def test_privatize_refuses_an_order_that_reveals_the_values(order):
    """Old code returned the bits in the input order: bit i belonged to the i-th smallest x,
    so the published position was the private rank whatever eps was."""
    from privinfer.exceptions import RowOrderError

    rng = np.random.default_rng(1)
    x = rng.uniform(0.0, 1.0, 2000)
    if order == "sorted":
        x = np.sort(x)
    elif order == "descending":
        x = np.sort(x)[::-1]
    elif order == "nearly sorted":
        x = np.clip(np.sort(x) + rng.normal(0, 0.005, x.size), 0.0, 1.0)
    else:  # a file grouped (not sorted) by a coarse private value
        x = np.round(x, 1)
        x = np.concatenate([x[x == v] for v in rng.permutation(np.unique(x))])
    pm = PrivateMean(bounds=(0.0, 1.0), eps=1.0, c=0.5)
    for values in (x, pd.Series(x, name="x")):
        with pytest.raises(RowOrderError, match=r"row order of x reveals.*release\("):
            pm.privatize(values, random_state=0)
    # a random order of the same values is released as before
    assert pm.privatize(rng.permutation(x), random_state=0).shape == (2000,)


def test_privatize_does_not_carry_the_input_index_out():
    """Old code returned the bits under the input's index: an index built from the private
    value (or an ID sorted by it) published the value next to its bit."""
    from privinfer.exceptions import RowOrderError

    x = np.random.default_rng(2).uniform(0.0, 1.0, 500)
    pm = PrivateMean(bounds=(0.0, 1.0), eps=1.0, c=0.5)
    with pytest.raises(RowOrderError, match="index"):
        pm.privatize(pd.Series(x, index=pd.Index(x, name="x"), name="x"), random_state=0)
    # the default index: a fresh RangeIndex, the name kept, positions unchanged
    bits = pm.privatize(pd.Series(x, name="income"), random_state=0)
    assert bits.name == "income" and isinstance(bits.index, pd.RangeIndex)
    np.testing.assert_array_equal(bits.to_numpy(), pm.privatize(x, random_state=0))


def test_vector_mean_privatize_refuses_rows_sorted_by_a_coordinate():
    from privinfer.exceptions import RowOrderError

    rng = np.random.default_rng(3)
    X = rng.uniform(0.0, 1.0, size=(1000, 2))
    X = X[np.argsort(X[:, 1])]
    vm = PrivateVectorMean(bounds=[(0, 1), (0, 1)], eps=1.0, c=0.5)
    with pytest.raises(RowOrderError, match=r"\(column 1\)"):
        vm.privatize(X, random_state=0)


def test_release_shuffles_rows_jointly_and_defeats_the_rank_attack():
    raw = _sorted_file().drop(columns="note")
    n = len(raw)
    raw["x"] = (raw["x"] > 0.5).astype(float)  # bits equal x exactly at eta = 1 (below)
    raw["id"] = np.random.default_rng(4).permutation(n)  # public, unrelated to x
    pm = PrivateMean(bounds=(0.0, 1.0), eps=5.0, c=0.5)
    assert pm.eta == pytest.approx(1.0)
    released = pm.release(raw, "x", public=["id", "g"], random_state=5)
    assert released.columns.tolist() == ["x", "g", "id"]
    assert isinstance(released.index, pd.RangeIndex) and released.index.equals(pd.RangeIndex(n))
    # the attack: the position of a bit no longer tracks the rank of x
    pos = np.arange(n)
    assert abs(np.corrcoef(pos, released["x"])[0, 1]) < 0.1
    assert abs(np.corrcoef(pos, raw["x"])[0, 1]) > 0.8  # what the raw order showed
    assert not np.array_equal(released["id"].to_numpy(), raw["id"].to_numpy())
    # each bit stays with its own record's public columns
    back = raw.set_index("id").loc[released["id"]]
    np.testing.assert_array_equal(released["x"].to_numpy(), back["x"].to_numpy())
    np.testing.assert_array_equal(released["g"].to_numpy(), back["g"].to_numpy())
    assert released.attrs["privinfer_bits_release"]["shuffled"] is True


def test_release_drops_undeclared_columns_and_copies_no_metadata_of_the_raw_frame():
    from privinfer.exceptions import UndeclaredColumnWarning

    raw = _sorted_file(1000)
    raw.index = pd.Index(raw["x"].to_numpy(), name="x_value")  # an index that is the value
    raw.columns.name = "secret"
    raw.attrs["source"] = "registry"
    raw.flags.allows_duplicate_labels = False
    pm = PrivateMean(bounds=(0.0, 1.0), eps=1.0, c=0.5)
    with pytest.warns(UndeclaredColumnWarning, match="note"):
        released = pm.release(raw, "x", public=["g"], random_state=6)
    assert released.columns.tolist() == ["x", "g"]
    assert released.index.equals(pd.RangeIndex(1000)) and released.index.name is None
    assert released.columns.name is None
    assert list(released.attrs) == ["privinfer_bits_release"]
    assert released.flags.allows_duplicate_labels is True
    assert set(released["x"].unique()) <= {0, 1}
    # the analyst's side reads the bit column by name, grouped by the public column
    res = PrivateMean.from_formula("x ~ C(g)", released, bounds=(0.0, 1.0), eps=1.0,
                                   c=0.5).fit()
    assert res.params.index.tolist() == ["C(g)[a]", "C(g)[b]"]


def test_release_refuses_a_public_column_that_reveals_the_private_one():
    from privinfer.exceptions import DataMismatchError, DerivedColumnError

    raw = _sorted_file(1000)
    raw["x_copy"] = raw["x"].round(6)
    pm = PrivateMean(bounds=(0.0, 1.0), eps=1.0, c=0.5)
    with pytest.raises(DerivedColumnError, match="'x_copy' -> 'x'"):
        pm.release(raw, "x", public=["g", "x_copy"], random_state=0)
    with pytest.raises(DataMismatchError, match="private and cannot also be declared public"):
        pm.release(raw, "x", public=["x"], random_state=0)


def test_release_without_shuffle_keeps_the_order_and_says_so():
    raw = _sorted_file(300)
    pm = PrivateMean(bounds=(0.0, 1.0), eps=1.0, c=0.5)
    released = pm.release(raw, "x", public=["g", "note"], shuffle=False, random_state=0)
    np.testing.assert_array_equal(released["g"].to_numpy(), raw["g"].to_numpy())
    assert released.attrs["privinfer_bits_release"]["shuffled"] is False
