"""Words from the data's meaning (issue 27, item 3): whether a positive label is favourable for the person
is asked with the label (the Data page's question, ``--positive-is``; read from the meaning the analyst types
where not said), carried in the task (session, model file, report) and the word "disadvantaged" follows it:
the lowest base rate of a favourable positive label, the highest of an unfavourable one (COMPAS: rearrest)."""
from pathlib import Path

import numpy as np
import pytest

from fairdash import data
from fairdash.data.meaning import (
    ASSUMED,
    READ,
    SAID,
    disadvantaged_sentence,
    favourable_from_meaning,
    label_favourable,
    parse_positive_is,
)
from fairdash.errors import FairDashError
from fairdash.targeting import targets

import app_state
from app_pages import new_app, ok, shown, sidebar

pytestmark = pytest.mark.usefixtures("cpu_only", "app_frame")

MODEL_FILES = Path(__file__).parents[1] / "fixtures" / "model_files"
COMPAS_RACE = ["--data", "compas", "--s", "race", "--s1", "Caucasian", "--y", "two-year-recid", "--y1", "1"]


@pytest.mark.parametrize("words, favourable", [
    ("income above $50K a year (a favourable outcome)", True),
    ("rearrested within two years (NOT a favourable outcome for the person)", False),
    ("loan granted", True), ("loan default", False), ("defaulted on the loan", False), ("arrested", False),
    ("not rearrested", True), ("hired", True), ("unfavorable", False), ("is a husband", None), ("", None),
])
def test_the_meaning_says_whether_a_positive_label_is_favourable(words, favourable):
    assert favourable_from_meaning(words) is favourable


def test_the_answer_comes_from_the_analyst_then_the_meaning_then_is_assumed():
    spec = data.TaskSpec("s", "y", ("a",), ("1",))
    assert label_favourable(spec) == (True, ASSUMED)
    assert label_favourable(data.TaskSpec("s", "y", positive_meaning="rearrested")) == (False, READ)
    assert label_favourable(data.TaskSpec("s", "y", positive_meaning="rearrested", positive_favourable=True)) == (
        True, SAID)
    # a task saved before the field existed (a session, a configuration, a model file) reads as not said
    old = {k: v for k, v in spec.to_dict().items() if k != "positive_favourable"}
    assert data.TaskSpec.from_dict(old).positive_favourable is None
    assert data.TaskSpec.from_dict(spec.to_dict() | {"positive_favourable": False}).positive_favourable is False


def test_an_unfavourable_positive_label_makes_the_highest_base_rate_the_disadvantaged_group():
    rates = np.array([0.49, 0.39])  # COMPAS race: Non-Caucasian, Caucasian
    assert targets.disadvantaged_group(rates) == 1 == targets.disadvantaged_group(rates, favourable=True)
    assert targets.disadvantaged_group(rates, favourable=False) == 0
    assert disadvantaged_sentence("Non-Caucasian", False) == ("Non-Caucasian is the disadvantaged group: it has the "
                                                              "highest base rate, and a positive label is unfavourable "
                                                              "for the person.")
    assert disadvantaged_sentence("Female", True).startswith("Female is the disadvantaged group: it has the lowest "
                                                             "base rate.")


def test_the_bundled_samples_and_the_papers_set_ups_carry_the_answer():
    assert data.SAMPLES["adult"].positive_favourable is True and data.SAMPLES["compas"].positive_favourable is False
    for name, setup in data.PAPER_SETUPS.items():
        assert setup.spec.positive_favourable is (setup.sample == "adult"), name
    task = data.paper_task("compas-race")
    fav, how = label_favourable(task.spec)
    j = targets.disadvantaged_group(task.group_table()["base rate"], fav)
    assert (fav, how, task.group_names[j]) == (False, SAID, "Non-Caucasian")


def test_old_model_files_load_and_read_the_answer_from_their_meaning():
    from fairdash.files.export import load_model

    for path in sorted(MODEL_FILES.glob("*.fairdash")):
        model = load_model(path)
        assert model.spec.positive_favourable is None, path.name  # written before the field: not said
        fav, how = label_favourable(model.spec)
        assert how in (READ, ASSUMED), path.name


def test_a_model_file_keeps_the_answer(tmp_path):
    from fairdash.files.export import load_model, save_model
    from fairdash.targeting.target_spec import make_target_spec
    from fairdash.work.experiments import fit_model

    task = data.build_task(data.load_sample("compas").head(600),
                           data.TaskSpec("race", "two-year-recid", ("Caucasian",), ("1",), positive_favourable=False))
    save_model(fit_model(task, "lr", target=make_target_spec("dp", 0.4)), tmp_path / "m.fairdash")
    assert load_model(tmp_path / "m.fairdash").spec.positive_favourable is False


