"""Releases that must refuse or warn (issue 15, transport): delta domain, n-free grid
depth, seeds. Each test fails on the code before the fix."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

pytest.importorskip("ot")
pytest.importorskip("dp_accounting")

from privinfer.exceptions import SeedReleaseWarning
from privinfer.transport import (
    DPDASource,
    DPOTSource,
    PrivTreeSynthesizer,
    grid_synthesize,
    privtree_synthesize,
    theorem2_sigma,
)

RNG = np.random.default_rng(0)
XS = RNG.normal(size=(20, 3))
YS = RNG.integers(0, 2, 20)
UNIT = RNG.uniform(size=(300, 2))


# ------------------------------------------------------------------ delta domain
@pytest.mark.parametrize("delta", [0.5, 0.6, 0.9])
@pytest.mark.parametrize("neighbour", ["entry", "record"])
def test_dpot_refuses_delta_outside_theorem2_domain(delta, neighbour):
    # eps = 0.1, delta = 0.9 gave sigma = 0: the rows went out exactly as X M
    src = DPOTSource(eps=0.1, delta=delta, ell=4, neighbour=neighbour, clip_norm=5.0)
    with pytest.raises(ValueError, match="'delta'"):
        src.publish(XS)
    with pytest.raises(ValueError, match="'delta'"):
        src.publish_minibatches(XS, batch_size=5, n_batches=2)
    with pytest.raises(ValueError, match="'delta'"):
        DPDASource(0.1, delta, 4, 1.0, classes=[0, 1], neighbour=neighbour,
                   clip_norm=5.0).publish(XS, YS)


def test_theorem2_sigma_is_positive_on_its_domain_and_refuses_outside():
    assert theorem2_sigma(0.1, 0.499, 1.0) > 0
    with pytest.raises(ValueError, match="'delta'"):
        theorem2_sigma(0.1, 0.9, 1.0)  # was 0.0


# ------------------------------------------------------------------ grid depth
def test_grid_depth_does_not_depend_on_the_private_n():
    x = np.random.default_rng(1).uniform(size=(1025, 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no seed warning either: random_state=None
        a, _ = grid_synthesize(x[:1024], 1.0, [(0, 1), (0, 1)], n_bound=2000)
        b, _ = grid_synthesize(x, 1.0, [(0, 1), (0, 1)], n_bound=2000)
    assert a.n_atoms == b.n_atoms == 2048
    assert "public depth 11" in a.privacy and "n <= 2000" in a.privacy


def test_grid_without_public_depth_or_bound_is_refused():
    with pytest.raises(ValueError, match="n_bound"):
        grid_synthesize(UNIT, 1.0, [(0, 1), (0, 1)])
    with pytest.raises(ValueError, match="exactly one"):
        grid_synthesize(UNIT, 1.0, [(0, 1), (0, 1)], depth=3, n_bound=100)


# ------------------------------------------------------------------ seeds
RELEASES = {
    "DPOTSource.publish": lambda s: DPOTSource(2.0, 1e-5, 4, random_state=s).publish(XS),
    "DPOTSource.publish_minibatches": lambda s: DPOTSource(
        2.0, 1e-5, 4, random_state=s).publish_minibatches(XS, batch_size=5, n_batches=2),
    "DPDASource.publish": lambda s: DPDASource(
        2.0, 1e-5, 4, 1.0, classes=[0, 1], random_state=s).publish(XS, YS),
    "privtree_synthesize": lambda s: privtree_synthesize(
        UNIT, 1.0, [(0, 1), (0, 1)], random_state=s),
    "PrivTreeSynthesizer.fit": lambda s: PrivTreeSynthesizer(
        1.0, [(0, 1), (0, 1)], random_state=s).fit(UNIT),
    "grid_synthesize": lambda s: grid_synthesize(
        UNIT, 1.0, [(0, 1), (0, 1)], depth=3, random_state=s),
}


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_integer_seed_on_a_release_warns(name):
    for seed in (7, np.random.SeedSequence(7)):
        with pytest.warns(SeedReleaseWarning, match="guesses the seed"):
            RELEASES[name](seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error", SeedReleaseWarning)
        RELEASES[name](None)
        RELEASES[name](np.random.default_rng())


@pytest.mark.filterwarnings("ignore::privinfer.exceptions.SeedReleaseWarning")
def test_shared_objects_do_not_carry_the_seed():
    src = DPOTSource(2.0, 1e-5, 4, random_state=1234)
    dsrc = DPDASource(2.0, 1e-5, 4, 1.0, classes=[0, 1], random_state=1234)
    synth = PrivTreeSynthesizer(1.0, [(0, 1), (0, 1)], random_state=1234).fit(UNIT)
    for obj in (src, dsrc, synth):
        copy = pickle.loads(pickle.dumps(obj))
        assert copy.random_state is None
        assert obj.random_state == 1234  # the owner's own object is unchanged
    published = [src.publish(XS), dsrc.publish(XS, YS), synth.measure_]
    for obj in published:
        assert "random_state" not in vars(obj)


@pytest.mark.filterwarnings("ignore::privinfer.exceptions.SeedReleaseWarning")
def test_a_guessed_seed_rebuilds_the_private_rows():
    """The threat the warning is about (it holds before and after the fix)."""
    pub = DPOTSource(2.0, 1e-5, 8, random_state=37).publish(XS)
    zeros = np.zeros_like(XS)
    found = [s for s in range(100)
             if np.array_equal(DPOTSource(2.0, 1e-5, 8, random_state=s).publish(zeros[:1])
                               .projection, pub.projection)]
    assert found == [37]
    noise = DPOTSource(2.0, 1e-5, 8, random_state=37).publish(zeros).rows  # = Delta exactly
    recovered = (pub.rows - noise) @ np.linalg.pinv(pub.projection)
    np.testing.assert_allclose(recovered, XS, atol=1e-10)
    fresh = DPOTSource(2.0, 1e-5, 8).publish(XS)
    assert not any(np.array_equal(DPOTSource(2.0, 1e-5, 8, random_state=s).publish(
        zeros[:1]).projection, fresh.projection) for s in range(100))


def test_pickled_synthesizer_drops_the_exact_counts_of_the_private_data():
    import struct

    x = UNIT.copy()
    x[:3] = 1.5  # three records clipped onto the bounds
    synth = PrivTreeSynthesizer(1.0, [(0, 1), (0, 1)], clip=True).fit(x)
    diag = synth.diagnostics_
    assert (diag.n_obs, diag.n_clipped) == (300, 3)
    blob = pickle.dumps(synth)
    assert struct.pack("<d", diag.expected_leaves_bound) not in blob  # it gives n_obs away
    copy = pickle.loads(blob)
    shared = copy.diagnostics_
    assert (shared.n_obs, shared.n_clipped, shared.expected_leaves_bound) == (None, None, None)
    assert "300" not in repr(shared)
    # what the release shows is kept, and the owner's object is unchanged
    assert (shared.n_leaves, shared.n_nodes, shared.depth) == (diag.n_leaves, diag.n_nodes,
                                                              diag.depth)
    assert synth.diagnostics_.n_obs == 300
    # the copy still works
    assert copy.sample(5, random_state=0).shape == (5, 2)
    np.testing.assert_array_equal(copy.sample(5, random_state=0), synth.sample(5, random_state=0))
    assert repr(copy.measure_) == repr(synth.measure_)
    assert str(copy.measure_.summary()) == str(synth.measure_.summary())
