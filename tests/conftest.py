"""Shared pytest configuration.

The suite runs on every core (``-n auto`` from pytest-xdist, set in ``pyproject.toml``);
each worker process then keeps its numerical libraries to one thread, so that the workers
do not oversubscribe the cores.
"""

import os


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-summary",
        action="store_true",
        default=False,
        dest="fuzz_summary",
        help="after the run, print how many fuzz inputs each privinfer entry point saw and "
        "how many it rejected as designed (tests/hardening); the counts live in the "
        "process that ran the tests, so add -n 0",
    )


def pytest_configure(config):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1)
    config.addinivalue_line(
        "markers", "slow: runs a subprocess (Sphinx build, doctests, vignettes); not skipped"
    )
