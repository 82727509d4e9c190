"""No private data at rest: fitted objects and their pickles hold no raw private values.

Each test scans ``pickle.dumps(obj)`` for the float64 bytes of raw private values (as in
``tests/models/test_ate.py``), and checks that no attribute is a DataFrame or an array with
the raw data's shape.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import pytest

import privinfer as pi


def _leaks(obj: object, values: np.ndarray, k: int = 60) -> list[float]:
    blob = pickle.dumps(obj)
    vals = np.asarray(values, dtype=np.float64).ravel()
    vals = vals[np.abs(vals) > 1e-12][:k]  # 0.0 and 1.0 bytes also occur by chance
    vals = vals[(vals != 1.0) & (vals != -1.0)]
    return [float(v) for v in vals if np.float64(v).tobytes() in blob]


def _no_frames(obj: object) -> None:
    for name, value in vars(obj).items():
        assert not isinstance(value, pd.DataFrame | pd.Series) or len(value) < 20, name


@pytest.fixture(scope="module")
def released():
    rng = np.random.default_rng(0)
    n = 600
    x = rng.uniform(-1, 1, n)
    w = rng.normal(size=n)
    d = (rng.random(n) < 1 / (1 + np.exp(-x))).astype(int)
    y = 1 + d + 2 * x + w + rng.normal(size=n)
    raw = pd.DataFrame({"y": y, "d": d, "x": x, "w": w, "z": x + rng.normal(size=n)})
    mech = pi.AlphaIdentity(0.7, {"x": pi.reference.Uniform(-1, 1)})
    return raw, mech.privatize(raw, public=["y", "d", "w", "z"], shuffle=False,
                                random_state=1), mech


def test_transport_objects_hold_only_the_publication():
    pytest.importorskip("ot")
    from privinfer.transport import DPDA, DPOT, DPDASource, DPOTSource, PrivTreeSynthesizer

    rng = np.random.default_rng(1)
    Xs, Xt = rng.normal(size=(60, 4)), rng.normal(1.0, 1.0, size=(50, 4))
    ys = rng.integers(0, 2, 60)
    src = DPOTSource(2.0, 1e-4, 8, random_state=0)
    pub = src.publish(Xs)
    est = DPOT().fit(pub, Xt)
    for obj in (src, pub, est, est.result_):
        assert not _leaks(obj, Xs), type(obj).__name__
    dsrc = DPDASource(2.0, 1e-4, 8, 1.0, classes=[0, 1], random_state=0)
    dpub = dsrc.publish(Xs, ys)
    da = DPDA(max_iter=3).fit(dpub, Xt)
    for obj in (dsrc, dpub, da):
        assert not _leaks(obj, Xs), type(obj).__name__
    X = rng.uniform(size=(400, 2))
    synth = PrivTreeSynthesizer(1.0, [(0, 1), (0, 1)], random_state=0).fit(X)
    assert not _leaks(synth, X)
    assert not _leaks(synth.measure_, X)


def test_gmm_results_hold_no_private_column(released):
    raw, rel, mech = released
    for res in (
        pi.PrivateGMM.ols("y ~ x + w", rel, mechanism=mech, reference_size=256).fit(random_state=0),
        pi.PrivateGMM.iv("y ~ w + [x ~ z]", rel, mechanism=mech, reference_size=256).fit(
            random_state=0),
        pi.PrivateGMM.logit("d ~ x + w", rel, mechanism=mech, reference_size=256).fit(
            random_state=0),
    ):
        assert not _leaks(res, raw["x"]), res.model_name if hasattr(res, "model_name") else res
        assert not _leaks(res, rel["x"])
        pickle.loads(pickle.dumps(res))


def test_gmm_model_object_keeps_released_data_only(released):
    """The model keeps the *released* frame (needed to fit) but never the raw one."""
    raw, rel, mech = released
    model = pi.PrivateGMM.ols("y ~ x + w", rel, mechanism=mech, reference_size=256)
    kept = raw["x"].to_numpy()[rel["x"].to_numpy() != raw["x"].to_numpy()]
    assert not _leaks(model, kept)  # replaced raw values never enter the model


def test_pml_results_hold_no_raw_values():
    rng = np.random.default_rng(2)
    x = rng.uniform(-1, 1, 500)
    pm = pi.pml.PrivateMean(bounds=(-1, 1), eps=1.0, c=0.2)
    bits = pm.privatize(x, random_state=0)
    res = pm.estimate(bits)
    assert not _leaks(res, x) and not _leaks(pm, x)
    t = pi.pml.PMLTest(np.array([0.3, 0.3, 0.4]), np.array([0.4, 0.35, 0.25]), eps=1.0, c=0.1)
    xs = rng.choice(3, 400, p=[0.3, 0.3, 0.4]).astype(float) + 0.0
    out = t.test(t.privatize(xs.astype(int), random_state=1))
    blob = pickle.dumps(out)
    assert xs.astype(np.int64).tobytes() not in blob  # not the raw sample as one block


def test_ate_results_hold_no_private_column(released):
    raw, rel, mech = released
    res = pi.PrivateATE.from_formula("y ~ d | x + w", rel, mechanism=mech,
                                     reference_size=256).fit(random_state=0)
    assert not _leaks(res, raw["x"])
    assert not _leaks(res, rel["x"])
    _no_frames(res)
    pickle.loads(pickle.dumps(res))
