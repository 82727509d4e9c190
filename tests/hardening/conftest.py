"""Hardening tests: the fuzz table per entry point, shown only on request.

A fuzz test feeds each public entry point random (often invalid) inputs. An input that
privinfer refuses with a named exception (a ``PrivinferError``, or a ``ValueError`` /
``TypeError`` from its validators) is *rejected as designed* and counted; anything else
(an unnamed exception, a silent NaN, a stray numpy warning, a hang) fails the test. The
rejection counts are therefore expected and say how much of the random input was invalid,
not that anything went wrong.

The table is printed after the run only when asked for: ``pytest --fuzz-summary``, a
campaign run (``PRIVINFER_FUZZ_EXAMPLES`` set), or ``PRIVINFER_FUZZ_REPORT=path.json``
(which also writes the counts as JSON).
"""

from __future__ import annotations

import json
import os


def _wanted(config) -> bool:
    return bool(
        config.getoption("fuzz_summary", default=False)
        or os.environ.get("PRIVINFER_FUZZ_EXAMPLES")
        or os.environ.get("PRIVINFER_FUZZ_REPORT")
    )


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    import _fuzz

    if not _fuzz.COUNTS:
        return
    total = sum(_fuzz.COUNTS.values())
    out = os.environ.get("PRIVINFER_FUZZ_REPORT")
    if out:
        with open(out, "w") as fh:
            json.dump({"counts": dict(_fuzz.COUNTS), "named_failures": dict(_fuzz.FAILURES),
                       "total": total}, fh, indent=1, sort_keys=True)
    if not _wanted(config):
        return
    tr = terminalreporter
    tr.section(f"privinfer fuzz inputs: {total} generated")
    tr.write_line("Inputs per entry point, and how many of them privinfer rejected with a named")
    tr.write_line("error. Rejections are the expected answer to invalid input; real failures")
    tr.write_line("(unnamed errors, NaN, stray warnings, hangs) fail the tests above.")
    tr.write_line(f"{'entry point':<48} {'inputs':>7} {'rejected as designed':>21}")
    for entry, n in sorted(_fuzz.COUNTS.items()):
        tr.write_line(f"{entry:<48} {n:>7} {_fuzz.FAILURES[entry]:>21}")


def pytest_collection_modifyitems(config, items):
    """The privacy audits seed thousands of releases on purpose (to replay them); the
    SeedReleaseWarning each one issues is expected there and would flood the output."""
    import pytest

    quiet = pytest.mark.filterwarnings("ignore::privinfer.exceptions.SeedReleaseWarning")
    for item in items:
        if item.path.name == "test_privacy_audits.py":
            item.add_marker(quiet)
