"""Seeds are values: the same ``SeedSequence`` gives the same fit, and is left as it was."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

import privinfer as pi


def _release(alpha: float = 0.7) -> tuple[pd.DataFrame, pi.AlphaIdentity]:
    rng = np.random.default_rng(3)
    n = 600
    x = rng.uniform(-1, 1, n)
    d = (rng.uniform(size=n) < 1 / (1 + np.exp(-1.5 * x))).astype(int)
    y = np.sin(2 * x) + d + rng.normal(size=n)
    mech = pi.AlphaIdentity(alpha, {"x": pi.reference.Uniform(-1, 1)})
    frame = pd.DataFrame({"x": x, "d": d, "y": y})
    return mech.privatize(frame, public=["y", "d"], random_state=4), mech


def _fit(released, mech, random_state):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = pi.PrivateATE.from_formula("y ~ d | x", released, mechanism=mech)
        return model.fit(random_state=random_state)


def test_the_same_seed_sequence_twice_gives_the_same_fit():
    released, mech = _release()
    ss = np.random.SeedSequence(11)
    first, second = _fit(released, mech, ss), _fit(released, mech, ss)
    assert ss.n_children_spawned == 0  # the caller's seed is not advanced
    assert first.params["ATE"] == second.params["ATE"]
    assert first.bse["ATE"] == second.bse["ATE"]
    # and it is the fit of a fresh copy of that seed (the int seed's fit)
    assert _fit(released, mech, 11).params["ATE"] == first.params["ATE"]


def test_a_generator_is_a_stream():
    released, mech = _release()
    rng = np.random.default_rng(11)
    first, second = _fit(released, mech, rng), _fit(released, mech, rng)
    # the second fit draws other folds; the first equals a fit on a fresh generator
    assert first.params["ATE"] != second.params["ATE"]
    assert _fit(released, mech, np.random.default_rng(11)).params["ATE"] == first.params["ATE"]


def test_reference_qmc_sample_keeps_a_seed_sequence_a_seed():
    ref = pi.reference.ProductReference({"x": pi.reference.Uniform(0, 1)})
    ss = np.random.SeedSequence(5)
    a = ref.qmc_sample(64, n_replicates=4, random_state=ss)
    b = ref.qmc_sample(64, n_replicates=4, random_state=ss)
    assert ss.n_children_spawned == 0
    np.testing.assert_array_equal(np.asarray(a.frame), np.asarray(b.frame))
