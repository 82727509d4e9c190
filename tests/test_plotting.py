"""Every plot renders to a file (Agg backend) without raw private values."""

import subprocess
import sys

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
def treatment_fits():
    rng = np.random.default_rng(0)
    n = 1500
    x = rng.uniform(-1, 1, n)
    educ = rng.choice(["hs", "college", "grad"], n)
    d = (rng.random(n) < 1 / (1 + np.exp(-x))).astype(int)
    raw = pd.DataFrame({"x": x, "educ": educ, "d": d, "y": d + x + rng.normal(size=n)})
    ref = {"x": pi.reference.Uniform(-1, 1),
           "educ": pi.reference.Categorical(["hs", "college", "grad"])}
    fits, released = {}, None
    for alpha in (1.0, 0.6):
        mech = pi.AlphaIdentity(alpha, ref)
        released = mech.privatize(raw, public=["d", "y"], random_state=1)
        fits[alpha] = pi.PrivateATE.from_formula(
            "y ~ d | x + C(educ)", released, mechanism=mech
        ).fit(random_state=2)
    return fits, released


def _saved(ax, tmp_path, name):
    path = tmp_path / f"{name}.png"
    ax.figure.savefig(path)
    assert path.stat().st_size > 1000
    return path


def test_plotting_is_lazy_and_package_import_does_not_load_matplotlib():
    code = ("import sys, privinfer; assert 'matplotlib' not in sys.modules; "
            "privinfer.plotting; assert 'matplotlib' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_forest_plot_from_results_renders(treatment_fits, tmp_path):
    fits, _ = treatment_fits
    ax = plotting.forest_plot({f"alpha={a:g}": r for a, r in fits.items()},
                              reference={"truth": 1.0}, title="ATE")
    assert len(ax.get_yticklabels()) == 2
    _saved(ax, tmp_path, "forest")


def test_results_frame_matches_conf_int(treatment_fits):
    fits, _ = treatment_fits
    frame = plotting.results_frame([("a", fits[0.6])], alpha=0.1)
    ci = fits[0.6].conf_int(0.1)
    assert frame.loc[0, "lower"] == pytest.approx(ci.loc["ATE", "lower"])
    assert frame.loc[0, "std err"] == pytest.approx(fits[0.6].bse["ATE"])


def test_forest_plot_from_frame_and_missing_columns(tmp_path):
    frame = pd.DataFrame({"label": ["a", "b"], "param": ["ATE", "ATT"],
                          "estimate": [1.0, 2.0], "lower": [0.5, 1.5], "upper": [1.5, 2.5]})
    ax = plotting.forest_plot(frame, reference=1.0)
    assert sorted(t.get_text() for t in ax.get_yticklabels()) == ["a: ATE", "b: ATT"]
    _saved(ax, tmp_path, "forest_frame")
    with pytest.raises(DataMismatchError, match="lacks column"):
        plotting.forest_plot(frame.drop(columns="upper"))


def test_overlap_plot_renders_continuous_and_categorical(treatment_fits, tmp_path):
    _, released = treatment_fits
    _, axes = plt.subplots(1, 2)
    plotting.overlap_plot(released, "d", "x", bins=6, random_state=0, ax=axes[0],
                          show_released=True)
    plotting.overlap_plot(released, "d", "educ", random_state=0, ax=axes[1])
    assert axes[1].get_xticklabels()[0].get_text() == "hs"
    _saved(axes[0], tmp_path, "overlap")


def test_trimming_plot_shades_the_dropped_propensities(tmp_path):
    rng = np.random.default_rng(8)
    w = rng.normal(size=1500)
    df = pd.DataFrame({"d": (rng.random(1500) < 1 / (1 + np.exp(-3 * w))).astype(int), "w": w})
    rule = pi.PublicTrimming.from_formula("d ~ w", df).fit()
    ax = rule.plot(df)
    spans = [p for p in ax.patches if p.get_label().endswith("dropped")]
    assert len(spans) == 2 and 0.0 < rule.bounds[0] < 0.2
    heights = sum(p.get_height() for p in ax.patches if p not in spans)
    assert heights == pytest.approx(len(df))  # every row in one of the two histograms
    _saved(ax, tmp_path, "trimming")
    with pytest.raises(DataMismatchError, match="treatment"):
        plotting.trimming_plot(rule, df.drop(columns="d"))


def test_private_histogram_is_unbiased_deconvolution():
    rng = np.random.default_rng(3)
    raw = pd.DataFrame({"x": rng.beta(2, 5, 20000)})
    mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
    hist = plotting.private_histogram(mech.privatize(raw, random_state=4), "x",
                                      mechanism=mech, bins=[0, 0.25, 0.5, 0.75, 1.0],
                                      random_state=0)
    truth = np.histogram(raw["x"], bins=[0, 0.25, 0.5, 0.75, 1.0])[0] / len(raw)
    # SE of each bin mass is at most sqrt(1/(4 n)) / alpha = 0.0071
    np.testing.assert_allclose(hist["mass"], truth, atol=4 * 0.0071)
    assert hist["mass"].sum() == pytest.approx(1.0)


def test_private_histogram_rejects_public_column():
    raw = pd.DataFrame({"x": [0.1, 0.2], "w": [1, 2]})
    mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
    with pytest.raises(DataMismatchError, match="not a private column"):
        plotting.private_histogram(mech.privatize(raw, public=["w"], random_state=0), "w",
                                   mechanism=mech)
    with pytest.raises(DataMismatchError, match="must be a public column"):
        plotting.private_histogram(mech.privatize(raw, public=["w"], random_state=0), "x", by="x",
                                   mechanism=mech)


def test_privacy_tradeoff_plot_renders(treatment_fits, tmp_path):
    fits, _ = treatment_fits
    ax = plotting.privacy_tradeoff_plot(fits)
    assert len(ax.get_lines()) == 2
    _saved(ax, tmp_path, "tradeoff")
    with pytest.raises(DataMismatchError, match="no results"):
        plotting.privacy_tradeoff_plot({})


def test_privtree_plot_renders(tmp_path):
    pytest.importorskip("ot")
    from privinfer.transport import PrivTreeSynthesizer

    x = np.random.default_rng(0).uniform(size=(800, 2))
    nu = PrivTreeSynthesizer(1.0, [(0, 1), (0, 1)], random_state=0).fit(x).measure_
    ax = plotting.privtree_plot(nu, x, max_points=100)
    _saved(ax, tmp_path, "privtree")


def test_err_vs_noise_plot_renders_groups_and_bands(tmp_path):
    frame = pd.DataFrame({"eps": [0.5, 1, 2] * 2, "W1": [0.3, 0.2, 0.1, 0.4, 0.3, 0.2],
                          "se": [0.01] * 6, "method": ["tree"] * 3 + ["grid"] * 3})
    ax = plotting.err_vs_noise_plot(frame, x="eps", y="W1", group="method", band="se",
                                    logx=True, logy=True)
    assert len(ax.get_lines()) == 2
    _saved(ax, tmp_path, "err")
    with pytest.raises(DataMismatchError, match="not in the frame"):
        plotting.err_vs_noise_plot(frame, x="eps", y="nope")


def test_privacy_tradeoff_plot_names_the_available_params(treatment_fits):
    fits, _ = treatment_fits
    with pytest.raises(DataMismatchError, match=r"param='ATT' is not a parameter.*\['ATE'\]"):
        plotting.privacy_tradeoff_plot(fits, param="ATT")


def test_private_histogram_checks_the_release_like_the_models():
    from privinfer import exceptions as ex

    rng = np.random.default_rng(5)
    raw = pd.DataFrame({"x": rng.beta(2, 5, 2000)})
    mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
    released = mech.privatize(raw, random_state=1)
    with pytest.raises(ex.MechanismMismatchError, match="were released by"):
        plotting.private_histogram(released, "x", mechanism=pi.AlphaIdentity(0.9, mech.reference))
    # raw data analysed as a release: a warning, and the mixture's share test fails
    with pytest.warns(ex.UnverifiedReleaseWarning), pytest.raises(ex.MechanismMismatchError):
        plotting.private_histogram(raw, "x", mechanism=mech, bins=4)
    for bad in (np.nan, np.inf):
        edited = released.copy()
        edited.loc[0, "x"] = bad
        with pytest.raises(ex.MissingValueError):
            plotting.private_histogram(edited, "x", bins=4)
    with pytest.raises(DataMismatchError, match="no rows"):
        plotting.private_histogram(released.iloc[:0], "x", bins=4)
    with pytest.raises(DataMismatchError, match="DataFrame"):
        plotting.private_histogram(released["x"], "x", mechanism=mech)
    with pytest.raises(TypeError, match="AlphaIdentity"):
        plotting.private_histogram(released, "x", mechanism="alpha-identity")
