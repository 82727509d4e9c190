"""A pytest plugin for the docstring-example run: every random draw must be seeded.

Privatisation and noise default to fresh entropy (``random_state=None``), so an example
that forgets its seed prints a different release on every run and fails now and then.
With this plugin such an example fails every time, naming the call.
"""

import numpy as np

_default_rng = np.random.default_rng


def _seeded_only(seed=None):
    if seed is None:
        raise RuntimeError(
            "a docstring example drew from fresh entropy: pass random_state=... "
            "so that its output is reproducible"
        )
    return _default_rng(seed)


def pytest_configure(config):
    np.random.default_rng = _seeded_only
