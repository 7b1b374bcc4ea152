"""The README's Python section runs as written (issue 21: its examples must not use undefined names)."""
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.mark.slow
@pytest.mark.slow
def test_the_readme_python_section_runs():
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Python\n"):text.index("\n## ", text.index("## Python\n") + 5)]
    blocks = re.findall(r"```python\n(.*?)```", section, flags=re.S)
    assert len(blocks) >= 2
    scope: dict = {}
    exec(compile("\n".join(blocks), str(README), "exec"), scope)  # noqa: S102 - the project's own README
    m = scope["trained"].metrics
    assert m["pop_worst_gap"] == pytest.approx(0.142, abs=0.002) and m["pop_worst_gap_group"] == "Female"
    on = scope["on_target"].metrics
    assert abs(on["pop_pr_0"] - 0.30) <= 0.03 and abs(on["pop_pr_1"] - 0.30) <= 0.03
