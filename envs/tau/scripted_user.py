"""A deterministic τ-bench customer built from a task's ``user_scenario`` (no LLM needed).

It opens with the reason for the call and the facts it knows, says yes when the agent asks
to confirm an action, answers other questions with the scenario sentences that share the
most words with the question, and ends the conversation the way τ2's users do:
``###TRANSFER###`` after the transfer notice, ``###STOP###`` when the agent replies without
a question or asks whether there is anything else, ``###OUT-OF-SCOPE###`` when it would only
repeat itself. It ignores the
scenario's conditional instructions ("if the agent asks twice, ..."): use an LLM user
(:mod:`envsched_gym.llm_user`) for faithful τ2 evaluation.
"""

from __future__ import annotations

import re
from typing import Any

from envsched_gym import Episode, TaskSpec, UserReply, UserSimulator

STOP, TRANSFER, OUT_OF_SCOPE = "###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"
STOP_TOKENS = (STOP, TRANSFER, OUT_OF_SCOPE)
CONFIRMATION = re.compile(r"\b(confirm|proceed|yes/no|yes or no|go ahead|shall i|should i|would you like me to)\b", re.IGNORECASE)
CLOSING = re.compile(r"\b(anything else|is there anything|any other (questions?|requests?))\b", re.IGNORECASE)
TRANSFER_WORD = re.compile(r"transferr?(ed|ing)\b", re.IGNORECASE)
HUMAN_AGENT = re.compile(r"\bhuman agent", re.IGNORECASE)
_SUBJECT_VERBS = (
    "want|need|have|had|would|will|can|could|should|do|don't|did|didn't|also|only|just|recently|received|prefer|"
    "like|wish|made|bought|ordered|live|moved|remember|know|think|may|must|plan|might|then|still|already|"
    "originally|never|are|were|was|got|lost|forgot|paid|booked|called|spoke|believe|feel|used|own"
)
_PRONOUNS = (
    (r"\b[Yy]ou are\b", "I am"), (r"\b[Yy]ou're\b", "I'm"), (r"\b[Yy]ou were\b", "I was"), (r"\b[Yy]ou've\b", "I've"),
    (r"\b[Yy]ourself\b", "myself"), (r"\b[Yy]ours\b", "mine"), (r"\bYour\b", "My"), (r"\byour\b", "my"),
    (rf"\b[Yy]ou(?=\s+(?:{_SUBJECT_VERBS})\b)", "I"), (r"\bYou\b", "I"), (r"\byou\b", "me"),
)  # fmt: skip
_STOPWORDS = frozenset(
    [
        "the",
        "a",
        "an",
        "and",
        "or",
        "to",
        "of",
        "in",
        "on",
        "for",
        "is",
        "are",
        "was",
        "be",
        "your",
        "you",
        "my",
        "me",
        "i",
        "it",
        "this",
        "that",
        "with",
        "can",
        "could",
        "please",
        "would",
        "what",
        "which",
        "do",
        "does",
        "did",
        "have",
        "has",
        "any",
        "there",
        "here",
        "also",
        "may",
        "like",
        "know",
        "let",
    ]
)
_WORD = re.compile(r"[a-z0-9#@._-]+")


def first_person(text: str) -> str:
    """Rewrite scenario text ("You are Emma. Your user id is ...") as the customer's own words."""
    for pattern, replacement in _PRONOUNS:
        text = re.sub(pattern, replacement, text)
    return text


def _sentences(text: str | None) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+|\n+", text or "") if s.strip()]


def announces_transfer(text: str) -> bool:
    """Whether the agent said it transferred (or is transferring) the user to a human agent.

    "transferred ... human agent" in that order. Only the first transfer word matters (a later
    one has less text after it), so two forward searches decide it in linear time; one regex
    with ``.*`` between the two backtracks over every occurrence (12.5 s for 96 KB).
    """
    word = TRANSFER_WORD.search(text)
    return word is not None and HUMAN_AGENT.search(text, word.end()) is not None


def _words(text: str) -> set[str]:
    return {w.strip("._-") for w in _WORD.findall(text.lower())} - _STOPWORDS - {""}


def _instructions(scenario: dict[str, Any]) -> dict[str, Any]:
    instructions = scenario.get("instructions") or {}
    return instructions if isinstance(instructions, dict) else {"reason_for_call": str(instructions)}


def opening_message(scenario: dict[str, Any]) -> str:
    """The customer's first message: the reason for calling and what they know."""
    instructions = _instructions(scenario)
    parts = [first_person(str(instructions.get(key) or "")).strip() for key in ("reason_for_call", "known_info")]
    return " ".join(["Hi!", *[p for p in parts if p]])


class ScriptedTauUser(UserSimulator):
    """The deterministic customer described in the module docstring.

    Args:
        max_replies: Replies before the customer gives up with ``###STOP###``.
    """

    def __init__(self, max_replies: int = 30) -> None:
        self.max_replies = max_replies
        self._facts: list[str] = []
        self._sent: list[str] = []

    def start(self, task: TaskSpec) -> str:
        scenario = task.metadata.get("user_scenario") or {}
        instructions = _instructions(scenario)
        keys = ("known_info", "reason_for_call", "unknown_info")
        self._facts = [first_person(s) for key in keys for s in _sentences(instructions.get(key))]
        self._sent = []
        return task.instruction or opening_message(scenario)

    def reply(self, episode: Episode) -> UserReply:
        text = episode.final_answer()
        if len(self._sent) >= self.max_replies:
            return UserReply(STOP, stop=True)
        if announces_transfer(text):
            return UserReply(TRANSFER, stop=True)
        if "?" not in text or CLOSING.search(text):
            return UserReply(STOP, stop=True)
        if CONFIRMATION.search(text):
            answer = "Yes, please proceed."
        else:
            answer = self._answer(text)
            if self._sent[-2:] == [answer, answer]:
                return UserReply(OUT_OF_SCOPE, stop=True)
        self._sent.append(answer)
        return UserReply(answer)

    def _answer(self, question: str) -> str:
        """The scenario sentences sharing the most words with ``question`` (at most two)."""
        asked = _words(question)
        scored = [(len(asked & _words(fact)), -i, fact) for i, fact in enumerate(self._facts)]
        best = max((s for s, _, _ in scored), default=0)
        if best == 0:
            return "I'm not sure about that. " + (self._facts[0] if self._facts else "")
        chosen = sorted((t for t in scored if t[0] == best), reverse=True)[:2]
        return " ".join(fact for _, _, fact in sorted(chosen, key=lambda t: -t[1]))
