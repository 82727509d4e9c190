"""Every public function and class has a numpydoc docstring with a runnable example.

The examples themselves are executed by ``tests/test_docs.py::test_docstring_examples_run``
(``--doctest-modules privinfer``); this test checks that none is missing.
"""

from __future__ import annotations

import importlib
import inspect

import pytest

PUBLIC_MODULES = (
    "privinfer",
    "privinfer.mechanisms",
    "privinfer.mechanisms.reference",
    "privinfer.inversion",
    "privinfer.descriptive",
    "privinfer.nuisance",
    "privinfer.models",
    "privinfer.results",
    "privinfer.pml",
    "privinfer.transport",
    "privinfer.planner",
    "privinfer.trimming",
    "privinfer.plotting",
    "privinfer.exceptions",
)


def _public_objects() -> list[tuple[str, object]]:
    """Functions and classes defined in privinfer and listed in a public ``__all__``.

    Re-exported modules, type aliases, constants and exception/warning classes are skipped;
    an object exported by several modules is checked once.
    """
    seen: dict[tuple[str, str], tuple[str, object]] = {}
    for modname in PUBLIC_MODULES:
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if not (inspect.isfunction(obj) or inspect.isclass(obj)):
                continue
            if not getattr(obj, "__module__", "").startswith("privinfer"):
                continue
            if inspect.isclass(obj) and issubclass(obj, BaseException):
                continue
            key = (obj.__module__, obj.__qualname__)
            seen.setdefault(key, (f"{modname}.{name}", obj))
    return sorted(seen.values(), key=lambda item: item[0])


OBJECTS = _public_objects()


def _examples_section(doc: str) -> str | None:
    """Text of the numpydoc ``Examples`` section, or None when there is none."""
    lines = doc.splitlines()
    for i in range(len(lines) - 1):
        underline = lines[i + 1].strip()
        if lines[i].strip() == "Examples" and underline and set(underline) == {"-"}:
            body = []
            for j in range(i + 2, len(lines)):
                nxt = lines[j + 1].strip() if j + 1 < len(lines) else ""
                if lines[j].strip() and nxt and set(nxt) == {"-"} and len(nxt) >= 3:
                    break  # the next section starts
                body.append(lines[j])
            return "\n".join(body)
    return None


def test_public_objects_are_found():
    names = {name.rsplit(".", 1)[-1] for name, _ in OBJECTS}
    assert {"AlphaIdentity", "PrivateATE", "PrivateResults", "plan", "PMLTest", "DPOT"} <= names
    assert len(OBJECTS) > 100


@pytest.mark.parametrize("name,obj", OBJECTS, ids=[name for name, _ in OBJECTS])
def test_docstring_has_runnable_example(name, obj):
    doc = inspect.getdoc(obj)
    assert doc, f"{name} has no docstring"
    section = _examples_section(doc)
    assert section is not None, f"{name}: the docstring has no numpydoc 'Examples' section"
    assert any(line.lstrip().startswith(">>> ") for line in section.splitlines()), (
        f"{name}: the 'Examples' section has no '>>>' line"
    )
