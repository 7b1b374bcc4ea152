"""The data layer: reading tables (the ``reading`` package: ``read``, ``workbook``, ``repairs``, the memory budget
``budget``; from outside, under a hard memory limit: ``isolated``), profiling
columns (``profile``), the task (``task``), splits and the balanced test set (``split``), preprocessing
(``preprocess``) and the bundled samples with the paper's set-ups (``samples``). See docs/METHOD.md, "Evaluation
protocol". No model code here.

Everything a caller needs is importable from ``fairdash.data`` itself.
"""
from .preprocess import PlainPreprocessor, categorical_as_text, make_preprocessor
from .profile import (
                      HIGH_CARDINALITY,
                      MAX_CATEGORIES,
                      column_values,
                      default_features,
                      is_threshold_column,
                      left_out_by_default,
                      left_out_note,
                      profile_columns,
)
from .reading.isolated import read_table  # every table from outside: in a process of its own, under a hard memory limit
from .reading.read import MAX_BYTES
from .reading.repairs import clean_table
from .samples import (
                      ASSETS,
                      PAPER_SETUPS,
                      SAMPLES,
                      PaperSetup,
                      Sample,
                      build_paper_task,
                      load_sample,
                      paper_arrays,
                      paper_setup,
                      paper_task,
                      read_table_or_sample,
                      sample_of,
)
from .split import SPLIT_MEMO_SIZE, Arrays, Split, balanced_subset, prepare_arrays, split_arrays, split_task
from .task import Task, TaskSpec, build_task, strata_candidates

__all__ = [
    "ASSETS", "MAX_BYTES", "MAX_CATEGORIES", "HIGH_CARDINALITY", "PAPER_SETUPS", "SAMPLES", "SPLIT_MEMO_SIZE",
    "Arrays", "PaperSetup", "PlainPreprocessor", "Sample", "Split", "Task", "TaskSpec",
    "balanced_subset", "build_task", "categorical_as_text", "clean_table", "column_values", "default_features",
    "is_threshold_column", "left_out_by_default",
    "left_out_note", "build_paper_task", "load_sample", "make_preprocessor", "paper_arrays", "paper_setup",
    "paper_task", "prepare_arrays", "profile_columns", "read_table", "read_table_or_sample", "sample_of",
    "split_arrays", "split_task", "strata_candidates",
]
