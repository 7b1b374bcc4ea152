"""Issue 14: the house rules a maintainer relies on, checked on the source: no module of fairdash over
600 lines, no import cycle between fairdash's modules (imports inside functions count), no private API
of Streamlit or gpytorch, the library never imports Streamlit outside its glue package ``fairdash.app``, the layers never import upwards,
and the pages stay thin (850 lines in all)."""
import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "fairdash"


def _module(p: Path) -> str:
    parts = list(p.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _graph() -> dict:
    mods = {_module(p): p for p in PKG.rglob("*.py")}
    graph = {}
    for m, p in mods.items():
        pkg = m if p.name == "__init__.py" else m.rsplit(".", 1)[0]
        deps = set()
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = pkg.split(".")[: len(pkg.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
                subs = {f"{target}.{a.name}" for a in node.names} & set(mods)
                # ``from . import module`` imports that module; ``from .x import name`` imports x
                deps |= subs if node.module is None and subs else ({target} & set(mods)) | subs
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fairdash"):
                deps |= {t for t in [node.module] + [f"{node.module}.{a.name}" for a in node.names] if t in mods}
        graph[m] = deps - {m}
    return graph


def test_no_import_cycle_in_fairdash():
    graph = _graph()
    state: dict = {}

    def visit(v, path):
        state[v] = "open"
        for w in sorted(graph[v]):
            if state.get(w) == "open":
                raise AssertionError("import cycle: " + " -> ".join(path[path.index(w):] + [w]))
            if w not in state:
                visit(w, path + [w])
        state[v] = "done"

    for v in sorted(graph):
        if v not in state:
            visit(v, [v])


def test_no_module_over_600_lines():
    long = {str(p.relative_to(ROOT)): n for p in PKG.rglob("*.py") if (n := len(p.read_text().splitlines())) > 600}
    assert not long, long


def test_pages_are_thin():
    total = sum(len(p.read_text().splitlines()) for p in (ROOT / "pages").glob("*.py"))
    assert total <= 850, total


def test_no_private_api_of_streamlit_or_gpytorch():
    private = re.compile(r"(streamlit|gpytorch)(\.\w+)*\._\w+|from (streamlit|gpytorch)[\w.]* import _\w+|"
                         r"streamlit\.runtime|PagesManager|_variational_distribution|variational_params_initialized")
    found = []
    for p in [*PKG.rglob("*.py"), *(ROOT / "pages").glob("*.py"), ROOT / "app.py"]:
        for i, line in enumerate(p.read_text().splitlines(), 1):
            code = line.split("#", 1)[0]
            if private.search(code) and "endswith(" not in code:
                found.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not found, found


def test_only_the_app_package_imports_streamlit():
    found = [str(p.relative_to(ROOT)) for p in PKG.rglob("*.py") if "app" not in p.relative_to(PKG).parts[:1]
             and re.search(r"^\s*(import streamlit|from streamlit)", p.read_text(), re.MULTILINE)]
    assert not found, found


# Issue 21: the layout shows the architecture and no arrow runs back up. Leaves import nothing of FairDash
# but its error type; the library never imports its two front ends (the Streamlit glue in ``app``, the
# command line in ``cli``), nor they each other; the models never reach up to what trains, caches,
# exports or reports them; the report is fed runs and never trains.
LEAVES = {"fairdash.errors", "fairdash._version", "fairdash.jsonable", "fairdash.device", "fairdash.progress"}
UPWARD = {
    "fairdash.models": ("fairdash.experiments", "fairdash.runs", "fairdash.fit_cache", "fairdash.export",
                        "fairdash.report", "fairdash.plots", "fairdash.app", "fairdash.cli"),
    "fairdash.report": ("fairdash.experiments", "fairdash.runs", "fairdash.fit_cache", "fairdash.app",
                        "fairdash.cli"),
    "fairdash.app": ("fairdash.cli",),
    "fairdash.cli": ("fairdash.app",),
}


def _within(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_layers_have_no_arrow_back_up():
    graph = _graph()
    bad = []
    for m, deps in graph.items():
        if m in LEAVES:
            bad += [f"{m} (a leaf) imports {d}" for d in deps if d != "fairdash.errors"]
        front_end = _within(m, "fairdash.app") or _within(m, "fairdash.cli") or m == "fairdash.__main__"
        if not front_end:
            bad += [f"{m} imports the front end {d}" for d in deps
                    if _within(d, "fairdash.app") or _within(d, "fairdash.cli")]
        for pkg, above in UPWARD.items():
            if _within(m, pkg):
                bad += [f"{m} imports {d}, above it" for d in deps if any(_within(d, a) for a in above)]
    assert not bad, bad


def test_no_criterion_string_branch_outside_the_criterion_module():
    """Issue 21: what a criterion means lives in ``target_spec.Criterion``; pages, the CLI, the report and the
    models ask it instead of comparing its name with 'dp' or 'eo'."""
    branch = re.compile(r"criterion\w*\s*(==|!=)\s*[\"'](dp|eo)[\"']")
    found = []
    for p in [*PKG.rglob("*.py"), *(ROOT / "pages").glob("*.py"), ROOT / "app.py"]:
        if p == PKG / "target_spec.py":
            continue
        for i, line in enumerate(p.read_text().splitlines(), 1):
            if branch.search(line.split("#", 1)[0]):
                found.append(f"{p.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not found, found
