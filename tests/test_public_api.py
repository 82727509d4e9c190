import importlib

import pytest

import privinfer as pi


@pytest.mark.parametrize(
    "module",
    [
        "privinfer",
        "privinfer.mechanisms",
        "privinfer.models",
        "privinfer.nuisance",
        "privinfer.pml",
        "privinfer.exceptions",
        "privinfer.inversion",
        "privinfer.transport",
        "privinfer.trimming",
    ],
)
def test_every_name_in_all_resolves(module):
    mod = importlib.import_module(module)
    for name in mod.__all__:
        assert getattr(mod, name) is not None, f"{module}.{name}"


def test_exceptions_subclass_builtin_categories():
    from privinfer import exceptions as ex

    for name in ex.__all__:
        cls = getattr(ex, name)
        if issubclass(cls, ex.PrivinferError) and cls is not ex.PrivinferError:
            assert issubclass(
                cls, (ValueError, TypeError, RuntimeError, ImportError, AttributeError)
            ), name
        else:
            assert cls is ex.PrivinferError or issubclass(cls, Warning), name


def test_version():
    assert isinstance(pi.__version__, str)


def _large_results() -> dict[str, object]:
    """Public results and building blocks holding arrays or tables of many rows."""
    import numpy as np
    import pandas as pd

    from privinfer.inversion import reference_design
    from privinfer.models._gmm_logit import MarginalEffects
    from privinfer.models._weakiv import WeakIVStats
    from privinfer.nuisance import KernelReference
    from privinfer.nuisance.crossval import CVResult
    from privinfer.nuisance.regularize import SpectralChoice
    from privinfer.nuisance.sieve import SieveBasis
    from privinfer.planner import PlanResults
    from privinfer.results import BootstrapDraws, Diagnostics, ResultsRecord

    rng = np.random.default_rng(0)
    k = 20
    names = [f"x{j}" for j in range(k)]
    table = pd.DataFrame(rng.normal(size=(40, 5)))
    mech = pi.AlphaIdentity(0.5, {"x": pi.reference.Uniform(0, 1)})
    design = reference_design(mech, size=256, random_state=0)
    ref = rng.uniform(-1, 1, (512, 2))
    test = pi.PMLTest([0.3, 0.3, 0.2, 0.2], [0.2, 0.2, 0.3, 0.3], eps=1.0, c=0.15)
    return {
        "PMLTestResult": test.test(test.privatize(np.zeros(500, dtype=int), random_state=1)),
        "BootstrapDraws": BootstrapDraws("normal", 200, rng.normal(size=(200, 3)), "rows"),
        "ResultsRecord": ResultsRecord("Demo", "y", pd.Series(np.zeros(k), index=names),
                                       rng.normal(size=(500, k)), {"alpha": 1.0}, None, (),
                                       Diagnostics(), pd.DataFrame(rng.normal(size=(30, k))),
                                       cov_override=pd.DataFrame(np.eye(k))),
        "WeakIVStats": WeakIVStats(("x",), 500, np.arange(1, k), np.eye(k), np.ones(k),
                                   np.ones((k, 1)), np.eye(2 * k)),
        "MarginalEffects": MarginalEffects(tuple(names), np.ones(k), np.eye(k)),
        "PlanResults": PlanResults(table, 1000, 4000, None, 0.95, 5),
        "CVResult": CVResult(table, 0, 2, 0.1),
        "SpectralChoice": SpectralChoice(0, np.arange(k), 0.1, 0.1, 1.0, table, 0.5),
        "ReferenceDesign": design,
        "ReferenceMoments": design.moments(rng.uniform(size=(256, k))),
        "KernelReference": KernelReference.uniform_grid([(0.0, 1.0)], m=64),
        "SieveBasis": SieveBasis.build(ref, np.full(512, 1 / 512), ref, np.zeros((512, 0)),
                                       1.0, (0, 1), (), ("x1", "x2"), max_level=4),
    }


LARGE = ["PMLTestResult", "BootstrapDraws", "ResultsRecord", "WeakIVStats", "MarginalEffects",
         "PlanResults", "CVResult", "SpectralChoice", "ReferenceDesign", "ReferenceMoments",
         "KernelReference", "SieveBasis"]


@pytest.fixture(scope="module")
def large_results() -> dict[str, object]:
    return _large_results()


@pytest.mark.parametrize("name", LARGE)
def test_results_reprs_are_one_line(name, large_results):
    """These dataclasses printed every array and table field in full (a 200-draw bootstrap:
    200 lines, a reference design: 76); their repr is now one line, as the results' own."""
    obj = large_results[name]
    text = repr(obj)
    assert len(text.splitlines()) == 1 and len(text) < 400, text
    assert text.startswith("<PMLTest results: mass_A=" if name == "PMLTestResult" else name)
