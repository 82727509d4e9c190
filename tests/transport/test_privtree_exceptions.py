import numpy as np
import pytest

from privinfer.exceptions import (
    DataMismatchError,
    NotFittedError,
    OutOfSupportError,
    ProblemSizeError,
)
from privinfer.transport.privtree import (
    PrivTreeSynthesizer,
    grid_synthesize,
    privtree_synthesize,
    two_sided_geometric,
)

#: the seeded releases of this module are research runs on purpose
pytestmark = pytest.mark.filterwarnings("ignore::privinfer.exceptions.SeedReleaseWarning")

UNIT2 = [(0.0, 1.0), (0.0, 1.0)]


@pytest.fixture
def x():
    return np.random.default_rng(0).uniform(size=(200, 2))


def test_data_outside_bounds_raise(x):
    bad = x.copy()
    bad[3, 1] = 1.5
    with pytest.raises(ValueError, match="outside the public bounds"):
        PrivTreeSynthesizer(1.0, UNIT2, random_state=0).fit(bad)
    with pytest.raises(OutOfSupportError, match="clip=True"):
        privtree_synthesize(bad, 1.0, UNIT2, random_state=0)


def test_clipping_only_when_asked_and_counted(x):
    bad = x.copy()
    bad[:3, 0] = -0.5
    synth = PrivTreeSynthesizer(1.0, UNIT2, clip=True, random_state=0).fit(bad)
    assert synth.diagnostics_.n_clipped == 3
    assert synth.clip is True
    _, diag = privtree_synthesize(x, 1.0, UNIT2, clip=True, random_state=0)
    assert diag.n_clipped == 0


@pytest.mark.parametrize("eps", [0, -1.0, float("nan"), float("inf"), True, "1"])
def test_bad_eps(x, eps):
    with pytest.raises(ValueError, match="'eps' parameter"):
        PrivTreeSynthesizer(eps, UNIT2).fit(x)


def test_eps_validated_in_fit_not_init():
    synth = PrivTreeSynthesizer(-1.0, UNIT2)
    assert synth.eps == -1.0


def test_zero_dimension():
    with pytest.raises(ValueError, match="d = 0"):
        privtree_synthesize(np.empty((5, 0)), 1.0, np.empty((0, 2)))


def test_empty_data():
    with pytest.raises(ValueError, match="empty"):
        privtree_synthesize(np.empty((0, 2)), 1.0, UNIT2)


@pytest.mark.parametrize(
    ("bounds", "match"),
    [
        ([(0, 1), (1, 1)], "low < high"),
        ([(0, 1, 2)], "shape \\(d, 2\\)"),
        ([(0, np.inf), (0, 1)], "low < high"),
        ("abc", "pairs"),
    ],
)
def test_bad_bounds(x, bounds, match):
    with pytest.raises(ValueError, match=match):
        privtree_synthesize(x, 1.0, bounds)


def test_wrong_number_of_columns(x):
    with pytest.raises(DataMismatchError, match="shape"):
        privtree_synthesize(x, 1.0, [(0, 1)] * 3)


def test_nan_data(x):
    bad = x.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        privtree_synthesize(bad, 1.0, UNIT2)


def test_bad_options(x):
    with pytest.raises(ValueError, match="'projection' parameter"):
        privtree_synthesize(x, 1.0, UNIT2, projection="sinkhorn")
    with pytest.raises(ValueError, match="'clip' parameter"):
        privtree_synthesize(x, 1.0, UNIT2, clip=1)
    with pytest.raises(ValueError, match="'random_shift' parameter"):
        privtree_synthesize(x, 1.0, UNIT2, random_shift="yes")
    with pytest.raises(ValueError, match="'max_depth' parameter"):
        privtree_synthesize(x, 1.0, UNIT2, max_depth=105)
    with pytest.raises(ValueError, match="'depth' parameter"):
        grid_synthesize(x, 1.0, UNIT2, depth=-1)
    with pytest.raises(TypeError, match="random_state"):
        privtree_synthesize(x, 1.0, UNIT2, random_state=np.random.RandomState(0))


def test_lp_projection_too_many_leaves():
    x = np.random.default_rng(1).uniform(size=(20000, 2))
    with pytest.raises(ProblemSizeError, match="projection='tree'"):
        privtree_synthesize(x, 5.0, UNIT2, projection="lp", random_state=0)


@pytest.mark.parametrize(("depth", "n_bound"), [(30, None), (None, 10**12)])
def test_grid_too_deep_for_memory(x, depth, n_bound):
    # a loose public bound n_bound = 1e12 (depth 40), or depth 30, used to build 2**30+
    # cells until the process was killed for memory
    with pytest.raises(ProblemSizeError, match="privtree_synthesize"):
        grid_synthesize(x, 1.0, UNIT2, depth=depth, n_bound=n_bound, random_state=0)


def test_wasserstein_errors(x, monkeypatch):
    nu, _ = privtree_synthesize(x, 1.0, UNIT2, random_state=0)
    with pytest.raises(ValueError, match="'method' parameter"):
        nu.wasserstein(x, method="sliced")
    with pytest.raises(OutOfSupportError, match="outside the public bounds"):
        nu.wasserstein(x + 2.0)
    import privinfer.transport.measures as measures

    monkeypatch.setattr(measures, "_EXACT_MAX_ENTRIES", 10)
    with pytest.raises(ProblemSizeError, match="method='tree'"):
        nu.wasserstein(x, method="exact")
    assert nu.wasserstein(x, method="auto") == nu.wasserstein(x, method="tree")


def test_plot_needs_low_dimension():
    x = np.random.default_rng(2).uniform(size=(100, 3))
    nu, _ = privtree_synthesize(x, 1.0, [(0, 1)] * 3, random_state=0)
    with pytest.raises(ValueError, match="d <= 2"):
        nu.plot()


def test_sample_before_fit():
    with pytest.raises(NotFittedError, match="fit"):
        PrivTreeSynthesizer(1.0, UNIT2).sample(3)


def test_sample_bad_n(x):
    nu, _ = privtree_synthesize(x, 1.0, UNIT2, random_state=0)
    with pytest.raises(ValueError, match="'n' parameter"):
        nu.sample(-1)


def test_two_sided_geometric_bad_eps():
    with pytest.raises(ValueError, match="'eps' parameter"):
        two_sided_geometric(0.0, 3)


@pytest.mark.parametrize("eps", [0.0, float("inf")])
@pytest.mark.parametrize(
    "call",
    [
        lambda x, eps: two_sided_geometric(eps, 3),
        lambda x, eps: privtree_synthesize(x, eps, UNIT2, random_state=0),
        lambda x, eps: grid_synthesize(x, eps, UNIT2, depth=2, random_state=0),
    ],
    ids=["two_sided_geometric", "privtree_synthesize", "grid_synthesize"],
)
def test_eps_message_states_the_open_interval_that_is_enforced(x, call, eps):
    # inf is refused, so the stated interval must not include it
    with pytest.raises(ValueError, match=r"'eps' parameter.*\(0\.0, inf\)\.") as info:
        call(x, eps)
    assert "inf]" not in str(info.value)
