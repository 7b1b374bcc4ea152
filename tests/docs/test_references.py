"""Issue 48, item 6: the cross-references in FairDash's words point at what exists.

- A dotted name in backticks, or a Sphinx role's target (``:func:`x.y```), whose first part is ``fairdash`` or the
  name of one of its modules or packages (``work.experiments.run_experiment``, ``decision.row_draws``,
  ``fairdash.device.resolve_device``), must resolve: some module of FairDash whose dotted name ends with a leading
  part of the name imports, and the rest is a chain of attributes of it or of one of its classes (a function, a
  class, a constant, a method, a field: ``task.X`` is a Task's X).
- A path to a Python or Markdown file (``fairdash/app/ui/text.py``, ``core/base.py``, ``app.py``) must be the end of
  a file's path in the repository (a word in capitals is a placeholder: ``benchmarks/results/DATE-models.md``).

Not names of FairDash's, the two rules that keep false alarms out: a file's name (``table.parquet``; ``.py`` and
``.md`` ones are paths, and a bare one is checked only where its stem is a module's name: ``app.py``, not
``plotly.py``) and a name with a camelCase part (Streamlit's options: ``server.maxUploadSize``).

Read: the docstrings and comments of ``fairdash/``, the pages, the root's modules, ``benchmarks/*.py`` and ``tests/``,
and ``README.md`` and ``docs/*.md``. Not read: ``benchmarks/results/``, dated records of what was true then."""
from __future__ import annotations

import ast
import importlib
import io
import re
import tokenize
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PKG = ROOT / "fairdash"
MODULES = sorted(".".join(p.relative_to(ROOT).with_suffix("").parts[:-1] if p.name == "__init__.py"
                          else p.relative_to(ROOT).with_suffix("").parts) for p in PKG.rglob("*.py"))
FIRST_PARTS = {"fairdash"} | {part for m in MODULES for part in m.split(".")[1:]}

# ``x.y.z``, ``~x.y.z`` or ``x.y.z(...)`` filling a pair of backticks (one or two), or a Sphinx role's target
DOTTED = re.compile(r"(?:^|[^`])`{1,2}~?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?:\(.*?\))?`")
ROLE = re.compile(r":(?:mod|func|class|meth|attr|data|obj):`~?([A-Za-z_][\w.]*)`")
PATH = re.compile(r"(?<![\w./-])((?:[\w-]+/)*[\w-]+\.(?:py|md))\b")
# what is not a name of FairDash's: a file's name (``table.parquet``, ``app.py``: a path if .py or .md), a camelCase
# part (Streamlit's options, ``server.maxUploadSize``)
NOT_A_NAME = re.compile(r"\.(py|md|parquet|jsonl?|csv|log|txt|html|toml|zip|gz|xlsx)$|(^|\.)[a-z][a-z0-9]*[A-Z]")
FILES = [p.relative_to(ROOT).as_posix() for p in ROOT.rglob("*.*") if p.suffix in (".py", ".md")
         and not {".venv", "node_modules", ".git"} & set(p.relative_to(ROOT).parts)]


def _python_words(path: Path) -> list[tuple[int, str]]:
    """``(line, text)`` of a Python file's docstrings and comments."""
    text = path.read_text(encoding="utf-8")
    words = [(t.start[0], t.string) for t in tokenize.generate_tokens(io.StringIO(text).readline)
             if t.type == tokenize.COMMENT]
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) \
                    and isinstance(first.value.value, str):
                words += [(first.lineno + i, line) for i, line in enumerate(first.value.value.splitlines())]
    return words


def _sources() -> list[Path]:
    return [*sorted(PKG.rglob("*.py")), *sorted((ROOT / "pages").glob("*.py")), *sorted(ROOT.glob("*.py")),
            *sorted((ROOT / "benchmarks").glob("*.py")), *sorted((ROOT / "tests").rglob("*.py")),
            ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _words(path: Path) -> list[tuple[int, str]]:
    if path.suffix == ".py":
        return _python_words(path)
    return list(enumerate(path.read_text(encoding="utf-8").splitlines(), 1))


def references(path: Path) -> list[tuple[int, str, str]]:
    """``(line, kind, reference)`` of a file's words: kind ``name`` (a dotted name that looks like FairDash's) or
    ``path``."""
    found = []
    for line, text in _words(path):
        names = DOTTED.findall(text) + [n for n in ROLE.findall(text) if "." in n]
        found += [(line, "name", n) for n in names if n.split(".")[0] in FIRST_PARTS and not NOT_A_NAME.search(n)]
        found += [(line, "path", p) for p in PATH.findall(text)  # a bare file name only if a module's (app.py)
                  if "/" in p or p.rsplit(".", 1)[0] in FIRST_PARTS]
    return list(dict.fromkeys(found))  # a role's target is also a name in backticks


@cache
def _attribute(module: str, rest: tuple[str, ...]) -> bool:
    """Whether ``rest`` is a chain of attributes of ``module``, or of one of its classes (``task.X``: a Task's X)."""
    try:
        mod = importlib.import_module(module)
    except ImportError:
        return False
    classes = [c for c in vars(mod).values() if isinstance(c, type) and c.__module__ == module]
    return any(_has(obj, rest) for obj in [mod, *classes])


def _has(obj, rest: tuple[str, ...]) -> bool:
    for part in rest:
        fields = getattr(obj, "__dataclass_fields__", {}) or getattr(obj, "__annotations__", {})
        if not hasattr(obj, part) and part not in fields:
            return False
        obj = getattr(obj, part, None)
    return True


def resolves(name: str) -> bool:
    """Whether some module of FairDash ending with a leading part of ``name`` has the rest as attributes."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        lead = ".".join(parts[:k])
        for m in MODULES:
            if (m == lead or m.endswith("." + lead)) and _attribute(m, tuple(parts[k:])):
                return True
    return False


def path_exists(path: str) -> bool:
    """Whether a file of the repository ends with ``path`` (a word in capitals is a placeholder:
    ``benchmarks/results/DATE-models.md``)."""
    pattern = re.compile("(^|/)" + re.sub(r"[A-Z]{3,}", r"[^/]*", re.escape(path)) + "$")
    return any(pattern.search(f) for f in FILES)


def stale_references() -> list[str]:
    stale = []
    for p in _sources():
        for line, kind, ref in references(p):
            if not (resolves(ref) if kind == "name" else path_exists(ref)):
                stale.append(f"{p.relative_to(ROOT)}:{line}: {ref}")
    return stale


@pytest.mark.timeout(600)
def test_every_cross_reference_points_at_what_exists():
    stale = stale_references()
    assert not stale, f"{len(stale)} stale references:\n" + "\n".join(stale)


def test_the_reference_check_sees_what_it_should(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('"""See :class:`~fairdash.work.experiments.Run`, ``models.inputs.row_draws``, ``task.X``,\n'
                      '``decision.row_draws(X, seed)``, ``np.mean``, ``self.x``, `fairdash.device`,\n'
                      '``table.parquet``, ``server.maxUploadSize``."""\n'
                      "# fairdash/app/ui.py, docs/METHOD.md, core/base.py, app.py and plotly.py, not numpy/linalg.py\n")
    refs = {r: (resolves(r) if k == "name" else path_exists(r)) for _, k, r in references(sample)}
    assert refs == {"fairdash.work.experiments.Run": False, "models.inputs.row_draws": False, "task.X": True,
                    "decision.row_draws": True, "fairdash.device": True, "fairdash/app/ui.py": False,
                    "docs/METHOD.md": True, "core/base.py": True, "app.py": True, "numpy/linalg.py": False}
