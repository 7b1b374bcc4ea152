"""Numbers read from the environment (fairdash/settings.py): every setting FairDash reads as a number follows one
rule, read where it is used: unset or blank gives the default; a value that is not a finite number, has a fraction
where a whole number is needed, or is below the least allowed is one line naming the variable, what it takes and
what it holds."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from fairdash import device, settings
from fairdash.app.server import limits
from fairdash.data.reading import budget
from fairdash.errors import FairDashError

# each numeric setting, read by the code that uses it: (variable, how it is read, whether it is whole)
READERS = [
    ("FAIRDASH_TABLE_MB", budget.table_budget, False),
    ("FAIRDASH_MAX_COLUMNS", budget.max_columns, True),
    ("FAIRDASH_MAX_CELLS", budget.max_cells, True),
    ("FAIRDASH_MAX_TRAININGS", limits.ServerLimits.from_env, True),
    ("FAIRDASH_MEMORY_GUARD_MB", limits.ServerLimits.from_env, False),
    ("FAIRDASH_CLOSED_TAB_GRACE_S", limits.ServerLimits.from_env, False),
    ("FAIRDASH_TRAINING_NICE", limits.ServerLimits.from_env, True),
    ("FAIRDASH_THREADS", device.fit_threads, True),
]


@pytest.mark.parametrize("name, read, whole", READERS)
@pytest.mark.parametrize("value", ["abc", "nan", "inf", "-1", "1e400", "2.5"])
def test_every_numeric_setting_refuses_a_bad_value_in_one_line_naming_it(monkeypatch, name, read, whole, value):
    monkeypatch.setenv(name, value)
    if value == "2.5" and not whole:
        read()  # a fraction is a number where one is allowed
        return
    with pytest.raises(FairDashError) as caught:
        read()
    text = str(caught.value)
    assert text.startswith(f"{name} must be {'a whole number' if whole else 'a number'}, at least "), text
    assert text.endswith(f"not {value!r}.") and "\n" not in text


@given(st.floats(min_value=0, max_value=1e9, allow_nan=False), st.booleans())
def test_a_good_value_is_read_as_written(value, whole):
    if whole:
        value = float(int(value))
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FAIRDASH_SETTING_UNDER_TEST", repr(value))
        got = settings.env_number("FAIRDASH_SETTING_UNDER_TEST", 7, minimum=0, whole=whole)
        assert got == value and isinstance(got, int if whole else float)
        mp.setenv("FAIRDASH_SETTING_UNDER_TEST", "  ")
        assert settings.env_number("FAIRDASH_SETTING_UNDER_TEST", 7, minimum=0, whole=whole) == 7
