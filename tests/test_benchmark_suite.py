"""The benchmarks as a suite (issue 21, item 6): one runner that knows every benchmark, one shared record
(commit, versions, machine, load average) and no sys.path edits. Nothing here times anything."""
import json
import re
import subprocess
from pathlib import Path

import pytest

from benchmarks import common
from benchmarks.run import BENCHMARKS
from benchmarks.run import main as run_main

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "benchmarks"
HELPERS = {"__init__.py", "__main__.py", "common.py", "run.py", "readme_server.py", "minimal_slider_app.py",
           "gpu_env.sh"}


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