def test_the_report_names_the_disadvantaged_group_from_the_meaning():
    from fairdash.report.content import describe_task, section_data

    def note(task):
        blocks = section_data(describe_task(task))["blocks"]
        return " ".join(str(b) for b in blocks)

    text = note(data.paper_task("compas-race"))
    assert "Non-Caucasian is the disadvantaged group: it has the highest base rate" in text, text
    assert "Caucasian is the disadvantaged group" not in text.replace("Non-Caucasian", "")
    assert "Female is the disadvantaged group: it has the lowest base rate." in note(data.paper_task("adult-sex"))


# --------------------------------------------------------------------------------------------------
# The command line
# --------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_the_command_line_says_it_and_takes_positive_is(cli, tmp_path):
    code, out, err = cli(["rates", "--paper", "compas-race", "--pr-t", "0.4"])
    assert code == 0, err
    assert ("Positive label (y = 1): two-year-recid = 1, unfavourable for the person; the disadvantaged group is "
            "Non-Caucasian (highest base rate).") in out, out
    # an uploaded copy of COMPAS says nothing: taken as favourable, and the line says so and how to change it
    path = tmp_path / "upload.csv"
    data.load_sample("compas").to_csv(path, index=False)
    table = ["--data", str(path), *COMPAS_RACE[2:]]
    code, out, _ = cli(["rates", *table, "--pr-t", "0.4"])
    assert "favourable for the person (assumed), --positive-is to say otherwise; the disadvantaged group is " \
           "Caucasian (lowest base rate)." in out, out
    for extra in (["--positive-is", "unfavourable"], ["--positive-is", "Unfavorable"],
                  ["--positive-meaning", "rearrested within two years"]):
        code, out, err = cli(["rates", *table, "--pr-t", "0.4", *extra])
        assert code == 0, err
        assert "the disadvantaged group is Non-Caucasian (highest base rate)." in out, (extra, out)
    code, out, _ = cli(["rates", *table, "--json"])
    import json

    got = json.loads(out)
    assert got["positive_favourable"] is True and got["disadvantaged_group"] == "1"
    # the bundled sample by name carries its own answer
    code, out, _ = cli(["rates", *COMPAS_RACE, "--json"])
    assert json.loads(out)["positive_favourable"] is False and json.loads(out)["disadvantaged_group"] == "0"


def test_a_bad_positive_is_is_one_line(cli):
    code, out, err = cli(["rates", *COMPAS_RACE, "--positive-is", "bad"])
    assert code == 2 and out == ""
    assert err.strip().count("\n") == 0 and "--positive-is must be favourable or unfavourable" in err, err
    code, _, err = cli(["rates", "--paper", "adult-sex", "--positive-is", "unfavourable"])
    assert code == 2 and "fixes the task" in err, err
    with pytest.raises(FairDashError):
        parse_positive_is("maybe")


def test_the_configuration_command_line_carries_the_answer():
    from fairdash.files.run_spec import RunSpec
    from fairdash.targeting.target_spec import make_target_spec

    spec = data.TaskSpec("race", "two-year-recid", ("Caucasian",), ("1",), positive_favourable=False,
                         positive_meaning="rearrested")
    cmd = RunSpec(data="compas.csv", task=spec, target=make_target_spec("dp", 0.4), models=("lr",)).cli_command()
    assert "--positive-is unfavourable --positive-meaning rearrested" in cmd, cmd


# --------------------------------------------------------------------------------------------------
# The Data page asks it next to the label
# --------------------------------------------------------------------------------------------------
def _caption(at) -> str:
    return " ".join(shown(c.value) for c in at.caption)


def test_the_data_page_asks_and_the_words_follow():
    at = new_app()  # Adult: income above $50K, favourable
    assert at.radio(key="positive_is").value == "favourable"
    assert "Female is the disadvantaged group: it has the lowest base rate." in _caption(at)
    at.selectbox(key="sample_choice").set_value("compas").run()
    ok(at)
    assert at.radio(key="positive_is").value == "unfavourable"
    assert "Non-Caucasian is the disadvantaged group: it has the highest base rate" in _caption(at), _caption(at)
    assert "Non-Caucasian, disadvantaged" in sidebar(at), sidebar(at)
    assert any("It is unfavourable for the person." in m.value for m in at.markdown)
    at.switch_page("pages/target.py").run()  # the Target page's readouts single out the same group
    ok(at)
    assert any(m.value.startswith("- For s=0 (Non-Caucasian), the disadvantaged group") for m in at.markdown)
    at.switch_page("pages/data.py").run()
    ok(at)
    assert at.radio(key="positive_is").value == "unfavourable"  # the answer is kept across pages
    # the analyst's answer wins and is carried in the task
    at.radio(key="positive_is").set_value("favourable").run()
    ok(at)
    assert "Caucasian is the disadvantaged group: it has the lowest base rate." in _caption(at), _caption(at)
    assert app_state.get(at, "spec").positive_favourable is True
    # typing a meaning answers the question where the words say so
    at.text_input(key="positive_meaning").set_value("defaulted on a loan").run()
    ok(at)
    assert at.radio(key="positive_is").value == "unfavourable"
    assert app_state.get(at, "spec").positive_favourable is False


