"""A format penalty: the training reward of an episode the environment could not read cleanly.

The verifiers judge outcomes, so an episode with a malformed turn (a call that does not parse, or
tool-call tags left outside the calls: :func:`envsched_gym.parsing.malformed_turn`) can still
succeed, e.g. a final answer that opens with a made-up ``<tool_response>`` tag but states the
right value. GRPO then reinforces the stray tags, and every failure, malformed or not, gets the
same advantage. From the preset's 16-step warm start such text spread through unanchored runs
(docs/training.md, "What the held-out losses are made of" and the session-51 replication).

With a penalty ``p > 0``, GRPO learns from ``reward - p`` on such episodes: a malformed success
ranks below a clean one and a malformed failure below a clean failure, so an all-failed group
with both kinds carries a signal against the malformed text. The curriculum, the metrics, the
answer logs and every evaluation keep the verifier's reward: the penalty shapes the gradient,
not what counts as solving a task.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


def check_format_penalty(penalty: float) -> None:
    """Refuse a penalty below 0 (it would pay for malformed turns) or not finite."""
    if not math.isfinite(penalty) or penalty < 0:
        raise ValueError(f"the format penalty must be a finite number >= 0 (0: off; 0.5 puts a malformed success halfway to a failure), got {penalty}")


def training_rewards(rewards: Sequence[float], malformed: Sequence[bool], penalty: float) -> list[float]:
    """The rewards GRPO learns from: each verifier reward less ``penalty`` where its episode had a malformed turn."""
    if len(rewards) != len(malformed):
        raise ValueError(f"{len(malformed)} malformed flags for {len(rewards)} rewards; give one per rollout")
    return [float(r) - penalty * bool(m) for r, m in zip(rewards, malformed, strict=True)]

