"""Bad input for DPOT / DPDA."""

from __future__ import annotations

import builtins

import numpy as np
import pytest

pytest.importorskip("ot")
pytest.importorskip("dp_accounting")

from privinfer.exceptions import (
    DataMismatchError,
    MissingValueError,
    NotFittedError,
    TransportConvergenceError,
    UnknownCategoryError,
)
from privinfer.transport._pot import import_ot
from privinfer.transport.accounting import minibatch_privacy
from privinfer.transport.calibration import analytic_gaussian_sigma, theorem2_sigma
from privinfer.transport.da import DPDA, DPDASource, labels_from_counts
from privinfer.transport.dpot import (
    DPOT,
    DPOTSource,
    debiased_cost,
    draw_projection,
    solve_transport,
)

#: the seeded releases of this module are research runs on purpose
pytestmark = pytest.mark.filterwarnings("ignore::privinfer.exceptions.SeedReleaseWarning")

RNG = np.random.default_rng(0)
XS = RNG.normal(size=(20, 4))
YS = np.arange(20) % 2


@pytest.mark.parametrize("delta", [0.0, 1.0, -0.1, 1.5])
def test_delta_outside_unit_interval(delta):
    with pytest.raises(ValueError, match="'delta'"):
        DPOTSource(eps=1.0, delta=delta, ell=3).publish(XS)
    with pytest.raises(ValueError, match="'delta'"):
        theorem2_sigma(1.0, delta, 1.0)
    with pytest.raises(ValueError, match="'delta'"):
        analytic_gaussian_sigma(1.0, delta, 1.0)


@pytest.mark.parametrize("eps", [0.0, -1.0, float("nan"), True])
def test_eps_not_positive(eps):
    with pytest.raises(ValueError, match="'eps'"):
        DPOTSource(eps=eps, delta=1e-3, ell=3).publish(XS)
    with pytest.raises(ValueError, match="'eps'"):
        theorem2_sigma(eps, 1e-3, 1.0)


@pytest.mark.parametrize("ell", [0, -2, 2.5, True])
def test_ell_below_one(ell):
    with pytest.raises(ValueError, match="'ell'"):
        DPOTSource(eps=1.0, delta=1e-3, ell=ell).publish(XS)
    with pytest.raises(ValueError, match="'ell'"):
        draw_projection(4, ell)


def test_mismatched_dimensions():
    pub = DPOTSource(eps=1.0, delta=1e-3, ell=3, random_state=0).publish(XS)
    with pytest.raises(DataMismatchError, match="features"):
        DPOT().fit(pub, np.ones((5, 7)))
    with pytest.raises(DataMismatchError, match="ell"):
        debiased_cost(np.ones((3, 2)), np.ones((4, 4)), pub.projection, 1.0)
    with pytest.raises(DataMismatchError, match="2-D"):
        DPOTSource(eps=1.0, delta=1e-3, ell=3).publish(np.ones(5))
    with pytest.raises(DataMismatchError, match="one label per row"):
        DPDASource(1.0, 1e-3, 3, 1.0, classes=[0, 1]).publish(XS, YS[:5])


def test_record_relation_needs_clip_norm():
    with pytest.raises(ValueError, match="clip_norm"):
        DPOTSource(eps=1.0, delta=1e-3, ell=3, neighbour="record").publish(XS)
    with pytest.raises(ValueError, match="'neighbour'"):
        DPOTSource(eps=1.0, delta=1e-3, ell=3, neighbour="row").publish(XS)


@pytest.mark.parametrize(("bad", "name"), [
    ({"eps": -1.0}, "'eps'"),
    ({"delta": 0.7}, "'delta'"),
    ({"ell": 0}, "'ell'"),
    ({"neighbour": "row"}, "'neighbour'"),
    ({"neighbour": "record"}, "'clip_norm'"),
    ({"neighbour": "record", "clip_norm": -1.0}, "'clip_norm'"),
    ({"eps": 1e30}, "calibrated noise"),
])
def test_dpda_source_messages_name_dpda_source(bad, name):
    """The feature release is DPOT's, but the messages name the class the user called."""
    kwargs = {"eps": 1.0, "delta": 1e-3, "ell": 3, "eps_labels": 1.0, "classes": [0, 1],
              **bad}
    with pytest.raises(ValueError, match=name) as info:
        DPDASource(**kwargs).publish(XS, YS)
    assert "DPDASource" in str(info.value)
    assert "DPOTSource" not in str(info.value)


