"""Shared pytest configuration."""


def pytest_addoption(parser):
    parser.addoption(
        "--fuzz-summary",
        action="store_true",
        default=False,
        dest="fuzz_summary",
        help="after the run, print how many fuzz inputs each privinfer entry point saw and "
        "how many it rejected as designed (tests/hardening)",
    )


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: runs a subprocess (Sphinx build, doctests, vignettes); not skipped"
    )
