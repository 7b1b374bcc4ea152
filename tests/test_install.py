"""The project installs the Python way (issue 13): ``pip install .`` or ``pip install -e .`` gives a
``fairdash`` command, every subpackage is packaged, and the bundled samples ship inside the package, so
they are found from any working folder and in a non-editable install."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def test_the_fairdash_command_is_declared_and_points_at_the_cli():
    target = PYPROJECT["project"]["scripts"]["fairdash"]
    assert target == "fairdash.cli:main"
    from fairdash import cli

    assert callable(cli.main)


def test_every_subpackage_and_the_samples_are_packaged():
    from setuptools import find_packages

    find = PYPROJECT["tool"]["setuptools"]["packages"]["find"]
    found = set(find_packages(where=str(ROOT), include=find["include"]))
    on_disk = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "fairdash").rglob("__init__.py")}
    assert on_disk and on_disk == found  # no subpackage left out, nothing outside fairdash packaged

    from fairdash import data

    globs = PYPROJECT["tool"]["setuptools"]["package-data"]["fairdash"]
    shipped = {p.relative_to(ROOT / "fairdash").as_posix() for g in globs for p in (ROOT / "fairdash").glob(g)}
    for sample in data.SAMPLES.values():
        assert f"datasets/{sample.file}" in shipped
    assert "datasets/README.md" in shipped  # the provenance travels with the data


def _python_in(cwd: Path, code: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300)


def test_load_sample_works_from_another_working_folder(tmp_path):
    proc = _python_in(tmp_path, "from fairdash import data\n"
                                "print(len(data.load_sample('adult')), len(data.load_sample('compas')))")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.split() == ["45222", "6167"]


def test_the_command_line_reads_a_sample_from_another_working_folder(tmp_path):
    proc = _python_in(tmp_path, "import sys; from fairdash.cli import main; sys.exit(main(['rates', '--data', "
                                "'compas', '--s', 'race', '--s1', 'Caucasian', '--y', 'two-year-recid', "
                                "'--y1', '1', '--json']))")
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert '"base_rates"' in proc.stdout


def test_the_wheel_holds_the_command_every_subpackage_and_the_samples(tmp_path):
    """What ``pip install .`` installs: a wheel built from a copy of the sources (so nothing is written
    into the working tree), without network access (no build isolation: setuptools from this venv)."""
    pytest.importorskip("setuptools", reason="building a wheel needs setuptools in this environment")
    src = tmp_path / "src"
    src.mkdir()
    shutil.copy(ROOT / "pyproject.toml", src)
    shutil.copy(ROOT / "README.md", src)
    shutil.copytree(ROOT / "fairdash", src / "fairdash", ignore=shutil.ignore_patterns("__pycache__"))
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(tmp_path / "dist"), str(src)], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (wheel,) = (tmp_path / "dist").glob("fairdash-*.whl")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        entry_points = next(z.read(n).decode() for n in names if n.endswith(".dist-info/entry_points.txt"))
    assert "fairdash = fairdash.cli:main" in entry_points
    for pkg in sorted({".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "fairdash").rglob("__init__.py")}):
        assert pkg.replace(".", "/") + "/__init__.py" in names, pkg
    for f in ("adult.csv.gz", "compas.csv.gz", "README.md"):
        assert f"fairdash/datasets/{f}" in names, f
