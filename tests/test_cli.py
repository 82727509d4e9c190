"""The ``privinfer`` console script: version, usage errors, help text, demo warnings."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import privinfer
from privinfer.cli import MIN_EFFECTIVE_N, main


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    try:
        code = main(list(argv))
    except SystemExit as exc:
        code = exc.code
    out, err = capsys.readouterr()
    return code, out, err


def test_version(capsys):
    code, out, _err = _run(capsys, "--version")
    assert code == 0
    assert out.strip() == f"privinfer {privinfer.__version__}"


@pytest.mark.parametrize(
    "argv, fragment",
    [
        (("demo", "--alpha", "0"), "(0, 1]"),
        (("demo", "--alpha", "1.5"), "(0, 1]"),
        (("demo", "--alpha", "nan"), "(0, 1]"),
        (("demo", "--alpha", "half"), "expected a number"),
        (("demo", "--n", "-3"), "at least"),
        (("demo", "--n", "12.5"), "whole number"),
        (("demo", "--seed", "-1"), "non-negative"),
        (("demo", "--bogus"), "unrecognized arguments"),
        (("frobnicate",), "invalid choice"),
    ],
)
def test_argument_errors_are_one_line_usage_errors(capsys, argv, fragment):
    code, out, err = _run(capsys, *argv)
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "error:" in lines[0] and fragment in lines[0]
    assert "Traceback" not in err


def test_no_command_prints_help_and_exits_2(capsys):
    code, _out, err = _run(capsys)
    assert code == 2
    assert "demo" in err and "usage:" in err


@pytest.mark.parametrize("argv", [("--help",), ("demo", "--help")])
def test_help_text_has_no_markup(capsys, argv):
    code, out, _err = _run(capsys, *argv)
    assert code == 0
    assert "usage:" in out
    for markup in ("``", ":math:", ":class:", ":func:", ".. "):
        assert markup not in out


def test_console_script_exit_code_in_a_subprocess():
    proc = subprocess.run(
        [sys.executable, "-m", "privinfer.cli", "demo", "--alpha", "0"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_demo_warns_when_n_alpha_squared_is_small(capsys):
    n, alpha = 200, 0.5
    assert n * alpha**2 < MIN_EFFECTIVE_N
    code, out, err = _run(capsys, "demo", "--n", str(n), "--alpha", str(alpha))
    assert code == 0
    assert "warning:" in err and "unreliable" in err
    assert "--n 2000" in err  # 500 / 0.25
    assert "PrivateATE Results" in out


def test_demo_is_quiet_at_default_settings(capsys):
    code, out, err = _run(capsys, "demo", "--n", "5000")
    assert code == 0
    assert err == ""
    assert "PrivateATT Results" in out and "non-private" in out


@pytest.mark.parametrize("alpha", ["1e-155", "1e-200"])
def test_demo_at_a_tiny_alpha_warns_without_a_traceback(capsys, alpha):
    code, _out, err = _run(capsys, "demo", "--n", "60", "--alpha", alpha)
    assert code == 0
    assert "no feasible --n" in err and "raise --alpha" in err


def test_demo_with_an_n_too_large_for_memory_is_a_one_line_error(capsys):
    # 10**15 records need petabytes: numpy refuses the allocation at once
    code, out, err = _run(capsys, "demo", "--n", str(10**15))
    assert code == 1
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "not enough memory" in lines[0], err
    assert "Traceback" not in err


def test_demo_piped_into_a_reader_that_stops_early_ends_quietly():
    # privinfer demo | head -1: the reader closes the pipe after the first line (output
    # unbuffered, so that the demo writes on after the pipe is closed)
    proc = subprocess.Popen(
        [sys.executable, "-m", "privinfer.cli", "demo", "--n", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout.readline().startswith("privinfer")
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=300) == 1
    assert "Traceback" not in err and "BrokenPipeError" not in err, err


def test_python_dash_m_privinfer_runs_the_console_script():
    proc = subprocess.run(
        [sys.executable, "-m", "privinfer", "--version"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"privinfer {privinfer.__version__}"
    proc = subprocess.run(
        [sys.executable, "-m", "privinfer", "demo", "--alpha", "0"],
        capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("privinfer demo: error:")
    assert len(proc.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("argv", [("demo", "--bogus"), ("demo", "extra")])
def test_an_unknown_demo_argument_points_to_the_demo_help(capsys, argv):
    code, out, err = _run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.strip().splitlines() == [
        f"privinfer demo: error: unrecognized arguments: {argv[1]} "
        "(see 'privinfer demo --help')"
    ]
