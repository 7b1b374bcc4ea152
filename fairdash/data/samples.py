"""The bundled samples (Adult, COMPAS; provenance in ``datasets/README.md``) and the paper's set-ups."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from ..errors import FairDashError
from ..targeting.criteria import DP, EO
from .reading import isolated
from .reading.read import read_table
from .split import Arrays, split_arrays
from .task import Task, TaskSpec, build_task

# The bundled samples ship inside the package (package data), so they are found from any working folder
# and in a non-editable install alike.
ASSETS = Path(__file__).resolve().parent.parent / "datasets"


@dataclass(frozen=True)
class Sample:
    name: str
    file: str
    title: str
    description: str
    s_column: str
    s1_values: tuple
    y_column: str
    y1_values: tuple
    positive_meaning: str
    drop: tuple = ()
    n_rows: int = 0  # rows of the bundled table (what its description counts)
    positive_favourable: bool = True  # is a positive label good for the person (names the disadvantaged group)


SAMPLES: dict[str, Sample] = {
    "adult": Sample(
        "adult", "adult.csv.gz", "Adult (UCI Census Income)",
        "45,222 people from the 1994 US census; the label is whether income exceeds $50K a year.",
        "sex", ("Male",), "salary", (">50K",), "income above $50K a year (a favourable outcome)",
        ("fnlwgt",), 45222, True,
    ),
    "compas": Sample(
        "compas", "compas.csv.gz", "COMPAS (ProPublica two-year recidivism)",
        "6,167 defendants from Broward County, Florida; the label is whether the person was "
        "rearrested within two years.",
        "race", ("Caucasian",), "two-year-recid", ("1",),
        "rearrested within two years (NOT a favourable outcome for the person; it is what the paper "
        "calls positive)", (), 6167, False,
    ),
}


def load_sample(name: str) -> pd.DataFrame:
    """A bundled data set by name (``adult`` or ``compas``), read from the package's ``datasets`` folder."""
    if name not in SAMPLES:
        raise FairDashError(f"Unknown sample {name!r}. Bundled samples: {', '.join(SAMPLES)}.")
    return read_table(ASSETS / SAMPLES[name].file)


def sample_of(task) -> Sample | None:
    """The bundled sample a task was built from, judged by what the task holds, or ``None``: the sample's
    row count read, its label column with its positive values, and every feature one of its columns. A
    sample's description (its rows, what its label means) describes such a task and no other: not an
    upload, not a part of the sample, not the sample with another label."""
    spec = task.spec
    for sample in SAMPLES.values():
        if (int(task.n_rows_read or len(task.y)) == sample.n_rows and spec.y_column == sample.y_column
                and set(map(str, spec.y1_values)) == set(sample.y1_values) and spec.y_threshold is None
                and set(task.features) <= set(_sample_columns(sample.name))):
            return sample
    return None


_COLUMNS: dict = {}


def _sample_columns(name: str) -> tuple:
    if name not in _COLUMNS:
        _COLUMNS[name] = tuple(load_sample(name).columns)
    return _COLUMNS[name]


def read_table_or_sample(source: str) -> pd.DataFrame:
    """A bundled sample by name (``adult``, ``compas``), or else a table file at that path."""
    if source in SAMPLES and not Path(source).exists():
        return load_sample(source)
    return isolated.read_table(source)


@dataclass(frozen=True)
class PaperSetup:
    name: str
    sample: str
    spec: TaskSpec
    criterion: str  # its criterion's name, read in place of --criterion (DP: the balanced test set; EO: the test set)


PAPER_SETUPS: dict[str, PaperSetup] = {
    "adult-sex": PaperSetup("adult-sex", "adult", TaskSpec("sex", "salary", ("Male",), (">50K",), drop=("fnlwgt",),
                                                          positive_favourable=True), DP.name),
    "adult-race": PaperSetup("adult-race", "adult", TaskSpec("race", "salary", ("White",), (">50K",), drop=("fnlwgt",),
                                                            positive_favourable=True), DP.name),
    # COMPAS: 1 = rearrested within two years, the paper's positive label, unfavourable for the person
    "compas-sex": PaperSetup("compas-sex", "compas", TaskSpec("sex", "two-year-recid", ("Male",), ("1",),
                                                            positive_favourable=False), EO.name),
    "compas-race": PaperSetup("compas-race", "compas", TaskSpec("race", "two-year-recid", ("Caucasian",), ("1",),
                                                              positive_favourable=False), EO.name),
}


def paper_setup(name: str) -> PaperSetup:
    if name not in PAPER_SETUPS:
        raise FairDashError(f"Unknown paper set-up {name!r}. Known: {', '.join(PAPER_SETUPS)}.")
    return PAPER_SETUPS[name]


_TASK_CACHE: dict = {}


def build_paper_task(name: str, table: pd.DataFrame | None = None) -> Task:
    """The paper's task for a set-up name, built from ``table`` (the bundled sample when ``None``) and
    marked as the paper's set-up (``task.paper_setup``), so that the models that solve as the paper did
    (ZafarAccuracy in raw units) do so. The one place a paper task is made: the library path
    (:func:`paper_task`) and the command line's ``--paper`` both come here."""
    setup = paper_setup(name)
    task = build_task(load_sample(setup.sample) if table is None else table, setup.spec)
    task.paper_setup = name
    return task


def paper_task(name: str) -> Task:
    """The paper's task for a set-up name (cached per process)."""
    if name not in _TASK_CACHE:
        _TASK_CACHE[name] = build_paper_task(name)
    return _TASK_CACHE[name]


def paper_arrays(setup: str, seed: int = 0) -> Arrays:
    """The paper's preprocessed train/test arrays for a set-up and seed."""
    return split_arrays(paper_task(setup), seed)
