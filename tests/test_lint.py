"""Issue 37, item 3: one lint configuration (``[tool.ruff]`` in pyproject.toml: pycodestyle errors and warnings,
pyflakes, import order, McCabe complexity at most 25, lines of at most 120 characters), run by the suite.

Long lines (E501) are a ratchet while the older ones are wrapped: ``ruff check`` reports them, and this test
refuses more of them than ``LONG_LINES_LEFT``; lower the number as lines are wrapped."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["fairdash", "app.py", "pages", "tests", "benchmarks"]
# Lines over 120 characters still in PATHS when the lint came in (issue 37: to wrap); may only fall.
LONG_LINES_LEFT = 226


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise",
                           *args, *PATHS], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing():
    done = _ruff("--extend-ignore", "E501")
    print(done.stdout, done.stderr)
    assert done.returncode == 0, done.stdout + done.stderr


def test_no_new_long_lines():
    done = _ruff("--select", "E501")
    found = [line for line in done.stdout.splitlines() if " E501 " in line]
    print("\n".join(found))
    assert len(found) <= LONG_LINES_LEFT, f"{len(found)} lines over 120 characters (at most {LONG_LINES_LEFT}):\n" + \
        "\n".join(found)
