"""Runs you can tell apart (issue 20, item 5): a run's title states its number, time, models, data, s and y,
criterion (and legitimate factor), target, decision rule and flags; an exact repeat says which run it repeats."""
from dataclasses import replace

import pandas as pd

from fairdash import data
from fairdash.files.run_spec import RunSpec
from fairdash.targeting.target_spec import make_target_spec
from fairdash.work.runs import Run


def _run(task, number, target=None, leaks=(), **task_changes):
    spec_task = replace(task.spec, **task_changes)
    spec = RunSpec(data="crime.csv.gz", task=spec_task, target=target or make_target_spec("dp", 0.55),
                   models=("fair-lr", "lr"), seeds=(0,))
    return Run(spec, task, "crime.csv.gz", pd.DataFrame(), number=number, leaks=leaks,
               created="2026-11-26T10:42:07+00:00")


def test_titles_say_what_differs():
    task = data.build_task(data.load_sample("compas"), data.TaskSpec("race", "two-year-recid", ("Caucasian",), ("1",)))
    plain = _run(task, 1)
    assert plain.title.startswith("Run 1 (10:42 UTC): FairLR, LR · crime.csv.gz · s = race, y = two-year-recid · "
                                  "demographic parity, PR_t 0.550")
    leaky = _run(task, 2, leaks=("violent-recid",))
    dropped = _run(task, 3, drop=("age",))
    conditional = _run(task, 4, target=make_target_spec("dp", 0.55, strata_column="sex"), strata_column="sex")
    rule = _run(task, 5, target=make_target_spec("dp", 0.55, decision="group-rates"))
    titles = [r.title.split(": ", 1)[1] for r in (plain, leaky, dropped, conditional, rule)]
    assert len(set(titles)) == len(titles)
    assert "trained with a leak (violent-recid)" in leaky.title and "without age" in dropped.title
    assert "given sex" in conditional.title and "group-rates (decides with s)" in rule.title
    assert plain.title in plain.description and "Target: demographic parity" in plain.description
    again = _run(task, 6)
    again.same_as = 1 if again.summary_parts() == plain.summary_parts() else 0
    assert again.title.endswith("same settings as Run 1")
