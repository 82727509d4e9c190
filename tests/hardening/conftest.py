"""Hardening tests: print the fuzz counts per entry point after a campaign run."""

from __future__ import annotations

import json
import os


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    import _fuzz

    if not _fuzz.COUNTS:
        return
    total = sum(_fuzz.COUNTS.values())
    tr = terminalreporter
    tr.section(f"privinfer fuzz: {total} generated cases")
    for entry, n in sorted(_fuzz.COUNTS.items()):
        tr.write_line(f"{entry:<48} {n:>7}  (named failures {_fuzz.FAILURES[entry]})")
    out = os.environ.get("PRIVINFER_FUZZ_REPORT")
    if out:
        with open(out, "w") as fh:
            json.dump({"counts": dict(_fuzz.COUNTS), "named_failures": dict(_fuzz.FAILURES),
                       "total": total}, fh, indent=1, sort_keys=True)
