"""Bad input to PrivateGMM raises named errors with useful messages."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer.exceptions import (
    ClusterError,
    DataMismatchError,
    FewClustersWarning,
    FewEffectiveRowsWarning,
    MechanismMismatchError,
    MissingValueError,
    PerfectSeparationWarning,
    SingularDesignError,
)


def _data(n: int = 200, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {"x": rng.uniform(0, 1, n), "z": rng.uniform(0, 1, n), "w": rng.normal(size=n)}
    )
    df["y"] = 1 + df["x"] + df["w"] + rng.normal(size=n)
    df["d"] = (df["y"] > 1).astype(float)
    return df


MECH = pi.AlphaIdentity(0.8, {"x": pi.reference.Uniform(0, 1), "z": pi.reference.Uniform(0, 1)})


def test_under_identified_iv_is_an_error():
    with pytest.raises(SingularDesignError, match="under-identified"):
        pi.PrivateGMM.iv("y ~ w + [x + z ~ w]", _data(), mechanism=MECH)


def test_under_identified_generic_is_an_error():
    def moments(b, f):
        return (f["y"].to_numpy() - b[0] - b[1] * f["x"].to_numpy())[:, None]

    with pytest.raises(SingularDesignError, match="1 moment condition"):
        pi.PrivateGMM(moments, _data(), MECH, 2)


def test_singular_private_gram_names_the_columns():
    df = _data()
    df["w2"] = 2 * df["w"]
    with pytest.raises(SingularDesignError, match=r"\['w', 'w2'\]"):
        pi.PrivateGMM.ols("y ~ x + w + w2", df, mechanism=MECH).fit(random_state=0)


def test_singular_private_gram_with_private_columns():
    df = _data()
    mech = pi.AlphaIdentity(1.0, {"x": pi.reference.Uniform(0, 1), "z": pi.reference.Uniform(0, 1)})
    df["z"] = df["x"]
    with pytest.raises(SingularDesignError, match=r"'x'.*'z'|'z'.*'x'"):
        pi.PrivateGMM.ols("y ~ x + z", df, mechanism=mech).fit()


@pytest.mark.parametrize("bad", ["1d", "rows", "nan"])
def test_moments_with_wrong_shape_are_an_error(bad):
    def moments(b, f):
        e = f["y"].to_numpy() - b[0]
        if bad == "1d":
            return e
        if bad == "rows":
            return np.column_stack([e, e])[:-1]
        return np.column_stack([e, np.full(len(f), np.nan)])

    err = DataMismatchError
    with pytest.raises(err, match=r"shape|NaN"):
        pi.PrivateGMM(moments, _data(), MECH, 1).fit(random_state=0)


def test_private_dependent_variable_is_an_error():
    with pytest.raises(MechanismMismatchError, match=r"dependent variable 'x'.*private"):
        pi.PrivateGMM.ols("x ~ w", _data(), mechanism=MECH)
    with pytest.raises(MechanismMismatchError, match="private"):
        pi.PrivateGMM.iv("np.log(x) ~ w + [y ~ z]", _data(), mechanism=MECH)


def test_logit_needs_a_binary_public_outcome():
    with pytest.raises(DataMismatchError, match="0/1"):
        pi.PrivateGMM.logit("y ~ x", _data(), mechanism=MECH)


def test_logit_constant_outcome_is_an_error():
    data = _data().assign(d=1.0)
    with pytest.raises(DataMismatchError, match=r"outcome 'd' is constant \(every row is 1\)"):
        pi.PrivateGMM.logit("d ~ x + w", data, mechanism=MECH)


def _separated(n: int = 1500, quasi: bool = False) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    raw = pd.DataFrame({"x": rng.uniform(0, 1, n), "u": rng.integers(0, 2, n)})
    raw["yb"] = raw["u"]
    if quasi:  # u = 1 always gives yb = 1; u = 0 gives either
        raw.loc[(raw["u"] == 0) & (rng.random(n) < 0.3), "yb"] = 1
    mech = pi.AlphaIdentity(0.7, {"x": pi.reference.Uniform(0, 1)})
    return mech.privatize(raw, public=["yb", "u"], random_state=1)


@pytest.mark.parametrize(
    ("quasi", "kind"), [(False, "Complete separation"), (True, "quasi-complete separation")]
)
def test_logit_perfect_separation_warns_and_notes_it(quasi, kind):
    model = pi.PrivateGMM.logit("yb ~ x + u", _separated(quasi=quasi))
    with pytest.warns(PerfectSeparationWarning, match=f"{kind}.*largest is 'u'"):
        res = model.fit(random_state=0)
    assert any(kind in note for note in res.diagnostics.notes)


def test_logit_without_separation_does_not_warn():
    import warnings

    rng = np.random.default_rng(1)
    raw = pd.DataFrame({"x": rng.uniform(0, 1, 1500), "u": rng.integers(0, 2, 1500)})
    raw["yb"] = (rng.random(1500) < 1 / (1 + np.exp(-(-1 + 2 * raw.x + raw.u)))).astype(int)
    mech = pi.AlphaIdentity(0.7, {"x": pi.reference.Uniform(0, 1)})
    rel = mech.privatize(raw, public=["yb", "u"], random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", PerfectSeparationWarning)
        pi.PrivateGMM.logit("yb ~ x + u", rel).fit(random_state=0)


def test_bad_options_and_formulas():
    model = pi.PrivateGMM.ols("y ~ x + w", _data(), mechanism=MECH)
    with pytest.raises(ValueError, match="weighting"):
        model.fit(weighting="optimal")
    with pytest.raises(ClusterError, match="needs clusters"):
        model.fit(cov_type="clustered")
    with pytest.raises(ClusterError, match="one label per row"):
        model.fit(cov_type="clustered", clusters=np.arange(5))
    with pytest.raises(ClusterError, match="missing"):
        model.fit(cov_type="clustered", clusters=[None] + [1, 2] * 99 + [1])
    with pytest.raises(ClusterError, match="at least 2 clusters"):
        model.fit(cov_type="clustered", clusters=np.ones(200))
    with pytest.raises(ClusterError, match="clusters given"):
        model.fit(clusters=np.arange(200))
    with pytest.raises(ValueError, match="cov_type"):
        model.fit(cov_type="HC3")
    with pytest.raises(ValueError, match="small_g"):
        model.fit(cov_type="clustered", clusters=np.arange(200) % 5, small_g=1)
    with pytest.raises(DataMismatchError, match=r"PrivateGMM\.iv"):
        pi.PrivateGMM.ols("y ~ [x ~ z]", _data(), mechanism=MECH)
    with pytest.raises(DataMismatchError, match="needs a block"):
        pi.PrivateGMM.iv("y ~ x", _data(), mechanism=MECH)
    df = _data()
    df.loc[3, "w"] = np.nan
    with pytest.raises(MissingValueError, match="'w'"):
        pi.PrivateGMM.ols("y ~ x + w", df, mechanism=MECH)


def test_few_clusters_warn_and_name_the_n_needed():
    """Under 50 clusters ``fit(cov_type="clustered")`` warns (at the caller's line) and names
    the n needed at the same cluster size; with 60 clusters it does not."""
    df = _data(1200, seed=3)
    model = pi.PrivateGMM.ols("y ~ x + w", df, mechanism=MECH)
    few = np.arange(len(df)) % 5
    with pytest.warns(FewClustersWarning, match=r"only 5 clusters.*n >= 12000") as rec:
        model.fit(cov_type="clustered", clusters=few, random_state=0)
    assert {w.filename for w in rec if w.category is FewClustersWarning} == {__file__}
    enough = np.arange(len(df)) % 60
    with warnings.catch_warnings():
        warnings.simplefilter("error", FewClustersWarning)
        model.fit(cov_type="clustered", clusters=enough, random_state=0)


@pytest.mark.parametrize("route,formula", [("ols", "y ~ x"), ("logit", "d ~ x")])
def test_uneven_weights_warn_and_the_summary_reports_kish_n_eff(route, formula):
    """Kish's n_eff = (sum w)^2 / sum w^2 is in the summary; one weight of 1e12 among 1500
    rows (n_eff = 1) warns when the model is built, ordinary weights (uniform on [0.5, 2])
    do not."""
    df = _data(1500, seed=4)
    df["wt"] = np.random.default_rng(5).uniform(0.5, 2.0, len(df))
    build = getattr(pi.PrivateGMM, route)
    with warnings.catch_warnings():
        warnings.simplefilter("error", FewEffectiveRowsWarning)
        res = build(formula, df, mechanism=MECH, weights="wt").fit(random_state=0)
    w = df["wt"].to_numpy()
    n_eff = w.sum() ** 2 / (w @ w)
    assert 1200 < n_eff < 1450
    assert re.search(rf"Kish n_eff \(weights\): +{n_eff:.0f} of 1500 rows", str(res.summary()))
    df.loc[7, "wt"] = 1e12
    with pytest.warns(FewEffectiveRowsWarning, match=r"= 1\.0 of the 1500 rows.*below 200"):
        model = build(formula, df, mechanism=MECH, weights="wt")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", pi.exceptions.PrivinferWarning)  # a one-row logit
        res = model.fit(random_state=0)
    assert re.search(r"Kish n_eff \(weights\): +1 of 1500 rows", str(res.summary()))


def test_cluster_column_names_on_a_pandas_model_get_a_clear_error():
    # the Dask route reads clusters="col"; on pandas the labels themselves are passed,
    # and a name was reported as labels of "shape ()"
    data = _data().assign(k=np.arange(200) % 60)
    model = pi.PrivateGMM.ols("y ~ x + w", data, mechanism=MECH)
    for name in ("k", ["k"], ("k", "w")):
        with pytest.raises(ClusterError, match=r"column name.*clusters=data\['k'\]"):
            model.fit(cov_type="clustered", clusters=name)


def test_cluster_labels_as_a_pandas_series_are_aligned_by_index():
    """A Series (or DataFrame, two-way) of labels is matched to the data's rows by index, as
    pandas does: shuffling it changes nothing; plain arrays stay positional; labels whose
    index misses a row, or names one the data lack, are a ClusterError."""
    data = _data(600, seed=6).assign(k=np.arange(600) % 60, h=np.arange(600) % 55)
    data.index = pd.Index(np.arange(600) * 3 + 7)  # not a RangeIndex
    model = pi.PrivateGMM.ols("y ~ x + w", data, mechanism=MECH)

    def bse(clusters):
        return model.fit(cov_type="clustered", clusters=clusters, random_state=0).bse

    in_order = bse(data["k"])
    shuffled = data["k"].sample(frac=1, random_state=3)
    pd.testing.assert_series_equal(bse(shuffled), in_order)
    pd.testing.assert_series_equal(bse(data["k"].to_numpy()), in_order)
    # an array in another order is positional: different labels per row, other SEs
    assert not np.allclose(bse(shuffled.to_numpy()), in_order)
    two = data[["k", "h"]]
    pd.testing.assert_series_equal(bse(two.sample(frac=1, random_state=4)), bse(two))
    with pytest.raises(ClusterError, match=r"1 row\(s\) of the data have no label.*\[13\]"):
        bse(data["k"].drop(13))
    with pytest.raises(ClusterError, match=r"1 label\(s\) match no row.*\[-1\]"):
        bse(pd.concat([data["k"], pd.Series([0], index=[-1])]))
    with pytest.raises(ClusterError, match=r"to_numpy\(\)"):
        bse(data["k"].reset_index(drop=True))
    # the anderson_rubin route reads the same labels
    iv = pi.PrivateGMM.iv("y ~ [x ~ z]", data, mechanism=MECH)
    ar = [
        iv.anderson_rubin(cov_type="clustered", clusters=c, random_state=0).ar_test(1.0).stat
        for c in (data["k"], shuffled)
    ]
    assert ar[0] == pytest.approx(ar[1], rel=1e-12)
