"""Shared test set-up: no network, a private fit cache, small real data."""
import functools
import os
from pathlib import Path

import pytest

os.environ.setdefault("FAIRDASH_DEVICE", os.environ.get("FAIRDASH_TEST_DEVICE", "auto"))

# Property tests draw the same examples on every run (issue 27): a failure in CI is then a failure on every
# machine, never a flaky run. `HYPOTHESIS_PROFILE=explore` draws fresh random examples, to look for new ones
# (keep what it finds as an @example of the test).
from hypothesis import settings as _hypothesis_settings  # noqa: E402

_hypothesis_settings.register_profile("deterministic", derandomize=True, database=None, print_blob=True)
_hypothesis_settings.register_profile("explore", derandomize=False)
_hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))


@pytest.fixture(autouse=True)
def _private_cache(tmp_path_factory, monkeypatch):
    """Every test writes its fit cache to a temporary directory, never the user's."""
    monkeypatch.setenv("FAIRDASH_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "fit-cache"))


@pytest.fixture(autouse=True)
def _training_waits_in_apptest(monkeypatch):
    """AppTest has no browser to poll the sidebar while a training runs in the background: the Train
    button's script run waits for its job and adds the run at once (tests/test_background_training.py
    turns this off to test the background itself)."""
    try:
        from fairdash.app import jobs
    except ImportError:  # a machine without Streamlit (the GPU checks run the library's tests only)
        return
    monkeypatch.setattr(jobs, "WAIT_IN_SCRIPT", True)


class OneBrowser:
    """The cookie an AppTest 'browser' sends (AppTest has none): every AppTest of a test is then the same
    browser, so a new AppTest with a session's URL is a reload of it; set ``name`` to play another browser."""

    def __init__(self):
        self.name = "browser-A"

    def cookie(self) -> str:
        return f"{self.name}-{'x' * 30}"


@pytest.fixture
def one_browser(monkeypatch):
    """See :class:`OneBrowser`; patched into ``fairdash.app.session.browser_cookie``, the one reader of it."""
    from fairdash.app import session

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
    from fairdash.app.ui import sample_spec

    table = _sample_table("adult")
    return _read_only(data.build_task(table, sample_spec("adult", table)))


@pytest.fixture(scope="session")
def adult_1000_csv() -> bytes:
    return _sample_table("adult").sample(1000, random_state=0).to_csv(index=False).encode()

# --------------------------------------------------------------------------------------------------
# The fast subset for the edit loop (issue 28 item 7): ``python -m pytest -m "not slow and not e2e"``
#
# ``slow`` marks, by measurement (``--durations``, benchmarks/README.md "Test suite time"), the tests that take
# more than about a second each on an idle 2-core machine: whole modules whose module fixtures train on the
# full Adult data or that run scikit-learn's ~1,200 estimator checks, and single tests elsewhere (command-line
# runs in a fresh process, trainings through the dashboard, memory-budget reads, property tests). ``e2e`` marks
# every browser test (tests/e2e/conftest.py). Nothing is skipped by these marks in the README's full command.
# A test named here that no longer exists is an error at collection, so the list cannot rot silently.
# --------------------------------------------------------------------------------------------------
SLOW_MODULES = {
    "test_baselines.py",
    "test_dask.py",
    "test_estimator_checks.py",
    "test_fair_models.py",
    "test_install.py",
    "test_model_numbers.py",
    "test_numbers_unchanged.py",
    "test_weighted_lr.py",
    "test_worker_process.py",  # real worker processes, one a real training
}
SLOW_TESTS = {  # module: test functions (every parameter of each)
    "test_team_server.py": {
        "test_the_train_button_trains_in_a_worker_process_and_cancel_ends_it",
        "test_a_fit_cache_that_cannot_write_is_said_with_the_finished_run",
        "test_a_reload_mid_training_returns_to_the_session_with_its_queue_place_and_cancel",
    },
    "test_agarwal_progress.py": {
        "test_agarwal_reports_each_fit_and_fits_what_fairlearn_fits",
    },
    "test_app.py": {
        "test_an_invalid_target_disables_train_with_the_reason",
        "test_default_target_is_the_avg_preset_and_matches_the_cli",
        "test_every_page_renders_its_defaults",
        "test_number_box_and_presets_drive_the_same_state",
        "test_other_criteria_and_conditional_parity_render",
        "test_slider_changes_readouts_to_what_fairdash_computes",
        "test_target_page_says_what_a_model_that_does_not_see_s_can_do",
        "test_train_fair_lr_on_a_small_upload_then_compare_and_export",
    },
    "test_background_training.py": {
        "test_a_training_goes_on_across_pages_and_joins_the_history",
        "test_cancel_stops_the_runner_and_adds_nothing",
        "test_one_training_per_session_and_the_repeat_shortcut",
        "test_pending_upload_choices_survive_a_page_switch_until_confirmed",
    },
    "test_bad_input.py": {
        "test_a_3_6_mb_gzip_bomb_is_refused_within_512_mb_of_memory",
        "test_a_bad_choice_on_a_good_file_names_the_value",
        "test_a_folder_is_not_a_table",
        "test_a_gzip_bomb_is_refused_without_decompressing_it_all",
        "test_corpus_file_through_the_command_line",
        "test_five_thousand_level_categorical",
        "test_parquet_is_read_without_pyarrows_thread_pool_so_an_empty_file_cannot_abort_the_exit",
    },
    "test_bad_input_page.py": {
        "test_corpus_file_through_the_data_page",
    },
    "test_blindness.py": {
        "test_adult_sex_price_at_030_is_measured_at_the_blind_rules_rates",
        "test_adult_sex_under_equal_opportunity_the_price_at_matched_tpr_is_not_negative",
    },
    "test_cli_models.py": {
        "test_a_closed_pipe_ends_quietly",
        "test_out_to_a_place_that_cannot_be_written_is_one_clear_line",
        "test_sweep_writes_the_tidy_table_and_a_summary",
        "test_train_then_predict",
    },
    "test_cli_rates.py": {
        "test_rates_defaults_to_the_avg_preset",
        "test_rates_json_has_every_key_and_matches_the_library",
        "test_rates_json_has_s_predictability",
    },
    "test_dask.py": {
        "test_sweep_on_a_dask_cluster_gives_the_local_table",
        "test_workers_that_do_not_answer_are_a_clear_error_within_the_timeout",
    },
    "test_data.py": {
        "test_preprocessing_is_fitted_on_training_rows_only",
        "test_readout_keys_and_values",
        "test_split_arrays_are_remembered_per_live_task_and_seed",
    },
    "test_data_properties.py": {
        "test_build_task_builds_a_task_or_raises_fairdash_error",
        "test_profile_and_clean_never_fail",
        "test_read_table_on_random_bytes",
        "test_read_table_on_random_csv_like_text",
        "test_written_parquet_and_excel_read_back_or_give_fairdash_error",
        "test_written_tables_read_back_or_give_fairdash_error",
    },
    "test_data_values.py": {
        "test_group_names_partition_the_values",
    },
    "test_decision.py": {
        "test_a_cut_gives_the_asked_share_of_distinct_scores",
        "test_adult_threshold_keeps_todays_numbers_and_names_the_worst_group",
        "test_agarwal_bound_is_checked",
        "test_cli_predict_without_s_on_a_model_that_decides_with_s_exits_2",
        "test_the_report_says_what_a_model_blind_to_s_can_do",
        "test_the_results_file_says_where_each_column_was_measured_and_older_files_still_read",
        "test_threshold_optimizer_reaches_parity_on_adult_and_matches_fairlearn",
    },
    "test_eo_equalises.py": {
        "test_compas_race_eo_group_rates_equalises_tpr_above_the_majority_class",
    },
    "test_experiments.py": {
        "test_a_repeated_request_skips_the_fit_and_the_scoring",
        "test_code_version_is_per_model_so_a_change_retrains_only_that_model",
        "test_parallel_run_gives_the_same_table",
    },
    "test_export.py": {
        "test_a_flipped_byte_anywhere_is_a_clear_refusal",
        "test_round_trip_in_a_fresh_process",
    },
    "test_fit_cache_disk.py": {
        "test_code_versions_are_computed_safely_by_threads_at_once",
    },
    "test_metrics.py": {
        "test_group_metrics_equal_fairlearns_metric_frame",
    },
    "test_model_inputs.py": {
        "test_predict_refuses_non_finite_rows_as_fit_does",
    },
    "test_model_target.py": {
        "test_a_read_only_matrix_trains_without_torch_warning",
        "test_importing_fairdash_installs_no_warnings_filter",
    },
    "test_moves_and_ceilings.py": {
        "test_compas_eo_overall_rate_fairlr_says_no_move_away_over_five_repeats",
        "test_compas_threshold_optimizer_moves_caucasians_toward_0401",
    },
    "test_numbers_unchanged.py": {
        "test_the_sweep_csv_is_unchanged",
    },
    "test_paper_rows_cli.py": {
        "test_table_1_rows_through_the_command_line_are_the_library_numbers",
        "test_zafar_accuracy_row_of_table_1_through_the_command_line",
    },
    "test_population_and_groups_page.py": {
        "test_population_and_balanced_views_on_compare_and_in_the_report",
        "test_three_groups_and_an_intersection_train_and_plot",
        "test_two_runs_show_together_and_the_history_clears",
    },
    "test_price_pages.py": {
        "test_compare_shows_the_price_sentence_and_the_frontier",
        "test_sweep_runs_models_times_rules_and_prices_blindness",
        "test_the_report_has_the_price_sentence_and_the_frontier_figure",
    },
    "test_privacy.py": {
        "test_an_upload_trains_without_writing_to_disk_and_forget_deletes_it",
        "test_the_bundled_samples_keep_the_disk_cache",
    },
    "test_proxies.py": {
        "test_s_predictability_on_the_samples",
        "test_s_predictability_reads_the_whole_training_split",
    },
    "test_read_budget.py": {
        "test_a_gzip_expanding_to_780_mb_is_refused_by_the_command_line_in_little_memory",
        "test_a_parquet_file_that_becomes_gigabytes_is_refused_from_its_footer",
    },
    "test_readme.py": {
        "test_the_readme_python_section_runs",
    },
    "test_report.py": {
        "test_a_report_of_several_runs_prices_deciding_without_s_and_refuses_two_tasks",
    },
    "test_rule_reached.py": {
        "test_agarwal_with_group_rates_on_adult_reaches_030_or_says_so",
    },
    "test_session_restore.py": {
        "test_a_5_mb_upload_survives_four_reloads_with_50_mb_for_sessions",
        "test_a_reload_returns_to_the_same_session_under_the_same_token",
        "test_a_snapshot_is_a_frozen_copy_never_connected_to_its_owner",
        "test_an_unknown_malformed_or_old_token_starts_a_fresh_session",
        "test_forget_deletes_the_session_and_its_snapshots_and_every_address_says_so",
        "test_the_owners_address_in_another_browser_gives_nothing_and_says_to_ask_for_a_snapshot",
    },
    "test_target_reduction.py": {
        "test_adult_sex_lands_on_030_without_s",
        "test_compas_race_lands_on_0401_over_five_repeats",
        "test_draws_are_reproducible_from_the_seed_and_leave_global_state_alone",
    },
    "test_target_spec.py": {
        "test_a_run_keeps_its_data_and_task_after_other_data_is_loaded",
        "test_dashboard_strata_own_mode_hides_the_slider_and_slider_mode_moves_the_ceiling",
        "test_flips_on_adult_sex_at_0213",
        "test_the_readout_words_say_what_moves_and_no_longer_that_nobody_else_changes",
    },
    "test_zafar_accuracy.py": {
        "test_raw_units_reach_the_papers_band_on_adult_sex",
        "test_the_same_data_outside_the_paper_presets_solves_on_standardised_columns",
        "test_the_sweep_runs_zafar_accuracy_in_raw_units_as_the_paper_did",
        "test_zafar_accuracy_beats_the_majority_class_on_every_bundled_task",
    },
}


@pytest.hookimpl(tryfirst=True)  # before ``-m`` deselects
def pytest_collection_modifyitems(config, items):
    here = Path(__file__).resolve().parent
    modules = {}
    for item in items:
        path = Path(str(item.fspath)).resolve()
        if path.parent != here:
            continue
        modules[path.name] = item.module
        if path.name in SLOW_MODULES or getattr(item, "originalname", item.name) in SLOW_TESTS.get(path.name, ()):
            item.add_marker(pytest.mark.slow)
    missing = [f"{m}::{f}" for m, module in modules.items() for f in SLOW_TESTS.get(m, ()) if not hasattr(module, f)]
    if missing:
        raise pytest.UsageError(f"tests/conftest.py SLOW_TESTS names tests that do not exist: {missing}")
