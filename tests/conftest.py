"""Shared test set-up: no network, a private fit cache, small real data; and a run that leaves the checkout as it
found it (issue 48, item 7: see :func:`pytest_sessionfinish`)."""
import functools
import os
import subprocess
from pathlib import Path

import pytest

os.environ.setdefault("FAIRDASH_DEVICE", os.environ.get("FAIRDASH_TEST_DEVICE", "auto"))
# Trainings at the pages' CPU priority in the tests (the servers they start, AppTest, the worker processes): a team
# server runs them FAIRDASH_TRAINING_NICE (default 10) steps lower so that its pages answer first, but here they
# would wait behind the other pytest worker's tests and any other load of the machine (at nice 10 a training gets
# about a tenth of a core against one busy process: with both cores busy, the AppTests that train took 5 to 12
# times longer). The lowering itself is tested with the default (tests/app/test_team_server.py,
# tests/app/test_worker_process.py).
os.environ.setdefault("FAIRDASH_TRAINING_NICE", "0")

# Property tests draw the same examples on every run (issue 27): a failure in CI is then a failure on every
# machine, never a flaky run. `HYPOTHESIS_PROFILE=explore` draws fresh random examples, to look for new ones
# (keep what it finds as an @example of the test).
from hypothesis import settings as _hypothesis_settings  # noqa: E402

# No deadline in either: a per-example time limit is a wall-clock assertion, which a busy machine fails (seen on
# a loaded machine: DeadlineExceeded on a 0.2 s ceiling-curve example); a hang is the suite's timeout's business.
_hypothesis_settings.register_profile("deterministic", derandomize=True, database=None, print_blob=True, deadline=None)
_hypothesis_settings.register_profile("explore", derandomize=False, deadline=None)
_hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))


# --------------------------------------------------------------------------------------------------
# The checkout as the run found it
# --------------------------------------------------------------------------------------------------
ROOT = Path(__file__).resolve().parents[1]
_CHECKOUT = pytest.StashKey[str]()


def _checkout_state() -> str | None:
    """``git status --porcelain`` of the checkout, untracked files included (what .gitignore leaves out is not
    seen: caches, the virtual environment); ``None`` where this is not a git checkout or there is no git."""
    try:
        done = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT,
                              capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def _checks_checkout(config) -> bool:
    """On the process that runs the session (pytest-xdist's controller, not its workers), unless screenshots were
    asked for in the checkout (``FAIRDASH_SCREENSHOTS``, tests/e2e/conftest.py)."""
    return not hasattr(config, "workerinput") and not os.environ.get("FAIRDASH_SCREENSHOTS", "").strip()


def pytest_sessionstart(session):
    if _checks_checkout(session.config):
        state = _checkout_state()
        if state is not None:
            session.config.stash[_CHECKOUT] = state


