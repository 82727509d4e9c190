"""Regenerate ``treatment_snapshot.json`` (run from the repository root).

The stored file is the oracle of ``tests/models/test_snapshot_treatment.py``; it was made
by the pre-refactor implementation of the treatment models (commit fe577cc) and must only
be regenerated when a change of numbers is intended.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from treatment_cases import CASES, run_case  # noqa: E402


def main() -> None:
    out = {name: run_case(name) for name in CASES}
    (HERE / "treatment_snapshot.json").write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
