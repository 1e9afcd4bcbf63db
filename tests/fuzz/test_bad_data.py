"""Bad benchmark data fails loudly: every corruption of the matrix is a DataError naming file, entry and field.

The matrix is :mod:`tests.fuzz.corruptions`. Each case copies the files one family reads into
``tmp_path`` (the real data is only read), damages the copy, and loads the family from it. The
controls check the other half of the contract: an undamaged copy loads exactly as the real data
(no task dropped, re-split or replaced), and the installed bfcl-eval data is read only when asked for.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from envsched_gym.data import ENV_VAR
from envsched_gym.data_files import DataNotFoundError
from tests.fuzz.corruptions import BFCL_Q, CASES, COUNTS, FAMILIES, MULTI_TURN, Case, copy_family, load, run_case

CONTROLS = [
    Case("BFCL", "pristine", "single_turn", lambda root: ()),
    Case("BFCL", "pristine", "multi_turn", lambda root: (), MULTI_TURN),
    Case("Tau", "pristine", "tau2", lambda root: (), needs_db=True),
    Case("Tau", "pristine", "tau1", lambda root: (), {"task_set": "tau1"}),
    Case("ACE", "pristine", "normal", lambda root: ()),
    Case("ACE", "pristine", "agent", lambda root: (), {"categories": ["agent_multi_turn"]}),
]


def _copy(case: Case, benchmarks: Path, tmp_path: Path) -> Path:
    root = tmp_path / "benchmarks"
    copy_family(case, benchmarks, root)
    return root


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_corruption_is_a_data_error_naming_file_entry_and_field(case: Case, benchmarks: Path, tmp_path: Path) -> None:
    outcome = run_case(case, benchmarks, tmp_path)
    assert outcome.kind == "named", f"{case.id}: {outcome.kind}; the error does not name {list(outcome.missing)}:\n{outcome.message}"


@pytest.mark.parametrize("case", CONTROLS, ids=lambda c: c.id)
def test_an_undamaged_copy_loads_exactly_as_the_real_data(case: Case, benchmarks: Path, tmp_path: Path) -> None:
    root = _copy(case, benchmarks, tmp_path)
    copied = load(case.family, case.options, root, open_world=case.needs_db)
    assert copied == load(case.family, case.options, benchmarks) and copied


def test_the_tau_split_is_the_split_file(benchmarks: Path) -> None:
    splits = list(load("Tau", {}, benchmarks).values())
    assert (splits.count("train"), splits.count("test")) == (104, 60)


def test_the_env_var_root_is_read_when_no_data_dir_is_given(benchmarks: Path, tmp_path: Path, monkeypatch) -> None:
    case = CONTROLS[0]
    root = _copy(case, benchmarks, tmp_path)
    monkeypatch.setenv(ENV_VAR, str(root))
    assert load("BFCL", {}, None) == load("BFCL", {}, benchmarks)
    (root / BFCL_Q).unlink()
    with pytest.raises(DataNotFoundError, match=str(root / BFCL_Q)):
        load("BFCL", {}, None)


def test_the_installed_bfcl_data_is_read_only_when_asked_for(benchmarks: Path, tmp_path: Path) -> None:
    from envsched_gym.envs.bfcl.data import _installed_data_dir

    if _installed_data_dir() is None:
        pytest.skip("the bfcl-eval package is not installed")
    root = _copy(CONTROLS[0], benchmarks, tmp_path)
    (root / BFCL_Q).unlink()
    with pytest.raises(DataNotFoundError, match="data_source='package'"):
        load("BFCL", {}, root)
    assert load("BFCL", {"data_source": "package"}, None) == load("BFCL", {}, benchmarks)
    with pytest.raises(ValueError, match="drop one"):
        load("BFCL", {"data_source": "package"}, root)


def test_the_matrix_counts_every_case_once() -> None:
    assert [f for f, _ in COUNTS] == list(FAMILIES) and sum(n for _, n in COUNTS) == len(CASES)
    assert len({c.id for c in CASES}) == len(CASES)
