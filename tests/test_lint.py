"""Issue 37, item 3: one lint configuration (``[tool.ruff]`` in pyproject.toml: pycodestyle errors and warnings,
pyflakes, import order, McCabe complexity at most 25, lines of at most 120 characters), run by the suite."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PATHS = ["fairdash", "app.py", "pages", "tests", "benchmarks"]


def _ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--output-format", "concise",
                           *args, *PATHS], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_ruff_finds_nothing():
    done = _ruff()
    print(done.stdout, done.stderr)
    assert done.returncode == 0, done.stdout + done.stderr