# --------------------------------------------------------------------------------------------------
# Other words that said something false (issue 27)
# --------------------------------------------------------------------------------------------------
def test_the_worst_conditional_cell_is_named_by_its_strata_value():
    from fairdash.targeting.target_spec import make_target_spec
    from fairdash.work.experiments import fit_model

    task = data.build_task(data.load_sample("compas"), data.TaskSpec("race", "two-year-recid", ("Caucasian",), ("1",),
                                                                     strata_column="sex"))
    m = fit_model(task, "fair-lr", target=make_target_spec("dp", 0.4, strata_column="sex")).metrics
    for key in ("pop_worst_gap_group", "bal_worst_gap_group"):
        group, stratum = m[key].split(" in ")
        assert group in task.group_names and stratum in ("sex = Female", "sex = Male"), m[key]


def test_target_gap_is_the_mean_gap_of_the_criterions_rate():
    """Under equality of opportunity ``target_gap`` is the mean |TPR gap|, as the docstring now says."""
    import fairdash.work.experiments as experiments
    from fairdash.targeting.target_spec import make_target_spec
    from fairdash.work.experiments import fit_model

    task = data.paper_task("compas-race")
    m = fit_model(task, "lr", target=make_target_spec("eo", 0.401, decision="group-rates")).metrics
    tpr_gap = np.mean([abs(m[f"pop_tpr_{j}"] - m[f"target_{j}"]) for j in range(2)])
    assert m["target_gap"] == pytest.approx(tpr_gap, abs=1e-12)
    source = " ".join(Path(experiments.__file__).read_text(encoding="utf-8").split())
    assert "|pop TPR_s - target TPR| under equality of opportunity" in source


@pytest.mark.slow
def test_an_upload_asks_plainly_and_assumes_nothing():
    """Issue 36, item 5: an upload whose label's words say nothing is asked, not assumed: the question has no
    answer, the Use button waits for one and no group is called disadvantaged; the label's own words
    (two-year-recid: rearrest) or the meaning typed answer it, shown with the words they were read from."""
    from app_pages import upload

    table = data.load_sample("compas").sample(800, random_state=0)[["race", "sex", "age", "priors-count",
                                                                    "two-year-recid"]]
    at = upload(new_app(), "people.csv", table.rename(columns={"two-year-recid": "y2"}))
    at.selectbox(key="s_column").set_value("race").run()
    at.selectbox(key="y_column").set_value("y2").run()
    ok(at)
    assert at.radio(key="positive_is").value is None  # nothing says it: a plain question, unanswered
    assert at.button(key="confirm_task").disabled
    assert "disadvantaged group:" not in _caption(at) and "taken as favourable" not in _caption(at), _caption(at)
    at.text_input(key="positive_meaning").set_value("rearrested within two years").run()
    ok(at)
    assert at.radio(key="positive_is").value == "unfavourable" and not at.button(key="confirm_task").disabled
    assert "Read from the words \u201crearrested within two years\u201d: unfavourable." in _caption(at), _caption(at)
    at.switch_page("pages/target.py").run()
    at.switch_page("pages/data.py").run()  # a pending upload's answer is kept across pages
    assert at.radio(key="positive_is").value == "unfavourable"
    at.button(key="confirm_task").click().run()
    ok(at)
    assert app_state.get(at, "spec").positive_favourable is False
    assert "is the disadvantaged group: it has the highest base rate" in _caption(at), _caption(at)
    # the label's own name says it: two-year-recid is a rearrest, unfavourable, read from its words
    at = upload(new_app(), "people.csv", table)
    at.selectbox(key="y_column").set_value("two-year-recid").run()
    ok(at)
    assert at.radio(key="positive_is").value == "unfavourable" and not at.button(key="confirm_task").disabled
    assert "Read from the words \u201ctwo year recid 1\u201d: unfavourable." in _caption(at), _caption(at)
