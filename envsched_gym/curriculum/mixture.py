"""The target mix of families, and how many groups of a batch each family gets.

Every scheduler draws its batch family by family: a :class:`Mixture` decides how many of the
``B`` groups go to each family, and the scheduler's own rule picks the tasks within it. The
target share of a family is

- its weight, when the suite (or the scheduler) has family weights, else its share of the
  pool's tasks, then
- at least ``floor`` (default 5 %; ``1 / families`` when that is smaller), so a small family is
  trained on at every share of the pool, and
- for the pool share only, at most ``cap`` (default 80 %; at least ``1 / families``), so a
  family that ships many tasks does not crowd out the rest. Weights are the user's decision and
  are not capped.

A scheduler with evidence about the families (EnvSched's scores) may move a share away from the
target by at most ``band`` (default 4 points) either way, never below the floor
(:meth:`Mixture.shifted`). The default is a point inside the 5-point tolerance the curriculum
promises for every family's share: at a band of 5, EnvSched sat at the band's edge on the
simulators and the rounding of a run's last batches decided whether a share ended inside it.

Shares become whole group counts by largest-remainder rounding with a carried remainder, so the
counts of every batch sum to ``B`` and each family's count averaged over steps equals its share
(within one group, at any batch size): a 5 % family gets a group in four of every five batches
of 16 rather than none. The carry is the mixture's only state.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from envsched_gym.curriculum.state import StateReader
from envsched_gym.suite import Suite, check_weights


@dataclass(frozen=True)
class MixtureConfig:
    """Floor, cap and band of the family mix (shares of the batch, in [0, 1]).

    Attributes:
        floor: Smallest target share of any family (lowered to ``1 / families`` when larger).
        cap: Largest target share of a family under the pool-share default (raised to
            ``1 / families`` when smaller; weights are not capped).
        band: Most a scheduler's evidence may move a family's share away from its target,
            either way (see the module docstring for the default).
    """

    floor: float = 0.05
    cap: float = 0.8
    band: float = 0.04

    def __post_init__(self) -> None:
        for name in ("floor", "cap", "band"):
            value = getattr(self, name)
            if not (isinstance(value, int | float) and 0.0 <= value <= 1.0):
                raise ValueError(f"MixtureConfig.{name} must be a share in [0, 1], got {value!r}")


class Mixture:
    """The target share of each family of a suite and the per-step group counts that follow it.

    Args:
        suite: The nodes the scheduler draws from.
        weights: Family weights (relative, one per family; checked by
            :func:`envsched_gym.suite.check_weights`). ``None``: the suite's own ``weights``,
            else the pool share.
        config: Floor, cap and band.
    """

    STATE_KEYS = ("families", "target", "carry")

    def __init__(self, suite: Suite, weights: Mapping[str, float] | None = None, config: MixtureConfig | None = None) -> None:
        position = {f: i for i, f in enumerate(suite.families)}
        family_of = np.fromiter((position[n.family] for n in suite.nodes), dtype=np.int64, count=len(suite))
        self._setup(suite.families, family_of, check_weights(weights, suite.families) if weights is not None else suite.weights, config)

    @classmethod
    def over(cls, names: Sequence[str], label_of: np.ndarray, config: MixtureConfig | None = None) -> Mixture:
        """A mix over any partition of nodes, with the pool share as target (EnvSched's call kinds within a family).

        Args:
            names: One name per part; every part must hold at least one node.
            label_of: Part position of each node.
            config: Floor, cap and band, in shares of the groups the partition is given.
        """
        labels = np.asarray(label_of, dtype=np.int64)
        if len(labels) == 0 or labels.min() < 0 or labels.max() >= len(names) or len(np.unique(labels)) != len(names):
            raise ValueError(f"a mix over {list(names)} needs every node labelled with one of their positions and every part non-empty")
        mix = cls.__new__(cls)
        mix._setup(list(names), labels, None, config)
        return mix

    def _setup(self, families: list[str], family_of: np.ndarray, weights: dict[str, float] | None, config: MixtureConfig | None) -> None:
        self.config = config or MixtureConfig()
        self.families = families
        self.weights = weights
        self.family_of = family_of
        self.members = [np.flatnonzero(self.family_of == f) for f in range(len(self.families))]
        self.sizes = np.array([len(m) for m in self.members])
        self.target = self._target()
        self.shares = self.target.copy()
        self.carry = np.zeros(len(self.families))

    def _target(self) -> np.ndarray:
        """Weights or pool share, then the floor (and, for the pool share, the cap)."""
        n, cfg = len(self.families), self.config
        raw = np.array([self.weights[f] for f in self.families]) if self.weights else self.sizes.astype(np.float64)
        share = raw / raw.sum()
        low = np.full(n, min(cfg.floor, 1.0 / n))
        high = np.full(n, 1.0 if self.weights else max(cfg.cap, 1.0 / n))
        return project(share, low, high)

    def bounds(self) -> tuple[np.ndarray, np.ndarray]:
        """Lowest and highest share evidence may give each family: the target within ``band``, never below the floor."""
        floor = min(self.config.floor, 1.0 / len(self.families))
        low = np.maximum(self.target - self.config.band, np.minimum(floor, self.target))
        return low, np.minimum(self.target + self.config.band, 1.0)

    def shifted(self, evidence: np.ndarray, temperature: float) -> np.ndarray:
        """The target tilted towards families of higher ``evidence``, kept within :meth:`bounds`.

        Args:
            evidence: One value per family (EnvSched: the mean score of the family's best nodes).
            temperature: A family whose evidence is this much above the target-weighted mean gets
                ``e`` times its target before the band clips it.
        """
        values = np.asarray(evidence, dtype=np.float64)
        if values.shape != self.target.shape or not np.isfinite(values).all():
            raise ValueError(f"evidence must be {len(self.families)} finite numbers, one per family {self.families}, got {values.tolist()}")
        if temperature <= 0:
            raise ValueError(f"the evidence temperature must be above 0, got {temperature}")
        logits = (values - self.target @ values) / temperature
        tilted = self.target * np.exp(logits - logits.max())
        return project(tilted / tilted.sum(), *self.bounds())

    def counts(self, batch_size: int, shares: np.ndarray | None = None) -> np.ndarray:
        """Groups of each family in a batch of ``batch_size`` (summing to it), following ``shares`` (default: the target).

        Largest-remainder rounding of ``batch_size x share`` plus the remainder carried from
        earlier batches. A family with fewer tasks than its count gets all of its tasks, and
        the rest goes to the other families by their shares; its carry is then bounded (at one
        group either way), so it does not claim a backlog it could never draw.

        Raises:
            ValueError: The batch is larger than the pool (the scheduler checks this first).
        """
        if batch_size > self.sizes.sum():
            raise ValueError(f"a batch of {batch_size} groups does not fit the {self.sizes.sum()} tasks of {self.families}")
        self.shares = self.target.copy() if shares is None else np.asarray(shares, dtype=np.float64)
        quota = batch_size * self.shares + self.carry
        counts = apportion(np.maximum(quota, 1e-9 * self.shares), batch_size, self.sizes)
        self.carry = np.clip(quota - counts, -1.0, 1.0)
        return counts

    def groups(self, batch_size: int, shares: np.ndarray | None = None) -> list[tuple[np.ndarray, int]]:
        """``(member node positions, count)`` of every family with a non-zero count (see :meth:`counts`)."""
        return [(self.members[f], int(c)) for f, c in enumerate(self.counts(batch_size, shares)) if c]

    def report(self, nodes: Sequence[int]) -> dict[str, dict[str, float]]:
        """The shares the last batch aimed for (``target``) and the shares of ``nodes`` (``share``), by family name."""
        drawn = np.bincount(self.family_of[np.asarray(nodes, dtype=np.int64)], minlength=len(self.families)) / max(len(nodes), 1)
        return {"target": dict(zip(self.families, self.shares.tolist(), strict=True)),
                "share": dict(zip(self.families, drawn.tolist(), strict=True))}  # fmt: skip

    def state_dict(self) -> dict[str, Any]:
        """The carried remainders, with the families and target they belong to."""
        return {"families": list(self.families), "target": self.target.tolist(), "carry": self.carry.tolist()}

    def read_state(self, reader: StateReader) -> dict[str, Any]:
        """The checked carry of a saved state made over the same families and target mix."""
        found = reader.raw("families")
        if not isinstance(found, list | tuple) or list(found) != self.families:
            count = f"{len(found)} families " if isinstance(found, list | tuple) else ""
            reader.fail("families", f"are {count}{found!r:.200}, expected the {len(self.families)} families {self.families} of this suite")
        target = reader.array("target", (len(self.families),), minimum=0.0)
        if not np.allclose(target, self.target, rtol=0, atol=1e-9):
            reader.fail(
                "target",
                f"is {target.round(4).tolist()}, but this scheduler's target mix is {self.target.round(4).tolist()} (build it with the same family weights and MixtureConfig)",
            )
        carry = reader.array("carry", (len(self.families),))
        if np.abs(carry).max(initial=0.0) > 1.0 + 1e-9:
            reader.fail("carry", f"must lie in [-1, 1] (a remainder of at most one group), found {carry.tolist()}")
        return {"carry": carry}

    def apply_state(self, values: dict[str, Any]) -> None:
        """Assign what :meth:`read_state` checked."""
        self.carry = values["carry"]


def project(share: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """``share`` (positive) scaled by one factor and clipped to ``[low, high]`` so that it sums to 1.

    Entries held at a bound keep it, and the others keep their proportions: raising a small
    family to the floor takes the share from the rest in proportion to their size. Needs
    ``low.sum() <= 1 <= high.sum()``; the factor is found by bisection.
    """
    if low.sum() > 1.0 + 1e-12 or high.sum() < 1.0 - 1e-12 or (low > high).any():
        raise ValueError(f"no shares fit between {low.tolist()} and {high.tolist()} and sum to 1")
    share = np.maximum(share, 1e-12)  # a share that underflowed to 0 still scales (and is then lifted to its low bound)
    lo, hi = 0.0, float((high / share).max())
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if np.clip(share * mid, low, high).sum() < 1.0 else (lo, mid)
    out = np.clip(share * hi, low, high)
    return out / out.sum()


def apportion(quota: np.ndarray, total: int, capacity: np.ndarray) -> np.ndarray:
    """Whole counts near ``quota`` (positive) that sum to ``total``, each at most its ``capacity``.

    The quotas are first rescaled to sum to ``total`` (capped entries keep their capacity and
    the others share the rest in proportion), then floored, and the groups left over go to the
    largest fractional parts.
    """
    q = quota * (total / quota.sum())
    for _ in range(len(q)):
        full = q >= capacity
        q = np.where(full, capacity, q)
        free = ~full
        spare = total - q[full].sum()
        if not free.any() or abs(q[free].sum() - spare) < 1e-9:
            break
        q[free] *= spare / q[free].sum()
    counts = np.minimum(np.floor(q + 1e-9), capacity).astype(np.int64)
    order = np.argsort(-(q - counts), kind="stable")
    for f in order[: total - int(counts.sum())]:
        counts[f] += 1
    return counts
