"""Issue 37, item 3: one lint configuration (``[tool.ruff]`` in pyproject.toml: pycodestyle errors and warnings,
pyflakes, import order, McCabe complexity at most 25, lines of at most 120 characters), run by the suite.

Issue 48, item 5: ruff checks the whole checkout as ``ruff check .`` at its root does (what it leaves out is
written in ``extend-exclude``), and vulture's dead-code check runs here with the command and confidence that
vulture_whitelist.py's docstring gives."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WHITELIST = ROOT / "vulture_whitelist.py"


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing():
    done = _run("ruff", "check", "--no-cache", "--output-format", "concise", ".")
    print(done.stdout, done.stderr)
    assert done.returncode == 0, done.stdout + done.stderr


def _vulture_command() -> list[str]:
    """The command in the whitelist's docstring, so that the two cannot drift apart."""
    line = next(ln.strip() for ln in WHITELIST.read_text().splitlines() if ln.strip().startswith("vulture "))
    return line.split()


def test_vulture_finds_no_dead_code():
    command = _vulture_command()
    assert "vulture_whitelist.py" in command and re.search(r"--min-confidence \d+", " ".join(command)), command
    done = _run(*command)
    print(done.stdout, done.stderr)
    assert done.returncode == 0, done.stdout + done.stderr
