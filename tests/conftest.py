"""Shared pytest configuration."""


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "slow: runs a subprocess (Sphinx build, doctests, vignettes); not skipped"
    )