def test_source_labels_absent_from_histogram():
    with pytest.raises(UnknownCategoryError, match=r"\[2\]"):
        DPDASource(1.0, 1e-3, 3, 1.0, classes=[0, 1]).publish(XS, np.arange(20) % 3)


def test_target_labels_absent_from_histogram():
    pub = DPDASource(5.0, 1e-3, 3, 5.0, classes=[0, 1], random_state=0).publish(XS, YS)
    yt = np.full(20, -1)
    yt[0] = 7
    with pytest.raises(UnknownCategoryError, match="not classes of the published"):
        DPDA().fit(pub, XS, yt)


def test_dpda_not_fitted():
    with pytest.raises(NotFittedError, match="not fitted"):
        DPDA().predict(XS)


def test_nan_input_rejected():
    bad = XS.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        DPOTSource(eps=1.0, delta=1e-3, ell=3).publish(bad)


def test_emd_iteration_cap_raises_instead_of_returning_wrong_plan():
    C = np.random.default_rng(1).random((60, 60))
    with pytest.raises(TransportConvergenceError, match="max_iter"):
        solve_transport(C, max_iter=5)


def test_sinkhorn_needs_reg_and_method_is_checked():
    with pytest.raises(ValueError, match="reg"):
        solve_transport(np.ones((2, 2)), method="sinkhorn")
    with pytest.raises(ValueError, match="'method'"):
        solve_transport(np.ones((2, 2)), method="sinkhorn_log")


def test_accountant_arguments():
    with pytest.raises(ValueError, match="'sampling_probability'"):
        minibatch_privacy(1.0, 0.0, 3, 1e-5)
    with pytest.raises(ValueError, match="'n_steps'"):
        minibatch_privacy(1.0, 0.5, 0, 1e-5)


