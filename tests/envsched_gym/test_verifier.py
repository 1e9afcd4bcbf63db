"""The registry of verifier kinds and their typed parameters."""

from __future__ import annotations

import pytest

from envsched_gym import TaskSpec, Verifier, VerifierConfig, VerifierParams, register_verifier, verifier_kinds
from envsched_gym.verifier import parse_params, verifier_class


def test_every_built_in_kind_is_registered() -> None:
    import envsched_gym.adapters.acebench
    import envsched_gym.adapters.bfcl
    import envsched_gym.adapters.tau
    import envsched_gym.adapters.toolworld  # noqa: F401

    assert {"gold_state", "blocks", "toolworld", "tau", "bfcl_ast", "bfcl_multi_turn", "ace_normal", "ace_agent"} <= set(verifier_kinds())


def test_unknown_kind_names_it_lists_the_known_and_suggests_the_closest() -> None:
    with pytest.raises(KeyError) as err:
        verifier_class("gold_sate")
    message = err.value.args[0]
    assert "unknown verifier kind 'gold_sate'" in message and "Did you mean 'gold_state'?" in message and "'blocks'" in message


def test_mistyped_parameter_is_an_error_with_the_closest_name() -> None:
    with pytest.raises(ValueError, match=r"unknown parameter 'fact' \(did you mean 'facts'\?\)"):
        parse_params(VerifierConfig("gold_state", {"fact": ["21.5"]}))


def test_wrong_parameter_type_is_an_error() -> None:
    with pytest.raises(ValueError, match="parameter 'facts'"):
        parse_params(VerifierConfig("gold_state", {"facts": "21.5"}))


def test_block_configs_are_typed_too() -> None:
    with pytest.raises(ValueError, match=r"blocks\[1\]: unknown verifier block 'refusl'. Did you mean 'refusal'\?"):
        parse_params(VerifierConfig("blocks", {"blocks": [{"block": "state_match"}, {"block": "refusl"}]}))
    with pytest.raises(ValueError, match=r"blocks\[0\] \(facts\): missing parameter 'facts'; unknown parameter 'fact' \(did you mean"):
        parse_params(VerifierConfig("blocks", {"blocks": [{"block": "facts", "fact": ["x"]}]}))
    with pytest.raises(ValueError, match=r"blocks\[0\] \(facts\): parameter 'facts'"):
        parse_params(VerifierConfig("blocks", {"blocks": [{"block": "facts", "facts": []}]}))  # a facts block that cannot fail
    with pytest.raises(ValueError, match="exactly one of 'call' and 'says'"):
        parse_params(VerifierConfig("blocks", {"blocks": [{"block": "milestones", "steps": [{"says": "x", "call": {"name": "f"}}]}]}))


def test_a_user_kind_registers_and_a_clash_is_refused() -> None:
    class ThresholdParams(VerifierParams):
        threshold: float

    class Always(Verifier):
        kinds = ("test_threshold",)
        Params = ThresholdParams

    register_verifier(Always)
    assert parse_params(VerifierConfig("test_threshold", {"threshold": 0.5})).threshold == 0.5

    class Other(Verifier):
        kinds = ("test_threshold",)

    with pytest.raises(ValueError, match="already registered by Always"):
        register_verifier(Other)
    with pytest.raises(ValueError, match="kinds is empty"):
        register_verifier(type("Nameless", (Verifier,), {}))


def test_a_kind_without_from_task_says_how_to_build_it() -> None:
    class NoParams(VerifierParams):
        pass

    class Manual(Verifier):
        kinds = ("test_manual",)
        Params = NoParams

    register_verifier(Manual)
    with pytest.raises(NotImplementedError, match="from_task"):
        Manual.from_task(TaskSpec("t", "e", "hi"), NoParams(), None)  # type: ignore[arg-type]
