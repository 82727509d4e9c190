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
