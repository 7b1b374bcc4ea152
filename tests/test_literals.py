"""Issue 37, item 1: the tables carry the names. A results column with a set's prefix (``pop_``, ``bal_``) is named
by the metric table (``column_of``, ``Metric.column``, ``prefix_of``, ``POP_PREFIX``...) and nowhere else; a
criterion is named by the criteria table (``criteria.DP``, ``EO``, ``DEFAULT``, ``CRITERIA``, ``MODES``) and nowhere
else but the CLI's parser. Checked on the string constants of the code (f-strings' pieces too) and, for the quoted
forms a reader would grep for (``"pop_"``, ``'dp'``), on the docstrings as well."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "fairdash"
PREFIX_HOME = {PKG / "evaluation" / "metric_table.py"}
CRITERION_HOMES = {PKG / "targeting" / "criteria.py", PKG / "cli" / "options.py"}
PREFIXES = ("pop_", "bal_")
CRITERIA = ("dp", "eo")
# Files committed by other sessions while this check was made, with how many hits each still holds: a ratchet (the
# count may only fall; remove a file's entry once it names its columns with ``column_of``).
PENDING_PREFIXES: dict = {}
QUOTED_PREFIX = re.compile(r"[\"'](pop_|bal_)")
QUOTED_CRITERION = re.compile(r"[\"'](dp|eo)[\"']")


def _sources() -> list[Path]:
    return [*sorted(PKG.rglob("*.py")), *sorted((ROOT / "pages").glob("*.py")), ROOT / "app.py"]


def _strings(text: str) -> list[tuple[int, str, bool]]:
    """Every string constant of a module, an f-string's literal pieces one by one: ``(line, value, is_docstring)``."""
    tree = ast.parse(text)
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [(n.lineno, n.value, id(n) in docs) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)]


def prefix_literals(text: str) -> list[str]:
    """A set's prefix written as text: a string (or an f-string's piece) that starts with it, or a quoted one."""
    return [f"{line}: {value[:60]!r}" for line, value, doc in _strings(text)
            if (not doc and value.startswith(PREFIXES)) or QUOTED_PREFIX.search(value)]


def criterion_literals(text: str) -> list[str]:
    """A criterion's name written as text: a string that is one, or one quoted inside a string."""
    return [f"{line}: {value[:60]!r}" for line, value, doc in _strings(text)
            if (not doc and value in CRITERIA) or QUOTED_CRITERION.search(value)]


def _found(check, homes, pending=None) -> list[str]:
    found = []
    for p in _sources():
        hits = [] if p in homes else check(p.read_text(encoding="utf-8"))
        if len(hits) > (pending or {}).get(p, 0) or (p in (pending or {}) and not hits):
            found += ([f"{p.relative_to(ROOT)}:{hit}" for hit in hits]
                      or [f"{p.relative_to(ROOT)}: clean now, drop it from PENDING_PREFIXES"])
    return found


@pytest.mark.slow
def test_no_prefixed_column_is_written_outside_the_metric_table():
    found = _found(prefix_literals, PREFIX_HOME, PENDING_PREFIXES)
    assert not found, found
    assert prefix_literals((PKG / "evaluation" / "metric_table.py").read_text(encoding="utf-8")), \
        "the check no longer sees the metric table's own prefixes"


def test_no_criterion_name_is_written_outside_the_criteria_module_and_the_parser():
    found = _found(criterion_literals, CRITERION_HOMES)
    assert not found, found
    assert criterion_literals((PKG / "targeting" / "criteria.py").read_text(encoding="utf-8")), \
        "the check no longer sees the criteria module's own names"


def test_the_literal_checks_see_what_they_should():
    code = '''
"""A module whose docstring says pop_pr_0 and dp in words: words about a thing are not the thing."""
a = "pop_accuracy"
b = f"bal_{name}_mean"
c = f"{x}pop_gap_{g}"
d = "dp"
e = {"eo": 1}
f = "use 'dp' or 'eo'"
g = "population", "deep", "eo-targets", "the pop_ columns"
'''
    assert [h.split(":")[0] for h in prefix_literals(code)] == ["3", "4", "5"]
    assert sorted(h.split(":")[0] for h in criterion_literals(code)) == ["6", "7", "8"]
    assert not prefix_literals('x = "population"; y = POP_PREFIX + "gap_"')
    assert not criterion_literals("x = DP.name; y = criteria.DEFAULT")
