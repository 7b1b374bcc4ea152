"""The benchmarks as a suite (issue 21, item 6): one runner that knows every benchmark, one shared record
(commit, versions, machine, load average) and no sys.path edits; and as a home (issue 48, item 1): every script
imports and answers --help, every fairdash name a shell script uses imports, every result a benchmark feeds is
there. Nothing here times anything."""
import importlib
import json
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path

import pytest

from benchmarks import common
from benchmarks.run import BENCHMARKS
from benchmarks.run import main as run_main

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
HELPERS = {"__init__.py", "__main__.py", "common.py", "run.py", "readme_server.py", "minimal_slider_app.py"}
STREAMLIT_SCRIPTS = {"minimal_slider_app.py"}  # run by `streamlit run`, not imported: its top level draws a page
SCRIPTS = sorted(p.name for p in BENCH.glob("*.py")  # __main__ runs the runner when imported
                 if p.name not in STREAMLIT_SCRIPTS | {"__init__.py", "__main__.py"})
SHELL = sorted(p.name for p in BENCH.glob("*.sh"))
WITH_HELP = sorted({f"{b.module}.py" for b in BENCHMARKS if not b.shell} | {"run.py", "__main__.py"}) + SHELL


def test_the_runner_knows_every_benchmark_and_every_entry_exists():
    scripts = {p.name for p in BENCH.glob("*.py")} - HELPERS
    scripts |= {p.name for p in BENCH.glob("*.sh")} - HELPERS
    listed = {b.module if b.shell else f"{b.module}.py" for b in BENCHMARKS}
    assert listed == scripts
    assert len({b.name for b in BENCHMARKS}) == len(BENCHMARKS)


@pytest.mark.parametrize("path", sorted(p.name for p in BENCH.glob("*.py")), ids=str)
def test_no_benchmark_edits_sys_path_or_keeps_its_own_machine_description(path):
    text = (BENCH / path).read_text()
    assert not re.search(r"sys\.path\.(insert|append)", text)
    assert path == "common.py" or not re.search(r"^def machine\(", text, flags=re.M)
    assert path in HELPERS or "Recording(" in text  # every benchmark writes the shared record


def test_the_top_level_holds_scripts_and_results_live_under_results():
    """benchmarks/ is a home: scripts, the README and results/; measurements are dated files under results/."""
    loose = {p.name for p in BENCH.iterdir() if not p.name.startswith((".", "__pycache__"))}
    loose -= {p.name for p in BENCH.glob("*.py")} | set(SHELL) | {"README.md", "results"}
    assert not loose, f"move these under benchmarks/results/ (dated): {sorted(loose)}"
    undated = [p.name for p in (BENCH / "results").iterdir()
               if not re.match(r"\d{4}-\d{2}-\d{2}-", p.name) and not re.match(r"[a-z_]+(-[\w-]+)?\.json$", p.name)
               and p.name != "quick"]
    assert not undated, f"name each result YYYY-MM-DD-what (JSON records keep <module>[-label].json): {undated}"


def test_every_result_a_benchmark_feeds_is_there_and_the_readme_links_it():
    readme = (BENCH / "README.md").read_text()
    for b in BENCHMARKS:
        assert (BENCH / b.writes).exists(), (b.name, b.writes)
        assert f"]({b.writes})" in readme, f"benchmarks/README.md does not link {b.writes} ({b.name})"


def test_every_file_the_readme_links_exists():
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", (BENCH / "README.md").read_text()):
        if not target.startswith("http"):
            assert (BENCH / target).exists(), target


@pytest.mark.parametrize("path", SCRIPTS, ids=str)
def test_every_script_imports(path):
    importlib.import_module(f"benchmarks.{path[:-3]}")


