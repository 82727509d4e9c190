"""forest_plot takes one fit, a list, a dict or a frame, and never clips its labels."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

import privinfer as pi  # noqa: E402
from privinfer import plotting  # noqa: E402
from privinfer.exceptions import DataMismatchError  # noqa: E402


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def fits():
    rng = np.random.default_rng(0)
    n = 1200
    x = rng.uniform(-1, 1, n)
    d = (rng.random(n) < 1 / (1 + np.exp(-x))).astype(int)
    raw = pd.DataFrame({"x": x, "d": d, "y": d + x + rng.normal(size=n)})
    mech = pi.AlphaIdentity(0.8, {"x": pi.reference.Uniform(-1, 1)})
    released = mech.privatize(raw, public=["d", "y"], random_state=1)
    ate = pi.PrivateATE.from_formula("y ~ d | x", released, mechanism=mech).fit(random_state=2)
    att = pi.PrivateATT.from_formula("y ~ d | x", released, mechanism=mech).fit(random_state=2)
    return ate, att


def _labels(ax):
    return [t.get_text() for t in ax.get_yticklabels()]


def test_single_results_object(fits):
    ate, _ = fits
    ax = plotting.forest_plot(ate)
    assert _labels(ax) == ["PrivateATE"]
    # the drawn point is the estimate
    x, _y = ax.lines[0].get_data()
    assert float(x[0]) == pytest.approx(float(ate.params.iloc[0]))


def test_list_of_results_labelled_by_model(fits):
    ate, att = fits
    ax = plotting.forest_plot([ate, att])
    assert _labels(ax) == ["PrivateATE", "PrivateATT"]
    ax = plotting.forest_plot([ate, ate])
    assert _labels(ax) == ["PrivateATE (1)", "PrivateATE (2)"]


def test_list_of_pairs_and_dict_agree(fits):
    ate, att = fits
    a = plotting.forest_plot([("private ATE", ate), ("private ATT", att)])
    b = plotting.forest_plot({"private ATE": ate, "private ATT": att})
    assert _labels(a) == _labels(b) == ["private ATE", "private ATT"]
    np.testing.assert_allclose(a.lines[0].get_xdata(), b.lines[0].get_xdata())


def test_results_frame_accepts_the_same_inputs(fits):
    ate, att = fits
    one = plotting.results_frame(ate)
    assert one["label"].tolist() == ["PrivateATE"]
    both = plotting.results_frame([ate, att])
    assert both["param"].tolist() == ["ATE", "ATT"]
    ci = att.conf_int()
    assert both.loc[1, "lower"] == pytest.approx(float(ci.iloc[0]["lower"]))


def test_a_frame_from_results_frame_is_labelled_at_its_own_level(fits):
    # forest_plot(results_frame(res, alpha=0.1)) drew 90% intervals labelled "95% CI"
    ate, att = fits
    frame = plotting.results_frame([ate, att], alpha=0.1)
    assert frame.attrs["alpha"] == 0.1
    ax = plotting.forest_plot(frame)
    assert ax.get_xlabel() == "estimate with 90% CI"
    assert plotting.forest_plot([ate, att], alpha=0.1).get_xlabel() == ax.get_xlabel()
    plain = frame.drop(columns="std err")
    plain.attrs = {}  # a frame of the user's own: alpha labels it
    assert plotting.forest_plot(plain, alpha=0.2).get_xlabel() == "estimate with 80% CI"


@pytest.mark.parametrize("reference", ["1.0", {"benchmark": "n/a"}, {"truth": None}, True])
def test_a_reference_that_is_not_a_number_is_a_named_error(fits, reference):
    # gave a bare "could not convert string to float" from inside the drawing
    with pytest.raises(DataMismatchError, match="forest_plot: reference values must be numbers"):
        plotting.forest_plot(fits[0], reference=reference)
    ax = plotting.forest_plot(fits[0], reference={"truth": np.float64(1.0), "other": 2})
    assert [line.get_label() for line in ax.lines[-2:]] == ["truth", "other"]


@pytest.mark.parametrize("bad", [3, "PrivateATE", [1, 2], None])
def test_other_inputs_are_named_errors(bad):
    with pytest.raises(DataMismatchError, match="forest_plot"):
        plotting.forest_plot(bad)


def test_long_labels_are_not_clipped(fits, tmp_path):
    ate, att = fits
    long = {
        "private ATE, alpha = 0.8, series degree 2, five folds": ate,
        "private ATT on the released NSW records with CPS controls": att,
    }
    ax = plotting.forest_plot(long, reference={"experimental benchmark": 1.0})
    fig = ax.figure
    fig.savefig(tmp_path / "forest.png")  # draws with the figure's layout engine
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    for label in ax.get_yticklabels():
        ext = label.get_window_extent(renderer)
        assert ext.x0 >= box.x0 - 0.5, label.get_text()
        assert ext.x1 <= box.x1 + 0.5, label.get_text()
    # row count sets the height: many rows get a taller figure than two
    many = plotting.forest_plot({f"fit {i}": ate for i in range(20)})
    assert many.figure.get_figheight() > fig.get_figheight()
