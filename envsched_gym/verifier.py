"""Verifiers and the registry of verifier kinds.

A task names its scoring rule by ``VerifierConfig(kind, params)``. Every kind is a registered
:class:`Verifier` class whose ``Params`` is a typed config (a pydantic model that forbids unknown
keys), so a misspelt kind or parameter is an error when the family is registered, never a
reward. :func:`parse_params` is that check; :func:`build_verifier` is what
:meth:`Adapter.make_verifier` calls by default.
"""

from __future__ import annotations

import difflib
import json
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import BaseModel, ConfigDict, ValidationError

from envsched_gym.declarations import TaskSpec, VerifierConfig
from envsched_gym.episode import Episode, Outcome
from envsched_gym.world import World

if TYPE_CHECKING:
    from envsched_gym.adapter import Adapter


class VerifierParams(BaseModel):
    """Base of every verifier's typed parameters: unknown keys are an error, values are checked."""

    model_config = ConfigDict(extra="forbid", frozen=True, arbitrary_types_allowed=True)


class Verifier:
    """Scores an episode. One instance per episode, so it may keep per-turn notes.

    Override :meth:`score`; override :meth:`on_turn_end` to inspect the world after each user
    turn (BFCL's multi-turn checker compares state turn by turn). A class registered with
    :func:`register_verifier` also sets ``kinds`` and ``Params`` and implements
    :meth:`from_task`, so that tasks can name it in their ``VerifierConfig``.
    """

    kinds: ClassVar[tuple[str, ...]] = ()
    """The ``VerifierConfig.kind`` names this class serves."""
    Params: ClassVar[type[VerifierParams]] = VerifierParams
    """The typed parameters (``VerifierConfig.params``) of those kinds."""

    @classmethod
    def from_task(cls, task: TaskSpec, params: Any, adapter: Adapter) -> Verifier:
        """The verifier for one episode of ``task``; ``params`` is ``task.verifier.params`` parsed."""
        raise NotImplementedError(f"{cls.__name__} must implement from_task(task, params, adapter) to be built from a VerifierConfig")

    @classmethod
    def check_task(cls, task: TaskSpec, params: Any) -> None:
        """Raise ``ValueError`` when ``task`` cannot be scored with ``params`` (run at registration)."""

    def on_turn_end(self, episode: Episode, world: World) -> None:
        """Called after the agent ends each user turn, before the next user message."""

    def score(self, episode: Episode, world: World) -> Outcome:
        """Return the outcome of a finished episode."""
        raise NotImplementedError(f"{type(self).__name__} must implement score(episode, world)")


_KINDS: dict[str, type[Verifier]] = {}


def register_verifier(cls: type[Verifier], *, replace: bool = False) -> type[Verifier]:
    """Register ``cls`` under each of ``cls.kinds`` (usable as a class decorator).

    Raises:
        ValueError: ``cls.kinds`` is empty, or a kind is taken by another class and ``replace``
            is false.
    """
    if not cls.kinds:
        raise ValueError(f"{cls.__name__}.kinds is empty; set kinds = ('my_kind',) before registering it")
    for kind in cls.kinds:
        taken = _KINDS.get(kind)
        if taken is not None and taken is not cls and not replace:
            raise ValueError(f"verifier kind '{kind}' is already registered by {taken.__name__}; pass replace=True or pick another name")
    for kind in cls.kinds:
        _KINDS[kind] = cls
    return cls


def verifier_kinds() -> list[str]:
    """Every registered verifier kind."""
    return sorted(_KINDS)


def verifier_class(kind: str) -> type[Verifier]:
    """The class registered for ``kind``.

    Raises:
        KeyError: Unknown kind; the message lists the known kinds and the closest one.
    """
    try:
        return _KINDS[kind]
    except KeyError:
        close = difflib.get_close_matches(str(kind), list(_KINDS), n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        raise KeyError(
            f"unknown verifier kind '{kind}'.{hint} Known kinds: {verifier_kinds()}. Register a new one with "
            "envsched_gym.register_verifier(MyVerifier), or compose one from blocks with kind 'blocks'."
        ) from None


def parse_params(config: VerifierConfig) -> Any:
    """``config.params`` as its kind's typed ``Params``.

    Raises:
        KeyError: The kind is not registered.
        ValueError: A parameter is unknown (with the closest known name) or has a wrong type.
    """
    cls = verifier_class(config.kind)
    try:
        return cls.Params.model_validate(config.params)
    except ValidationError as exc:
        raise ValueError(f"verifier '{config.kind}': {describe(exc, cls.Params)}") from None


def describe(exc: ValidationError, model: type[BaseModel]) -> str:
    """A pydantic error as one line per problem, with did-you-mean for unknown keys."""
    lines = []
    for error in exc.errors()[:8]:
        where = ".".join(str(p) for p in error["loc"]) or "params"
        if error["type"] == "extra_forbidden":
            close = difflib.get_close_matches(str(error["loc"][-1]), list(model.model_fields), n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            lines.append(f"unknown parameter '{where}'{hint}; known: {sorted(model.model_fields)}")
        elif error["type"] == "missing":
            lines.append(f"missing parameter '{where}'")
        elif error["type"] == "value_error" and len(error["loc"]) == 1:  # a validator's own message says it all
            lines.append(str(error["ctx"]["error"]))
        else:
            lines.append(f"parameter '{where}': {error['msg']} (got {error.get('input')!r:.80})")
    return "; ".join(lines)


def build_verifier(task: TaskSpec, adapter: Adapter) -> Verifier:
    """The registered verifier of ``task.verifier.kind``, built from its parsed parameters."""
    return verifier_class(task.verifier.kind).from_task(task, parse_params(task.verifier), adapter)


def canonical(state: Any) -> str:
    """Sorted-key JSON of a state, the form states are compared and hashed in."""
    return json.dumps(state, sort_keys=True, ensure_ascii=False, default=repr)
