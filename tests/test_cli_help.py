"""Every command-line script answers ``--help`` with its options and exit status 0.

argparse %-formats each help string, so a bare ``%`` in one (e.g. "a 5% floor") makes ``--help``
crash with a TypeError while every real run still parses; only printing the help shows it.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPTS = sorted(
    path.relative_to(ROOT).as_posix()
    for folder in ("training", "benchmarks")
    for path in (ROOT / folder).glob("*.py")
    if 'if __name__ == "__main__":' in path.read_text()
)


def test_the_scripts_are_found() -> None:
    assert "training/train_grpo.py" in SCRIPTS and "benchmarks/train_compare.py" in SCRIPTS


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_prints_the_options(script: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(sys, "argv", [str(ROOT / script), "--help"])
    monkeypatch.syspath_prepend(str(ROOT))
    with pytest.raises(SystemExit) as stop:
        runpy.run_path(str(ROOT / script), run_name="__main__")
    assert stop.value.code in (0, None)
    out = capsys.readouterr().out
    assert "usage:" in out and "--help" in out
