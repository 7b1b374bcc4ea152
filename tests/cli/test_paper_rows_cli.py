"""Issue 27, item 2: the paper's rows through every path. ``--paper`` on the command line is the paper's
set-up (the task is marked as it, so ZafarAccuracy solves in raw units as in the library path), and Table
1's rows through ``sweep --paper`` are the library's numbers (at a small size: a 3,000-row part of Adult)."""
import pandas as pd
import pytest

from fairdash import data
from fairdash.cli import main
from fairdash.cli.main import build_parser
from fairdash.cli.options import load_task_and_table, target_spec_from_args
from fairdash.files.results_file import from_file
from fairdash.work.experiments import ExperimentPlan, run_experiment

# Table 1's rows (demographic parity) that fit in a test on a CPU: the GPs (gp, fair-gp) are left to the benchmark
ROWS = ("lr", "svm", "fair-lr", "zafar-accuracy", "zafar-fairness", "kamiran", "agarwal")
COMPARED = ("accuracy", "pr_ratio", "pr_0", "pr_1", "pop_accuracy", "pop_pr_ratio")


@pytest.mark.parametrize("setup", ["adult-sex", "adult-race", "compas-race"])
def test_paper_option_builds_the_papers_set_up(setup):
    args = build_parser().parse_args(["sweep", "--paper", setup, "--out", "x.csv"])
    task, _, _ = load_task_and_table(args)
    assert task.paper_setup == setup
    assert data.paper_task(setup).paper_setup == setup


@pytest.fixture
def small_adult(monkeypatch, adult_table):
    small = adult_table.sample(n=3000, random_state=0).reset_index(drop=True)
    monkeypatch.setattr(data, "load_sample", lambda name: small.copy())
    return small


@pytest.mark.slow
def test_table_1_rows_through_the_command_line_are_the_library_numbers(small_adult, tmp_path, capsys):
    out = tmp_path / "t1.csv"
    code = main(["sweep", "--paper", "adult-sex", "--models", ",".join(ROWS), "--pr-t", "0.3", "--repeats", "1",
                 "--no-cache", "--out", str(out)])
    assert code == 0, capsys.readouterr().err
    cli = from_file(pd.read_csv(out)).set_index("model")
    args = build_parser().parse_args(["sweep", "--paper", "adult-sex", "--out", "x.csv"])
    spec = target_spec_from_args(args, data.paper_setup("adult-sex"), rate=None)
    lib = run_experiment(ExperimentPlan(data.build_paper_task("adult-sex", small_adult), list(ROWS), [0.3], [0],
                                        target=spec, device="cpu")).results.set_index("model")
    assert set(cli.index) == set(ROWS)
    for m in ROWS:
        for col in COMPARED:
            assert cli.loc[m, col] == pytest.approx(lib.loc[m, col], abs=1e-9, nan_ok=True), (m, col)


@pytest.mark.slow
def test_zafar_accuracy_row_of_table_1_through_the_command_line(tmp_path, capsys):
    """Issue 27's measure: PR ratio at least 0.61 at accuracy at least 0.83 over 3 repeats (measured 0.777 +-
    0.039 at 0.832 +- 0.021; before the fix 0.373 +- 0.016 at 0.912, the standardised columns' solution)."""
    out = tmp_path / "za.csv"
    assert main(["sweep", "--paper", "adult-sex", "--models", "zafar-accuracy", "--repeats", "3", "--no-cache",
                 "--out", str(out)]) == 0, capsys.readouterr().err
    res = from_file(pd.read_csv(out))
    assert res["pr_ratio"].mean() >= 0.61 and res["accuracy"].mean() >= 0.83