def pytest_sessionfinish(session, exitstatus):
    """A run that changed the checkout (a file added, changed or deleted by a test: a screenshot, a result, a
    model file) fails, naming what changed; where nothing else failed, the exit status becomes 1. (Files edited by
    hand during the run count too: the check cannot tell who changed them.)"""
    before = session.config.stash.get(_CHECKOUT, None)
    if before is None:
        return
    after = _checkout_state()
    if after is None or after == before:
        return
    changed = sorted(set(after.splitlines()) ^ set(before.splitlines()))
    if not changed:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None:
        reporter.write_line("")
        reporter.write_sep("=", "the test run changed the checkout (git status before and after)", red=True)
        reporter.write_line("\n".join(changed))
    if session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Every test writes its fit cache to a temporary directory, never the user's."""
    monkeypatch.setenv("FAIRDASH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "fit-cache"))


@pytest.fixture(autouse=True)
def training_queue():
    """Every test gets a training queue of its own (``fairdash.app.training.queue.configure``), made with the settings
    the environment gives (``QueueSettings.from_env``) but for one: the Train button's script run waits for its job
    and adds the run at once (``wait_in_script``), since AppTest has no browser to poll the sidebar while a training
    runs in the background. A test asks for this fixture to set the queue up again: ``training_queue(**changes)``
    makes a new one, read from the environment as it is then, with ``changes`` (``wait_in_script=False`` to test the
    background itself, ``in_worker_process=False`` where the test replaces the training code in this process) and
    returns its registry. The queue imports no Streamlit, so this holds on a machine without it too."""
    from fairdash.app.training import queue

    def configure(**changes):
        return queue.configure(queue.QueueSettings.from_env(**{"wait_in_script": True, **changes}))

    configure()
    yield configure
    queue.configure(None)


@pytest.fixture
def cli(capsys):
    """The command line run in this process: ``cli(args)`` runs ``fairdash.cli.main(args)`` and returns its exit
    code, standard output and standard error, as text; what the test printed before is not part of them."""

    def run(args):
        from fairdash.cli import main

        capsys.readouterr()
        code = main(args)
        out = capsys.readouterr()
        return code, out.out, out.err

    return run


class OneBrowser:
    """The cookie an AppTest 'browser' sends (AppTest has none): every AppTest of a test is then the same
    browser, so a new AppTest with a session's URL is a reload of it; set ``name`` to play another browser."""

    def __init__(self):
        self.name = "browser-A"

    def cookie(self) -> str:
        return f"{self.name}-{'x' * 30}"


@pytest.fixture
def one_browser(monkeypatch):
    """See :class:`OneBrowser`; patched into ``fairdash.app.server.session.browser_cookie``, the one reader of it."""
    from fairdash.app.server import session

    browser = OneBrowser()
    monkeypatch.setattr(session, "browser_cookie", browser.cookie)
    return browser


# --------------------------------------------------------------------------------------------------
# The bundled samples, one meaning per name (a test module defines no fixture of its own for them)
#
#   adult_table, compas_table   the bundled sample as ``data.load_sample`` reads it (Adult: 45,222 rows x
#                               15 columns; COMPAS: 6,167 rows): a fresh copy for every test, so a test may
#                               change its copy (a DataFrame cannot be made read-only).
#   adult_task, compas_task     the paper's set-up as ``data.paper_task`` builds it: "adult-sex" (s = sex,
#                               Male is group 1; y = salary, >50K positive; fnlwgt dropped) and "compas-race"
#                               (s = race, Caucasian is group 1; y = two-year-recid, 1 positive). The one
#                               task object the library caches for the process: its y and s are read-only
#                               and nothing may change its X.
#   adult_arrays, compas_arrays ``data.paper_arrays(setup, seed=0)``: that task split 80/20 with seed 0,
#                               stratified by the (s, y) cell (``data.split_task``), the preprocessor
#                               (``data.make_preprocessor``: numeric columns median-imputed and standardised,
#                               categorical ones one-hot encoded) fitted on the training rows only and applied
#                               to both splits; ``balanced_test`` indexes the test arrays. Adult: 36,177 x 101
#                               training, 9,045 test (5,878 balanced); COMPAS: 4,934 x 62 and 1,233 (840).
#                               Every array is read-only (``prepare_arrays`` makes them so).
#   adult_app_task              the task the dashboard builds when it opens on Adult (the app's
#                               ``sample_spec``: the sample's default features, its positive meaning); not
#                               the paper's set-up. Module-scoped; y and s read-only.
#   adult_1000_csv              1,000 rows of Adult (``sample(1000, random_state=0)``) as CSV bytes: a small
#                               upload for the dashboard's tests (bytes, so nothing can change it).
# A test that needs something else (another s or label) builds it in the test; a module that shares a
# subsample names it for what it is (test_export's compas_600, test_population_and_groups_page's
# adult_table_12k).
# --------------------------------------------------------------------------------------------------
@functools.cache
def _sample_table(name: str):
    """The sample read once per session; never handed to a test (tests get copies)."""
    from fairdash import data

    return data.load_sample(name)


def _read_only(task):
    for a in (task.y, task.s, task.strata):
        if a is not None:
            a.setflags(write=False)
    return task


@pytest.fixture
def adult_table():
    return _sample_table("adult").copy()


@pytest.fixture
def compas_table():
    return _sample_table("compas").copy()


@pytest.fixture(scope="session")
def adult_task():
    from fairdash import data

    return _read_only(data.paper_task("adult-sex"))


@pytest.fixture(scope="session")
def compas_task():
    from fairdash import data

    return _read_only(data.paper_task("compas-race"))


@pytest.fixture(scope="session")
def adult_arrays():
    from fairdash import data

    return data.paper_arrays("adult-sex", seed=0)


@pytest.fixture(scope="session")
def compas_arrays():
    from fairdash import data

    return data.paper_arrays("compas-race", seed=0)


@pytest.fixture(scope="module")
def adult_app_task():
    from fairdash import data
    from fairdash.app.ui.workspace import sample_spec

    table = _sample_table("adult")
    return _read_only(data.build_task(table, sample_spec("adult", table)))


@pytest.fixture(scope="session")
def adult_1000_csv() -> bytes:
    return _sample_table("adult").sample(1000, random_state=0).to_csv(index=False).encode()


# The page tests (``pytestmark = pytest.mark.usefixtures("cpu_only", "app_frame")``, tests/app_pages.py)
@pytest.fixture
def cpu_only(monkeypatch):
    monkeypatch.setenv("FAIRDASH_DEVICE", "cpu")


@pytest.fixture
def app_frame(monkeypatch):
    """AppTest resets Streamlit's "pages folder" switch before every run, so a rerun would execute the
    page file alone (old-style pages/ folder). A real server runs app.py (st.navigation) on every run;
    make AppTest do the same, so the tests see the frame and sidebar on every run."""
    from streamlit.runtime.scriptrunner import script_runner

    def run_main(main_script_path):
        path = str(main_script_path)
        code = compile(Path(path).read_text(), path, "exec")
        exec(code, {"__name__": "__main__", "__file__": path})  # noqa: S102

    monkeypatch.setattr(script_runner, "_mpa_v1", run_main)
