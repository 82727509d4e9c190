"""Bad input to the inference extras raises named errors."""

import numpy as np
import pandas as pd
import pytest

import privinfer as pi
from privinfer.exceptions import (
    BootstrapError,
    ClusterError,
    DataMismatchError,
    FoldError,
    MechanismMismatchError,
    MissingValueError,
    WeightsError,
)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(0)
    n = 600
    x = rng.uniform(-1, 1, n)
    d = (rng.random(n) < 0.5).astype(int)
    return pd.DataFrame({"x": x, "d": d, "y": d + x + rng.normal(size=n),
                         "g": rng.integers(0, 30, n), "w": rng.uniform(0.5, 2, n)})


@pytest.fixture(scope="module")
def mech():
    return pi.AlphaIdentity(1.0, {"x": pi.reference.Uniform(-1, 1)})


@pytest.fixture(scope="module")
def res(data, mech):
    return pi.PrivateATE.from_formula("y ~ d | x", data, mechanism=mech).fit(random_state=0)


def test_unknown_bootstrap_method(res):
    with pytest.raises(BootstrapError, match="'normal', 'bayes', 'wild'"):
        res.bootstrap("gaussian", n_boot=10)
    with pytest.raises(ValueError, match="n_boot"):
        res.bootstrap("normal", n_boot=0)


def test_joint_intervals_and_romano_wolf_need_a_bootstrap(res):
    with pytest.raises(BootstrapError, match=r"results.bootstrap\("):
        res.conf_int(joint=True)
    with pytest.raises(BootstrapError, match="romano-wolf"):
        res.p_adjust("romano-wolf")
    with pytest.raises(ValueError, match="multipletests"):
        res.p_adjust("no-such-method")


@pytest.mark.parametrize("method", [None, 3, ["holm"]])
def test_p_adjust_method_that_is_not_a_string(res, method):
    # statsmodels' multipletests called method.lower(): a bare AttributeError
    with pytest.raises(ValueError, match=r"'method' parameter of PrivateResults.p_adjust"):
        res.p_adjust(method)


@pytest.mark.parametrize("key", [0, 1.5, None, [["ATE"]], ["ATE", 0]])
def test_selecting_parameters_by_anything_but_their_names(res, key):
    # res[0] raised a bare TypeError ('int' object is not iterable)
    with pytest.raises(KeyError, match=r"not among the parameters \['ATE'\]"):
        res[key]


def test_selecting_no_parameters(res):
    # res[[]] returned results with no parameters, whose summary printed an empty table
    with pytest.raises(KeyError, match="No parameters selected"):
        res[[]]


def test_fewer_than_two_clusters(data, mech):
    with pytest.raises(ClusterError, match="at least 2 clusters"):
        pi.PrivateATE.from_formula("y ~ d | x", data.assign(g=1), mechanism=mech, cluster="g")


def test_bad_cluster_columns(data, mech):
    with pytest.raises(ClusterError, match="not in the data"):
        pi.PrivateATE.from_formula("y ~ d | x", data, mechanism=mech, cluster="school")
    with pytest.raises(ClusterError, match="must be public"):
        pi.PrivateATE.from_formula("y ~ d | x", data, mechanism=mech, cluster="x")
    with pytest.raises(ClusterError, match="missing label"):
        bad = data.assign(g=data["g"].astype(float).where(data.index > 0))
        pi.PrivateATE.from_formula("y ~ d | x", bad, mechanism=mech, cluster="g")
    with pytest.raises(ClusterError, match="one or two"):
        pi.PrivateATE.from_formula("y ~ d | x", data, mechanism=mech, cluster=["g", "g", "g"])


def test_fewer_clusters_than_folds_and_folds_that_split_clusters(data, mech):
    few = data.assign(g=np.arange(len(data)) % 3)
    with pytest.raises(ClusterError, match="n_folds=5"):
        pi.PrivateATE.from_formula("y ~ d | x", few, mechanism=mech, cluster="g").fit(
            random_state=0
        )
    model = pi.PrivateATE.from_formula("y ~ d | x", data, mechanism=mech, cluster="g")
    with pytest.raises(FoldError, match="split"):
        model.fit(random_state=0, folds=np.arange(len(data)) % 5)


def test_negative_or_all_zero_weights(data, mech):
    with pytest.raises(WeightsError, match="negative"):
        pi.PrivateATE.from_formula("y ~ d | x", data.assign(w=data["w"] - 1.0), mechanism=mech,
                                   weights="w")
    with pytest.raises(WeightsError, match="zero everywhere"):
        pi.PrivateATT.from_formula("y ~ d | x", data.assign(w=0.0), mechanism=mech,
                                   weights="w")


def test_weights_with_nan(data, mech):
    bad = data.assign(w=data["w"].where(data.index > 5))
    with pytest.raises(MissingValueError, match="weights column 'w'"):
        pi.PrivatePOM.from_formula("y ~ d | x", bad, mechanism=mech, weights="w")


def test_bad_weights_columns(data, mech):
    with pytest.raises(WeightsError, match="name a column"):
        pi.PrivateATE.from_formula("y ~ d | x", data, mechanism=mech, weights="weight")
    with pytest.raises(WeightsError, match="must be public"):
        pi.PrivateATE.from_formula("y ~ d | x", data, mechanism=mech, weights="x")
    with pytest.raises(WeightsError, match="numeric"):
        pi.PrivateATE.from_formula("y ~ d | x", data.assign(w="a"), mechanism=mech,
                                   weights="w")
    with pytest.raises(WeightsError, match="riesz='auto'"):
        pi.PrivateATE.from_formula("y ~ d | x", data, mechanism=mech, weights="w",
                                   riesz="propensity")


def test_combining_results_from_different_rows(data, mech, res):
    other = pi.PrivateATE.from_formula("y ~ d | x", data.iloc[:500], mechanism=mech).fit(
        random_state=0
    )
    with pytest.raises(DataMismatchError, match="same rows"):
        _ = res - other
    weighted = pi.PrivateATE.from_formula("y ~ d | x", data, mechanism=mech, weights="w").fit(
        random_state=0
    )
    with pytest.raises(DataMismatchError, match="fingerprints"):
        _ = res - weighted
    with pytest.raises(KeyError, match="ATT"):
        _ = res["ATT"]
    with pytest.raises(DataMismatchError, match="no results"):
        pi.compare([])


@pytest.mark.parametrize("bad", ["single", None, 3, "text"])
def test_compare_needs_a_mapping_or_a_list(res, bad):
    results = res if bad == "single" else bad
    with pytest.raises(DataMismatchError, match="mapping of labels to results"):
        pi.compare(results)


def test_planner_bad_input(data, mech):
    with pytest.raises(MechanismMismatchError, match="AlphaIdentity"):
        pi.plan(data, outcome="y", treatment="d", covariates="x", mechanism={"x": None})
    with pytest.raises(ValueError, match="alpha"):
        pi.plan(data, outcome="y", treatment="d", covariates="x", mechanism=mech,
                alphas=[1.0, 1.5])
    with pytest.raises(ValueError, match="half_width"):
        pi.plan(data, outcome="y", treatment="d", covariates="x", mechanism=mech,
                half_width=-1.0)
