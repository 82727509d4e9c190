"""Dask DataFrames as input of the treatment models: the same numbers as pandas.

Oracle: the pandas fit on the same released rows and the same fold labels. Every sum
over rows is the same up to its order, so estimates, standard errors and diagnostics
must agree to floating-point accuracy (1e-10), whatever the partitioning.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer.exceptions import FewEffectiveRowsWarning, FoldError, UnsupportedBackendError

dd = pytest.importorskip("dask.dataframe")
dask = pytest.importorskip("dask")

TOL = 1e-10
MODELS = [pi.PrivateATE, pi.PrivateATT, pi.PrivatePOM]


def _released(n: int = 3000, seed: int = 0) -> tuple[pd.DataFrame, pi.AlphaIdentity]:
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n)
    g = rng.choice(["a", "b", "c"], n)
    h = rng.choice(["u", "v"], n)
    d = rng.binomial(1, 0.3 + 0.4 * (x > 0), n)
    y = x + (g == "b") + d * (1 + 0.5 * x) + rng.normal(size=n)
    raw = pd.DataFrame(
        {"x": x, "g": g, "h": h, "d": d, "y": y, "cl": rng.integers(0, 60, n),
         "w": rng.uniform(0.5, 2.0, n)}
    )  # fmt: skip
    mech = pi.AlphaIdentity(
        0.7, {"x": pi.reference.Uniform(-1, 1), "g": pi.reference.Categorical(["a", "b", "c"])}
    )
    rel = mech.privatize(raw, public=["h", "d", "y", "cl", "w"], random_state=1)
    rel["f"] = rel["cl"] % 5  # a public fold column that keeps clusters whole
    return rel, mech


def _assert_same(a: pi.PrivateResults, b: pi.PrivateResults) -> None:
    np.testing.assert_allclose(b.params, a.params, rtol=0, atol=TOL)
    np.testing.assert_allclose(b.bse, a.bse, rtol=0, atol=TOL)
    da, db = a.diagnostics, b.diagnostics
    assert abs(da.outcome_r2 - db.outcome_r2) < TOL
    for k, v in da.riesz_second_moment.items():
        assert abs(v - db.riesz_second_moment[k]) < TOL * max(1.0, abs(v))
    for k, v in da.reference_error.items():
        assert abs(v - db.reference_error[k]) < TOL
    assert len(da.gram_repairs) == len(db.gram_repairs)
    assert b.nobs == a.nobs
    np.testing.assert_allclose(b.influence.to_numpy(), a.influence.to_numpy(), rtol=0, atol=TOL)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("options", [{}, {"cluster": "cl", "weights": "w"}])
def test_dask_equals_pandas_on_fold_column(model, options):
    rel, mech = _released()
    formula = "y ~ d | x + C(g) + C(h)"
    a = model.from_formula(formula, rel, mechanism=mech, degree=2, **options).fit(
        random_state=0, folds="f"
    )
    ddf = dd.from_pandas(rel, npartitions=7)
    b = model.from_formula(formula, ddf, mechanism=mech, degree=2, **options).fit(
        random_state=0, folds="f"
    )
    _assert_same(a, b)
    assert b.summary().as_text() == a.summary().as_text()


def test_dask_kish_n_eff_of_the_weights_comes_from_partition_sums():
    """Oracle: (sum w)^2 / sum w^2 of the pandas column; a dominant weight warns on Dask
    when the model is built."""
    rel, mech = _released()
    w = rel["w"].to_numpy()
    ddf = dd.from_pandas(rel, npartitions=7)
    model = pi.PrivateATE.from_formula("y ~ d | x", ddf, mechanism=mech, weights="w")
    assert abs(model.inputs.weights_n_eff - w.sum() ** 2 / (w @ w)) < 1e-9
    spiked = dd.from_pandas(rel.assign(w=np.where(np.arange(len(rel)) == 3, 1e12, w)), 7)
    with pytest.warns(FewEffectiveRowsWarning, match=r"= 1\.0 of the 3000 rows"):
        pi.PrivateATE.from_formula("y ~ d | x", spiked, mechanism=mech, weights="w")


@pytest.mark.parametrize("model", MODELS)
def test_dask_one_dominant_weight_gives_the_pandas_standard_error(model):
    """One weight of 1e12 among weights near 1: the influence standard error is pandas'.

    The other rows' normalised weights are about 1e-9 and their transformed scores about
    1e9, so partition moments about the partitions' row-count-weighted centres held terms
    of 1e20 whose cancellation gave a negative variance (a NaN SE) on Dask.
    """
    rel, mech = _released()
    spiked = rel.assign(w=np.where(np.arange(len(rel)) == 3, 1e12, rel["w"]))
    opts = {"weights": "w", "variance": "influence"}
    fits = []
    for frame in (spiked, dd.from_pandas(spiked, npartitions=7)):
        with pytest.warns(FewEffectiveRowsWarning):
            m = model.from_formula("y ~ d | x", frame, mechanism=mech, **opts)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the overlap and noise warnings of this design
            fits.append(m.fit(random_state=0, folds="f"))
    a, b = fits
    assert np.isfinite(b.bse).all() and b.bse.iloc[0] > 0.01
    np.testing.assert_allclose(b.params, a.params, rtol=0, atol=TOL)
    np.testing.assert_allclose(b.bse, a.bse, rtol=1e-8, atol=1e-12)


def test_dask_drawn_folds_are_the_pandas_fits_on_those_folds():
    """Dask draws folds per partition: each repeated split is the pandas fit on its folds.

    Oracle: the folds that the Dask fit draws for split r (child stream r + 1 of the
    fit's random state, as the fit spawns them) given to a pandas fit as labels.
    """
    from privinfer._validation import spawn_generators

    rel, mech = _released()
    opts = {"n_rep": 3, "weights": "w", "variance": "influence"}
    ddf = dd.from_pandas(rel, npartitions=4)
    model = pi.PrivateATE.from_formula("y ~ d | x + C(g)", ddf, mechanism=mech, degree=2, **opts)
    b = model.fit(5)
    streams = spawn_generators(5, 4)
    reps = []
    for r in range(3):
        labels = model._rows.fold_array(model._rows.draw_split(5, streams[r + 1]))
        # stratified by treatment over the whole frame: every fold within one row per arm
        # and partition of its share
        for k in range(2):
            counts = np.bincount(labels[rel["d"].to_numpy() == k], minlength=5)
            assert counts.max() - counts.min() <= 1
        one = {**opts, "n_rep": 1}
        a = pi.PrivateATE.from_formula("y ~ d | x + C(g)", rel, mechanism=mech, degree=2, **one)
        reps.append(a.fit(5, folds=labels).params.iloc[0])
    np.testing.assert_allclose(b.rep_params.iloc[:, 0], reps, rtol=0, atol=TOL)
    np.testing.assert_allclose(b.params.iloc[0], np.median(reps), rtol=0, atol=TOL)
    # reproducible from the random state, and another state draws other folds
    np.testing.assert_array_equal(model.fit(5).rep_params, b.rep_params)
    assert not np.allclose(model.fit(6).rep_params, b.rep_params)


def test_dask_clustered_drawn_folds_equal_pandas():
    """Whole clusters are dealt to folds from per-cluster counts: the pandas folds exactly."""
    rel, mech = _released()
    a = pi.PrivateATT.from_formula("y ~ d | x + C(g)", rel, mechanism=mech, degree=2,
                                   cluster="cl").fit(3)  # fmt: skip
    ddf = dd.from_pandas(rel, npartitions=5)
    b = pi.PrivateATT.from_formula("y ~ d | x + C(g)", ddf, mechanism=mech, degree=2,
                                   cluster="cl").fit(3)  # fmt: skip
    _assert_same(a, b)


def test_dask_two_way_clusters_equal_pandas():
    rel, mech = _released()
    rel["cl2"] = rel["cl"] % 7 + 10 * (rel["h"] == "u")
    opts = {"cluster": ["cl", "cl2"], "weights": "w"}
    a = pi.PrivateATE.from_formula("y ~ d | x", rel, mechanism=mech, degree=2, **opts)
    ddf = dd.from_pandas(rel, npartitions=4)
    b = pi.PrivateATE.from_formula("y ~ d | x", ddf, mechanism=mech, degree=2, **opts)
    ra, rb = a.fit(0, folds="f"), b.fit(0, folds="f")
    _assert_same(ra, rb)
    np.testing.assert_array_equal(np.asarray(rb.clusters), ra.clusters)
    assert rb.summary().as_text() == ra.summary().as_text()


def test_fold_column_equals_fold_array_pandas():
    rel, mech = _released()
    model = pi.PrivateATE.from_formula("y ~ d | x", rel, mechanism=mech, degree=2)
    a = model.fit(random_state=0, folds="f")
    b = model.fit(random_state=0, folds=rel["f"].to_numpy())
    assert a.params.equals(b.params)


def test_partitions_without_treated_units_and_empty_partitions():
    rel, mech = _released()
    rel = rel.sort_values("d", kind="stable")  # the first partitions hold controls only
    cut = np.linspace(0, len(rel), 6).astype(int)
    pieces = [rel.iloc[cut[i] : cut[i + 1]] for i in range(5)]
    pieces.insert(2, rel.iloc[:0])  # an empty partition in the middle ...
    pieces.append(rel.iloc[:0])  # ... and one at the end
    ddf = dd.from_delayed([dask.delayed(p) for p in pieces], meta=rel.iloc[:0])
    assert (ddf.d.sum().compute() > 0) and (pieces[0].d.sum() == 0)
    for model in MODELS:
        a = model.from_formula("y ~ d | x + C(g)", rel, mechanism=mech, degree=2).fit(0, folds="f")
        b = model.from_formula("y ~ d | x + C(g)", ddf, mechanism=mech, degree=2).fit(0, folds="f")
        _assert_same(a, b)


def test_private_categorical_levels_missing_from_partitions():
    rel, mech = _released()
    rel = rel.sort_values("g", kind="stable")  # each partition sees one or two levels of g
    ddf = dd.from_pandas(rel, npartitions=6, sort=False)
    levels = ddf.map_partitions(lambda p: pd.Series([p["g"].nunique()])).compute()
    assert levels.min() < 3
    a = pi.PrivatePOM.from_formula("y ~ d | x + C(g)", rel, mechanism=mech, degree=2).fit(
        0, folds="f"
    )
    b = pi.PrivatePOM.from_formula("y ~ d | x + C(g)", ddf, mechanism=mech, degree=2).fit(
        0, folds="f"
    )
    _assert_same(a, b)


def test_dask_fold_column_errors():
    rel, mech = _released()
    ddf = dd.from_pandas(rel, npartitions=3)
    model = pi.PrivateATE.from_formula("y ~ d | x", ddf, mechanism=mech, degree=2)
    with pytest.raises(FoldError, match="not a column"):
        model.fit(folds="nope")
    with pytest.raises(FoldError, match="covered by the mechanism"):
        model.fit(folds="x")
    with pytest.raises(FoldError, match="integer labels"):
        model.fit(folds="y")
    clustered = pi.PrivateATE.from_formula("y ~ d | x", ddf, mechanism=mech, degree=2, cluster="h")
    with pytest.raises(FoldError, match="split"):
        clustered.fit(folds="f")


@pytest.mark.parametrize("options", [{"riesz": "propensity"}, {"outcome_model": "kernel"}])
def test_dask_refuses_options_needing_all_rows(options):
    rel, mech = _released(n=500)
    ddf = dd.from_pandas(rel, npartitions=2)
    with pytest.raises(UnsupportedBackendError, match="not available on Dask"):
        pi.PrivateATE.from_formula("y ~ d | x", ddf, mechanism=mech, **options)


def test_dask_checks_private_columns_in_every_partition():
    rel, mech = _released(n=500)
    rel.loc[rel.index[-1], "x"] = np.nan  # in the last partition only
    ddf = dd.from_pandas(rel, npartitions=3)
    with pytest.raises(pi.exceptions.MissingValueError):
        pi.PrivateATE.from_formula("y ~ d | x", ddf, mechanism=mech, degree=2)


def test_dask_input_is_not_computed_as_a_whole(monkeypatch):
    """The private design is only built per partition: no task sees more rows than one."""
    from privinfer.models import _backend

    rel, mech = _released()
    seen: list[int] = []
    original = _backend._partition_inputs

    def spy(part, plan, *, check):
        seen.append(len(part))
        return original(part, plan, check=check)

    monkeypatch.setattr(_backend, "_partition_inputs", spy)
    ddf = dd.from_pandas(rel, npartitions=5)
    with dask.config.set(scheduler="synchronous"):
        pi.PrivateATE.from_formula("y ~ d | x + C(g)", ddf, mechanism=mech, degree=2).fit(
            0, folds="f"
        )
    assert seen and max(seen) <= int(np.ceil(len(rel) / 5))


def test_functional_refuses_dask():
    rel, mech = _released(n=300)
    ddf = dd.from_pandas(rel, npartitions=2)
    with pytest.raises(UnsupportedBackendError, match="PrivateFunctional"):
        pi.PrivateFunctional(
            ddf, outcome="y", treatment="d", covariates="x", mechanism=mech,
            functional=lambda v, mu: mu[:, 1],
        )  # fmt: skip


def test_distributed_cluster_gives_the_same_numbers():
    """Worker processes (every task pickled) reproduce the pandas fit."""
    distributed = pytest.importorskip("distributed")
    rel, mech = _released(n=1500)
    a = pi.PrivateATT.from_formula("y ~ d | x + C(g)", rel, mechanism=mech, degree=2, cluster="cl")
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster),
    ):
        ddf = dd.from_pandas(rel, npartitions=3)
        b = pi.PrivateATT.from_formula(
            "y ~ d | x + C(g)", ddf, mechanism=mech, degree=2, cluster="cl"
        )
        _assert_same(a.fit(0, folds="f"), b.fit(0, folds="f"))


def test_importing_privinfer_does_not_import_dask():
    import subprocess
    import sys

    code = "import sys, privinfer; print(any(m.split('.')[0] == 'dask' for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_public_categorical_and_bool_covariates_split_across_partitions():
    rng = np.random.default_rng(3)
    n = 2000
    x, d, h = rng.uniform(-1, 1, n), rng.integers(0, 2, n), rng.choice(["p", "q", "r"], n)
    raw = pd.DataFrame(
        {"x": x, "d": d, "y": x + (h == "q") + d + rng.normal(size=n),
         "h": pd.Categorical(h, categories=["r", "q", "p"]), "b": rng.random(n) < 0.5}
    )  # fmt: skip
    mech = pi.AlphaIdentity(0.8, {"x": pi.reference.Uniform(-1, 1)})
    rel = mech.privatize(raw, public=["d", "y", "h", "b"], random_state=1).sort_values("h")
    rel["f"] = np.arange(n) % 5  # the same folds for both backends
    ddf = dd.from_pandas(rel, npartitions=5, sort=False)  # most partitions: one level of h
    a = pi.PrivatePOM.from_formula("y ~ d | x + C(h) + b", rel, degree=2).fit(0, folds="f")
    b = pi.PrivatePOM.from_formula("y ~ d | x + C(h) + b", ddf, mechanism=mech, degree=2).fit(
        0, folds="f"
    )
    _assert_same(a, b)


def test_gmm_computes_dask_input_to_pandas():
    """PrivateGMM has no Dask backend yet: the frame is converted once, with equal results."""
    rel, mech = _released(n=600)
    ddf = dd.from_pandas(rel, npartitions=2)
    a = pi.PrivateGMM.ols("y ~ x + d", rel, mechanism=mech).fit(random_state=0)
    b = pi.PrivateGMM.ols("y ~ x + d", ddf, mechanism=mech).fit(random_state=0)
    np.testing.assert_allclose(b.params, a.params, rtol=0, atol=TOL)


@pytest.mark.parametrize("model", MODELS)
def test_dask_two_way_clusters_and_weights_reduce_like_pandas(model):
    """Two-way cluster-robust SEs with weights come from per-cluster sums on Dask."""
    rel, mech = _released()
    opts = {"cluster": ["cl", "h"], "weights": "w"}
    a = model.from_formula("y ~ d | x + C(g)", rel, mechanism=mech, degree=2, **opts).fit(
        random_state=2, folds="f"
    )
    ddf = dd.from_pandas(rel, npartitions=5)
    b = model.from_formula("y ~ d | x + C(g)", ddf, mechanism=mech, degree=2, **opts).fit(
        random_state=2, folds="f"
    )
    _assert_same(a, b)
    np.testing.assert_allclose(b.cov.to_numpy(), a.cov.to_numpy(), rtol=0, atol=TOL)


def test_dask_influence_values_stay_lazy():
    """The fit reduces the influence values; they are computed only when asked for."""
    from privinfer.models._reduce import LazyInfluence

    rel, mech = _released()
    a = pi.PrivatePOM.from_formula("y ~ d | x", rel, mechanism=mech, degree=2).fit(3, folds="f")
    ddf = dd.from_pandas(rel, npartitions=3)
    b = pi.PrivatePOM.from_formula("y ~ d | x", ddf, mechanism=mech, degree=2).fit(3, folds="f")
    lazy = b._record.influence
    assert isinstance(lazy, LazyInfluence) and lazy.shape == (len(rel), 2)
    arr = lazy.to_dask()
    assert type(arr).__module__.startswith("dask")
    np.testing.assert_allclose(arr.compute(), a.influence.to_numpy(), rtol=0, atol=TOL)
    one = b[["E[Y(1)]"]]  # a selection keeps the influence values lazy
    assert isinstance(one._record.influence, LazyInfluence)
    np.testing.assert_allclose(one.bse, a.bse[["E[Y(1)]"]], rtol=0, atol=TOL)
    np.testing.assert_allclose(
        one.influence.to_numpy(), a.influence[["E[Y(1)]"]].to_numpy(), rtol=0, atol=TOL
    )


@pytest.mark.filterwarnings("ignore::privinfer.exceptions.NuisanceNoiseWarning")
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("options", [{}, {"degree": "cv", "cluster": "cl", "weights": "w"}])
def test_dask_adaptive_sieve_equals_pandas(model, options):
    """The default (adaptive) basis on Dask: its knots come from the same released rows."""
    rel, mech = _released(n=4000, seed=3)
    formula = "y ~ d | x + C(g) + C(h)"
    a = model.from_formula(formula, rel, mechanism=mech, **options).fit(random_state=4, folds="f")
    ddf = dd.from_pandas(rel, npartitions=6)
    b = model.from_formula(formula, ddf, mechanism=mech, **options).fit(random_state=4, folds="f")
    _assert_same(a, b)
    assert b.summary().as_text() == a.summary().as_text()


def test_quantile_rows_give_the_quantiles_of_all_rows():
    """Gathering only quantile_rows(n) leaves the deconvolved quantiles unchanged."""
    from privinfer.nuisance.sieve import deconvolved_quantiles, quantile_rows

    rng = np.random.default_rng(0)
    ref = np.linspace(-1, 1, 257)
    probs = np.array([0.01, 0.3, 0.5, 0.99])
    for n in (1_000, 100_001, 199_999, 250_001):
        z = rng.normal(size=n)
        full = deconvolved_quantiles(z, ref, np.full(257, 1 / 257), 0.6, probs)
        part = deconvolved_quantiles(z[quantile_rows(n)], ref, np.full(257, 1 / 257), 0.6, probs)
        np.testing.assert_array_equal(part, full)


def test_dask_results_combine_like_pandas():
    """``a - b`` of two selections uses the (lazy) influence values of a Dask fit."""
    rel, mech = _released()
    a = pi.PrivatePOM.from_formula("y ~ d | x", rel, mechanism=mech, degree=2).fit(3, folds="f")
    ddf = dd.from_pandas(rel, npartitions=3)
    b = pi.PrivatePOM.from_formula("y ~ d | x", ddf, mechanism=mech, degree=2).fit(3, folds="f")
    da_, db_ = a[["E[Y(1)]"]] - a[["E[Y(0)]"]], b[["E[Y(1)]"]] - b[["E[Y(0)]"]]
    np.testing.assert_allclose(db_.params, da_.params, rtol=0, atol=TOL)
    np.testing.assert_allclose(db_.bse, da_.bse, rtol=0, atol=TOL)


@pytest.mark.parametrize("options", [{}, {"cluster": "cl"}])
def test_dask_results_save_and_load_without_their_lazy_rows(tmp_path, options):
    """save() of a Dask fit failed ("Can't pickle local object 'DaskRows.lazy_influence.
    <locals>.make'"); the file now keeps estimates and covariance, never the recipe that
    reads the released frame, and row-level uses after load say why they cannot run."""
    rel, mech = _released(n=1500)
    ddf = dd.from_pandas(rel, npartitions=3)
    b = pi.PrivatePOM.from_formula("y ~ d | x", ddf, mechanism=mech, degree=2, **options).fit(
        3, folds="f"
    )
    path = tmp_path / "dask.pkl"
    b.save(path)
    back = pi.PrivateResults.load(path)
    pd.testing.assert_frame_equal(back.conf_int(), b.conf_int())
    assert back.summary().as_text() == b.summary().as_text()
    assert back.wald_test("E[Y(1)] = E[Y(0)]").statistic == pytest.approx(
        b.wald_test("E[Y(1)] = E[Y(0)]").statistic, rel=1e-12
    )
    for use in (lambda r: r.influence, lambda r: r.bootstrap(n_boot=10),
                lambda r: r[["E[Y(1)]"]] - r[["E[Y(0)]"]]):  # fmt: skip
        with pytest.raises(UnsupportedBackendError, match="nor saved with its results"):
            use(back)


def _last_partition_bad(rel: pd.DataFrame, column: str, value) -> pd.DataFrame:
    bad = rel.copy()
    if isinstance(bad[column].dtype, pd.CategoricalDtype):
        bad[column] = bad[column].cat.add_categories([value])
    elif value is np.nan and bad[column].dtype.kind in "iu":
        bad[column] = bad[column].astype(float)
    bad.loc[bad.index[-1], column] = value
    return bad


@pytest.mark.parametrize(
    ("column", "value", "options", "error"),
    [
        ("y", np.nan, {}, pi.exceptions.MissingValueError),
        ("y", np.inf, {}, pi.exceptions.MissingValueError),
        ("x", 5.0, {}, pi.exceptions.OutOfSupportError),
        ("g", "zz", {}, pi.exceptions.UnknownCategoryError),
        ("w", -1.0, {"weights": "w"}, pi.exceptions.WeightsError),
        ("w", np.nan, {"weights": "w"}, pi.exceptions.MissingValueError),
        ("cl", np.nan, {"cluster": "cl"}, pi.exceptions.ClusterError),
        ("h", np.nan, {}, pi.exceptions.MissingValueError),
    ],
)
def test_a_bad_value_in_the_last_partition_only_raises_as_pandas(column, value, options, error):
    """Every partition is checked, by the pandas checks: the same named error."""
    rel, mech = _released(n=600)
    bad = _last_partition_bad(rel, column, value)
    formula = "y ~ d | x + C(g) + C(h)"
    with pytest.raises(error):
        pi.PrivateATE.from_formula(formula, bad, mechanism=mech, degree=2, **options)
    ddf = dd.from_pandas(bad, npartitions=4)
    first = ddf.partitions[0].compute()[column].astype(object)  # the bad row is not in it
    assert (first == rel[column].iloc[: len(first)].astype(object)).all()
    with pytest.raises(error):
        pi.PrivateATE.from_formula(formula, ddf, mechanism=mech, degree=2, **options)


def test_a_fold_label_missing_from_all_but_the_last_partition_is_checked():
    rel, mech = _released(n=600)
    rel["f"] = np.where(np.arange(len(rel)) < 450, rel["f"] % 4, 4)  # label 4: last rows only
    ddf = dd.from_pandas(rel, npartitions=4)
    model = pi.PrivateATE.from_formula("y ~ d | x", ddf, mechanism=mech, degree=2)
    model.fit(0, folds="f")  # every label used: fine
    rel["f"] = rel["f"].where(rel["f"] < 4, 7)  # an out-of-range label in the last partition
    ddf = dd.from_pandas(rel, npartitions=4)
    model = pi.PrivateATE.from_formula("y ~ d | x", ddf, mechanism=mech, degree=2)
    with pytest.raises(FoldError, match=r"one label in 0\.\.4"):
        model.fit(0, folds="f")


def test_string_dtype_public_level_absent_from_the_first_rows():
    """A public string level seen only in the last partition is coded (as pandas codes it)."""
    rel, mech = _released(n=3000)
    rel["s"] = pd.array(np.where(np.arange(len(rel)) < 2500, "early", "late"), dtype="string")
    rel["y"] = rel["y"] + 2.0 * (rel["s"] == "late").to_numpy()
    formula = "y ~ d | x + C(s)"
    a = pi.PrivateATE.from_formula(formula, rel, mechanism=mech, degree=2).fit(0, folds="f")
    ddf = dd.from_pandas(rel, npartitions=4)
    assert str(ddf._meta["s"].dtype) == "string"
    assert "late" not in set(ddf.partitions[0].compute()["s"])
    b = pi.PrivateATE.from_formula(formula, ddf, mechanism=mech, degree=2).fit(0, folds="f")
    _assert_same(a, b)


def test_integer_public_level_inside_c_absent_from_the_first_rows():
    """C(k) of a public integer column: its levels were not scanned (only non-numeric
    columns were), so a level seen only in the last partition was coded as no level."""
    rel, mech = _released(n=3000)
    rel["k"] = np.where(np.arange(len(rel)) < 2500, np.arange(len(rel)) % 2, 2)
    rel["y"] = rel["y"] + 2.0 * (rel["k"] == 2).to_numpy()
    formula = "y ~ d | x + C(k)"
    a = pi.PrivateATE.from_formula(formula, rel, mechanism=mech, degree=2).fit(0, folds="f")
    ddf = dd.from_pandas(rel, npartitions=4)
    assert 2 not in set(ddf.partitions[0].compute()["k"])
    b = pi.PrivateATE.from_formula(formula, ddf, mechanism=mech, degree=2).fit(0, folds="f")
    _assert_same(a, b)


def test_nothing_of_the_data_size_stays_on_the_client():
    """The model and its fit keep no array with a row per released row (nor n x anything)."""
    rel, mech = _released(n=3000)
    ddf = dd.from_pandas(rel, npartitions=6)
    model = pi.PrivateATE.from_formula(
        "y ~ d | x + C(g) + C(h)", ddf, mechanism=mech, degree=2, variance="influence"
    )
    res = model.fit(0)

    def arrays(obj, seen, depth=0):
        if id(obj) in seen or depth > 6:
            return
        seen.add(id(obj))
        if isinstance(obj, np.ndarray):
            yield obj
        elif isinstance(obj, (pd.Series, pd.DataFrame)):
            yield obj.to_numpy()
        elif isinstance(obj, dict):
            for v in obj.values():
                yield from arrays(v, seen, depth + 1)
        elif isinstance(obj, (list, tuple)):
            for v in obj:
                yield from arrays(v, seen, depth + 1)
        elif hasattr(obj, "__dict__") and not isinstance(obj, type):
            if type(obj).__module__.startswith("privinfer"):
                yield from arrays(vars(obj), seen, depth + 1)
        elif hasattr(obj, "__dataclass_fields__"):
            for f in obj.__dataclass_fields__:
                yield from arrays(getattr(obj, f), seen, depth + 1)

    found = list(arrays(model, set())) + list(arrays(res._record, set()))
    assert found  # the walk reaches the model's arrays
    sizes = [a.shape[0] for a in found if a.ndim]
    assert max(sizes) < len(rel) // 6, sizes  # at most a partition's share of anything
    assert model.inputs.y.size == 0 and model.inputs.n_obs == len(rel)
