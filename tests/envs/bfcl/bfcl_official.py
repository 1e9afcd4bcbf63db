"""Test-only access to the official ``bfcl_eval`` checkers.

``bfcl_eval.eval_checker.ast_eval.ast_checker`` imports ``constants.model_config``, which
imports every model handler (anthropic, openai, google-genai, ...). Only its
``MODEL_CONFIG_MAPPING[model].underscore_to_dot`` is read, so a stub module with that one
entry stands in for it. The multi-turn checker executes call strings with ``eval``: it is used
ONLY here, in tests, and ONLY on strings the tests generate themselves from BFCL gold data.
"""

from __future__ import annotations

import itertools
import sys
import types
from typing import Any

MODEL = "envsched-agreement"
_runs = itertools.count()


def _stub_model_config() -> None:
    if "bfcl_eval.constants.model_config" in sys.modules:
        return
    stub = types.ModuleType("bfcl_eval.constants.model_config")
    stub.MODEL_CONFIG_MAPPING = {MODEL.replace("_", "/"): types.SimpleNamespace(underscore_to_dot=False)}  # type: ignore[attr-defined]
    sys.modules["bfcl_eval.constants.model_config"] = stub


def official_ast(functions: list[dict[str, Any]], calls: list[dict[str, Any]], answer: list[dict[str, Any]], category: str) -> bool:
    """BFCL's own AST verdict for ``calls`` (``[{name: arguments}]``); an exception is a failure."""
    _stub_model_config()
    from bfcl_eval.constants.enums import Language
    from bfcl_eval.eval_checker.ast_eval.ast_checker import ast_checker

    language = Language.JAVA if category == "simple_java" else Language.JAVASCRIPT if category == "simple_javascript" else Language.PYTHON
    try:
        return bool(ast_checker(functions, calls, answer, language, category, MODEL)["valid"])
    except Exception:  # BFCL's checker raises on some type names; its run would count the entry as failed
        return False


def official_multi_turn(decoded: list[list[list[str]]], ground_truth: list[list[str]], entry: dict[str, Any]) -> bool:
    """BFCL's multi-turn verdict; ``decoded`` holds, per turn, per step, call strings made by the tests."""
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker

    model = f"{MODEL}_{next(_runs)}"
    try:
        if len(decoded) != len(ground_truth):
            return False
        return bool(multi_turn_checker(decoded, ground_truth, entry, entry["id"].rsplit("_", 1)[0], model)["valid"])
    finally:  # drop the instances BFCL caches in its module globals for this run
        for key in [k for k in vars(multi_turn_utils) if k.startswith(model)]:
            del vars(multi_turn_utils)[key]