@cache
def _help_runs() -> dict:
    """Every script's --help, run side by side (four at a time: the machine may be busy) in fresh processes."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}

    def one(name):
        cmd = ["bash", str(BENCH / name), "--help"] if name.endswith(".sh") else \
            [sys.executable, "-m", "benchmarks" if name == "__main__.py" else f"benchmarks.{name[:-3]}", "--help"]
        try:
            return subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
        except subprocess.TimeoutExpired as e:  # a hang, not a slow machine: 600 s is far beyond an import
            return subprocess.CompletedProcess(cmd, -1, "", f"no answer to --help in 600 s: {e}")

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(WITH_HELP, pool.map(one, WITH_HELP)))


@pytest.mark.parametrize("path", WITH_HELP, ids=str)
def test_every_script_answers_help_and_stops(path):
    """--help prints the options and exits 0 without running anything (so no record is written)."""
    run = _help_runs()[path]
    assert run.returncode == 0, run.stderr[-2000:]
    assert "usage" in run.stdout.lower() or "--" in run.stdout, run.stdout[:500]


def _names_in_shell(text: str) -> set:
    """The dotted fairdash and benchmarks names a shell script runs or imports (its here-documents included)."""
    return set(re.findall(r"\b((?:fairdash|benchmarks)(?:\.[A-Za-z_]\w*)*)", text)) - {"benchmarks"}


@pytest.mark.parametrize("path", SHELL, ids=str)
def test_every_fairdash_name_in_a_shell_script_imports(path):
    """gpu_check_18.sh and gpu_check_21.sh imported fairdash.experiments and fairdash.target_spec long after
    both had moved; nothing noticed until a GPU was lent. Each dotted name must resolve: the longest prefix
    that is a module, the rest attributes of it."""
    names = _names_in_shell((BENCH / path).read_text())
    text = (BENCH / path).read_text()
    for imported in re.findall(r"from ([\w.]+) import ([\w, ]+)", text):
        names |= {f"{imported[0]}.{n.strip()}" for n in imported[1].split(",") if imported[0].startswith("fairdash")}
    for name in sorted(n for n in names if not n.startswith("benchmarks/")):
        parts = name.split(".")
        for i in range(len(parts), 0, -1):
            try:
                obj = importlib.import_module(".".join(parts[:i]))
            except ModuleNotFoundError:
                continue
            for attr in parts[i:]:
                assert hasattr(obj, attr), f"{path}: {name} does not resolve ({'.'.join(parts[:i])} has no {attr})"
                obj = getattr(obj, attr)
            break
        else:
            pytest.fail(f"{path}: {name} does not import")


def test_the_shell_check_catches_a_stale_module():
    assert "fairdash.experiments" in _names_in_shell("from fairdash.experiments import fit_model")
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module("fairdash.experiments")


def test_the_list_names_each_benchmark_and_an_unknown_name_is_refused(capsys):
    assert run_main([]) == 0
    out = capsys.readouterr().out
    assert all(b.name in out for b in BENCHMARKS)
    assert run_main(["no-such-benchmark"]) == 2
    assert "unknown benchmark" in capsys.readouterr().err


def test_a_record_holds_commit_versions_machine_load_and_results(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIRDASH_BENCH_RESULTS", str(tmp_path))
    with common.Recording("probe", {"repeats": 1}) as rec:
        rec.results["figure"] = {"seconds": [0.5, float("nan")]}
        rec.markdown = "| a |"
        line = rec.machine_line()
    record = json.loads((tmp_path / "probe.json").read_text())
    assert record["benchmark"] == "probe" and record["status"] == "ok" and record["options"] == {"repeats": 1}
    assert record["results"] == {"figure": {"seconds": [0.5, None]}} and record["markdown"] == "| a |"
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    if head.returncode == 0:
        assert record["commit"]["sha"] == head.stdout.strip() and isinstance(record["commit"]["dirty"], bool)
    from fairdash._version import software_versions

    assert record["software"] == software_versions()
    m = record["machine"]
    assert m["cpu"] and m["cores"] >= 1 and m["torch_device"] in ("cpu", "cuda", "cuda:0")
    assert len(record["load_average"]["before"]) == len(record["load_average"]["after"]) == 3
    assert record["started_utc"].endswith("+00:00") and record["seconds"] >= 0
    assert m["cpu"] in line and "load average" in line and "fairdash" in line


def test_a_failed_run_still_leaves_its_record(tmp_path, monkeypatch):
    monkeypatch.setenv("FAIRDASH_BENCH_RESULTS", str(tmp_path))
    with pytest.raises(ValueError):
        with common.Recording("broken"):
            raise ValueError("no such set-up")
    assert json.loads((tmp_path / "broken.json").read_text())["status"] == "failed: ValueError: no such set-up"