def test_pot_not_installed(monkeypatch):
    real_import = builtins.__import__

    def fake_import(name, *args, **kwargs):
        if name == "ot" or name.startswith("ot."):
            raise ImportError("No module named 'ot'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    with pytest.raises(ImportError, match=r"pip install privinfer\[transport\]"):
        import_ot()
    pub_rows = np.ones((2, 3))
    with pytest.raises(ImportError, match=r"pip install privinfer\[transport\]"):
        debiased_cost(pub_rows, np.ones((2, 4)), np.ones((4, 3)), 1.0)


@pytest.mark.parametrize(
    ("a", "b", "match"),
    [
        (np.ones(3), None, "shape"),
        (-np.ones(20) / 20, None, "nonnegative"),
        (np.full(20, np.nan), None, "nonnegative"),
        (np.full(20, 0.4), None, "same total mass"),
        ("abc", None, "numeric"),
        (None, np.zeros(4), "positive sum"),
    ],
)
def test_bad_marginal_weights(a, b, match):
    from privinfer.exceptions import WeightsError
    from privinfer.transport import dpot

    pub = DPOTSource(eps=1.0, delta=1e-3, ell=3).publish(XS)
    Xt = np.ones((4, XS.shape[1]))
    with pytest.raises(WeightsError, match=match):
        dpot(pub, Xt, a=a, b=b)
    with pytest.raises(ValueError, match=match):
        solve_transport(np.ones((20, 4)), a, b)


def test_cost_estimate_needs_two_columns_and_two_folds():
    from privinfer.transport import estimate_transport_cost

    Xt = np.ones((4, XS.shape[1]))
    with pytest.raises(DataMismatchError, match="ell >= 2"):
        estimate_transport_cost(DPOTSource(eps=1.0, delta=1e-3, ell=1).publish(XS), Xt)
    pub = DPOTSource(eps=1.0, delta=1e-3, ell=4).publish(XS)
    with pytest.raises(ValueError, match="'n_folds'"):
        estimate_transport_cost(pub, Xt, n_folds=1)
    with pytest.raises(ValueError, match="'level'"):
        estimate_transport_cost(pub, Xt, level=1.0)
    with pytest.raises(TypeError, match="PublishedSource"):
        estimate_transport_cost(XS, Xt)
    with pytest.raises(NotFittedError, match="fit"):
        DPOT().summary()


@pytest.mark.parametrize(
    ("C", "error", "match"),
    [
        (np.ones(4), DataMismatchError, "2-D cost matrix"),
        (np.zeros((0, 3)), DataMismatchError, "non-empty"),
        (np.array([[np.nan, 1.0], [1.0, 0.0]]), MissingValueError, "NaN or infinite"),
        (np.array([[np.inf, 1.0], [1.0, 0.0]]), MissingValueError, "NaN or infinite"),
        ("abc", DataMismatchError, "numeric"),
    ],
)
def test_bad_cost_matrix_is_named(C, error, match):
    # used to give a bare unpacking ValueError, a ZeroDivisionError, or a
    # TransportConvergenceError telling the user to raise max_iter
    with pytest.raises(error, match=match):
        solve_transport(C)
    with pytest.raises(error, match=match):
        solve_transport(C, method="sinkhorn", reg=1.0)


def test_minibatch_solve_needs_minibatches():
    # a single publication used to fail with "'PublishedSource' object has no attribute
    # 'batches'"
    from privinfer.transport import dpot_minibatch

    pub = DPOTSource(eps=1.0, delta=1e-3, ell=3).publish(XS)
    with pytest.raises(TypeError, match="PublishedMinibatches"):
        dpot_minibatch(pub, np.ones((4, XS.shape[1])))


def test_dpda_source_documents_the_delta_it_enforces():
    assert r"\delta \in (0, 1/2)" in DPDASource.__doc__
    assert r"\delta \in (0, 1)`" not in DPDASource.__doc__
    with pytest.raises(ValueError, match="'delta'"):
        DPDASource(1.0, 0.6, 3, 1.0, classes=[0, 1]).publish(XS, YS)


def test_dpda_mixed_type_labels_raise_data_mismatch():
    classes = np.array([0, "a"], dtype=object)
    with pytest.raises(DataMismatchError, match=r"'classes' parameter of DPDASource.*one kind"):
        DPDASource(1.0, 1e-3, 3, 1.0, classes=classes).publish(XS, np.resize(classes, 20))
    # unknown labels of several types are named, not compared
    ys = np.array([0, "a", 2.5, 1] * 5, dtype=object)
    with pytest.raises(UnknownCategoryError, match=r"\[2\.5, 'a'\] outside the public classes"):
        DPDASource(1.0, 1e-3, 3, 1.0, classes=[0, 1]).publish(XS, ys)


@pytest.mark.filterwarnings("ignore::privinfer.exceptions.TransportConvergenceWarning")
def test_dpda_string_classes_named_like_the_unknown_marker_are_not_guessed():
    ys = np.where(YS == 0, "-1", "b")
    pub = DPDASource(5.0, 1e-3, 3, 5.0, classes=["-1", "b"], random_state=0).publish(XS, ys)
    # numpy makes the -1 of this list the string '-1': class or unknown? refused
    with pytest.raises(DataMismatchError, match=r"'-1' is also a class.*object array"):
        DPDA().fit(pub, XS, ["b", -1] * 10)
    # an object array tells them apart: the integer -1 is unknown, '-1' the class
    da = DPDA().fit(pub, XS, np.array(["-1", -1] * 10, dtype=object))
    assert set(da.classes_.tolist()) == {"-1", "b"}
    int_pub = DPDASource(5.0, 1e-3, 3, 5.0, classes=[-1, 1], random_state=0).publish(
        XS, np.where(YS == 0, -1, 1)
    )
    with pytest.raises(DataMismatchError, match="-1 is also a class"):
        DPDA().fit(int_pub, XS, np.where(YS == 0, -1, 1))


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_labels_from_counts_refuses_non_finite_counts(bad):
    with pytest.raises(MissingValueError, match=r"noisy_counts holds 1 NaN or infinite"):
        labels_from_counts(np.array([3.0, bad, 2.0]), 5)


def test_labels_from_counts_refuses_a_2d_histogram():
    with pytest.raises(DataMismatchError, match=r"noisy_counts must be 1-D.*\(2, 2\)"):
        labels_from_counts(np.array([[3, 1], [0, 2]]), 6)
