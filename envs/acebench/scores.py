"""ACEBench's aggregate scores: per-category accuracy and the weighted overall score.

As in ACEBench's ``evaluation_helper.generate_result_csv``: the normal, special and agent
scores are unweighted means of their categories' accuracies (a missing category counts 0),
and the overall score is ``0.578 * normal + 0.2676 * special + 0.1545 * agent`` (the agent
score uses end-to-end accuracy). A multi-turn normal category scores per dialogue: a
dialogue (ids ``..._<dialogue>_<turn>``) counts only if all its turns are correct.
"""

from __future__ import annotations

from collections.abc import Mapping

from envsched_gym.envs.acebench.dataset import AGENT, NORMAL, SPECIAL

WEIGHTS: dict[str, float] = {"normal": 0.578, "special": 0.2676, "agent": 0.1545}
ATOM = tuple(c for c in NORMAL if c.startswith("normal_atom"))


def category_accuracy(category: str, correct: Mapping[str, bool]) -> float:
    """Accuracy of one category from ``{entry id: correct}`` (ACEBench rounds to 3 digits)."""
    if not correct:
        return 0.0
    if category.startswith("normal_multi_turn"):
        dialogues: dict[str, bool] = {}
        for entry_id, ok in correct.items():
            dialogue = entry_id.rsplit("_", 2)[-2]
            dialogues[dialogue] = dialogues.get(dialogue, True) and ok
        return round(sum(dialogues.values()) / len(dialogues), 3)
    return round(sum(correct.values()) / len(correct), 3)


def _mean(accuracies: Mapping[str, float], categories: tuple[str, ...]) -> float:
    return round(sum(accuracies.get(c, 0.0) for c in categories) / len(categories), 3)


def overall_score(accuracies: Mapping[str, float]) -> dict[str, float]:
    """Group scores and the weighted overall score from ``{category: accuracy}``.

    Returns:
        ``normal``, ``special``, ``agent``, ``atom``, ``single_turn``, ``multi_turn`` and
        ``overall`` (rounded to 3 digits, as ACEBench reports them).
    """
    unknown = set(accuracies) - set(NORMAL + SPECIAL + AGENT)
    if unknown:
        raise ValueError(f"unknown ACEBench categories {sorted(unknown)}; known: {NORMAL + SPECIAL + AGENT}")
    groups = {"normal": _mean(accuracies, NORMAL), "special": _mean(accuracies, SPECIAL), "agent": _mean(accuracies, AGENT)}
    out = dict(groups)
    out["atom"] = _mean(accuracies, ATOM)
    out["single_turn"] = _mean(accuracies, NORMAL[:2])
    out["multi_turn"] = _mean(accuracies, NORMAL[2:4])
    out["overall"] = round(sum(WEIGHTS[g] * groups[g] for g in WEIGHTS), 3)
    return out
