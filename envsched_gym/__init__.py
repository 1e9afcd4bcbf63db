"""envsched-gym: tool-use environments for RL of LLM agents, and the EnvSched curriculum.

Importing the package registers every built-in ``envsched/*`` gymnasium id (lazily: no
adapter or data is loaded until ``gym.make``) and the families of installed packages' entry
points (:mod:`envsched_gym.plugins`).
"""

from envsched_gym.adapter import Adapter
from envsched_gym.blocks import Block, CallPattern, register_block
from envsched_gym.composed import BlockVerifier, GoldStateVerifier
from envsched_gym.declarations import AssistantTurn, EnvSpec, StateComponent, TaskSpec, ToolCall, ToolSpec, VerifierConfig
from envsched_gym.episode import CallRecord, ChatMessage, Episode, Message, Outcome
from envsched_gym.parsing import ParseResult, parse_tool_calls
from envsched_gym.plugins import load_entry_points
from envsched_gym.registry import families, get_adapter, make, register_adapter, register_builtin, registered_ids
from envsched_gym.rendering import render_calls, render_turn
from envsched_gym.suite import Suite, TaskNode, suite
from envsched_gym.tool import tool
from envsched_gym.users import ScriptedTurns, UserReply, UserSimulator
from envsched_gym.validate import FamilyValidationError, ValidationReport, validate_family
from envsched_gym.verifier import Verifier, VerifierParams, register_verifier, verifier_kinds
from envsched_gym.world import ToolError, World

register_builtin()
load_entry_points()

__all__ = [
    "Adapter", "AssistantTurn", "Block", "BlockVerifier", "CallPattern", "CallRecord", "ChatMessage", "EnvSpec", "Episode",
    "FamilyValidationError", "GoldStateVerifier", "Message", "Outcome", "ParseResult", "ScriptedTurns", "StateComponent",
    "Suite", "TaskNode", "TaskSpec", "ToolCall", "ToolError", "ToolSpec", "UserReply", "UserSimulator", "ValidationReport",
    "Verifier", "VerifierConfig", "VerifierParams", "World", "families", "get_adapter", "make", "parse_tool_calls",
    "register_adapter", "register_block", "register_builtin", "register_verifier", "registered_ids", "render_calls",
    "render_turn", "suite", "tool", "validate_family", "verifier_kinds",
]  # fmt: skip
__version__ = "0.1.0"


def __getattr__(name: str) -> object:
    """Lazy ``EnvSchedCurriculum`` (the curriculum imports scikit-learn; ``import envsched_gym`` stays fast)."""
    if name == "EnvSchedCurriculum":
        from envsched_gym.curriculum import EnvSchedCurriculum

        return EnvSchedCurriculum
    raise AttributeError(f"module 'envsched_gym' has no attribute '{name}'")
