"""EnvSched: variance-seeking batch selection over the dual-relation graph, no pilot rollouts.

Every node gets a score

    predicted within-group variance                       (exploitation: GRPO's signal)
    + task_bonus * uncertainty of that prediction         (coverage of under-observed tasks)
    + env_bonus / sqrt(1 + groups seen in its environment / groups its pool share would get)
                                                          (coverage of under-observed environments)

and the batch is filled greedily from the best-scoring candidates: each pick maximises the
score minus ``similarity_penalty`` times its largest within-environment similarity to a task
already in the batch (through the graph's within edges, so only near neighbours count), and no environment takes more than its quota of the batch. Quotas follow
each environment's share of the predicted variance mass, so a small environment cannot crowd
out large ones just because a few of its tasks look learnable (measured: without this, the
simulated learner's held-out score at T fell below random's, because training concentrated on
environments that hold a tiny share of the held-out tasks). Ties are
broken by a fixed seeded per-node offset, so equal seeds and equal updates give equal batches on
every process.

The batch is filled family by family. The scheduler's mixture gives each family its target share
(the family weights, or the pool share with a floor and a cap; see
:mod:`envsched_gym.curriculum.mixture`), and EnvSched's scores move a share within the mixture's
band. Each family's mean score over its best nodes tilts its share, by ``e`` for every
``mix_temperature`` above the mean (:meth:`EnvSchedScheduler.family_shares`). Environment
quotas and the environment bonus then work inside each family's count. Before this, 161 of 163
environments had a quota of 1, so the family mix followed the number of environments per family
rather than the tasks, and a 10-task family beside ToolWorld was never picked.

Within a family, the same rule covers the kinds of call the tasks' gold makes (``kind_cover``;
:data:`envsched_gym.curriculum.features.CALL_KINDS`: writes, reads, no call, no gold). Each
kind of the family gets a :class:`~envsched_gym.curriculum.mixture.Mixture` share of the
family's count: its share of the family's tasks, with the floor, cap and band of the family
mix, tilted by its best nodes' scores like a family, less their transfer factor (``kind_transfer``;
a no-call task calls no tool, so its transfer value alone held the kind at the floor). Without
the cover, EnvSched gave the real learner's write tasks 4-15 of 144 groups (random: 64-73) because look-ups share their tools
with more tasks and score higher, and the policy unlearned writing: held-out write success fell
from 0.25 and 0.37 to 0.00 while random's held (docs/training.md, "Session 42").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from envsched_gym.curriculum.base import BaseScheduler
from envsched_gym.curriculum.features import CALL_KINDS, NodeFeatures, build_features
from envsched_gym.curriculum.graph import DualGraph
from envsched_gym.curriculum.mixture import Mixture, MixtureConfig
from envsched_gym.curriculum.predictor import PredictorConfig, VariancePredictor
from envsched_gym.curriculum.progress import VISITS, LearningProgress
from envsched_gym.curriculum.regression import DeclarationModel
from envsched_gym.curriculum.state import StateReader
from envsched_gym.curriculum.units import KINDS
from envsched_gym.suite import Suite


@dataclass
class EnvSchedConfig:
    """EnvSched's knobs (defaults are the ones the benchmarks report).

    Attributes:
        k_within: Within-environment neighbours per node.
        k_cross: Cross-environment neighbours per node.
        block: Largest environment searched exactly for within edges.
        cross_block: Candidate window of the cross-edge search.
        text_weight: Share of task text (vs. tools/state/verifier) in within-environment similarity.
        task_bonus: Weight of the prediction's uncertainty in the score.
        env_bonus: Weight of the under-observed-environment bonus.
        similarity_penalty: Cost of a pick per unit of similarity to a task already in the batch.
        max_env_share: Most of a batch one environment may take (raised when there are too
            few environments to fill the batch).
        quota_slack: Quotas are this multiple of an environment's share of the predicted
            variance mass (see :meth:`EnvSchedScheduler.quotas`).
        candidates_per_slot: Candidates considered per batch slot before the greedy fill.
        mix_temperature: How strongly the families' scores move their shares within the
            mixture's band (smaller: more strongly; see :meth:`EnvSchedScheduler.family_shares`).
        progress_weight: Exponent of the learning-progress factor on the variance term (0: off;
            see :mod:`envsched_gym.curriculum.progress`).
        transfer_weight: Exponent of the transfer value on the predicted variance: a node's
            variance term is ``variance * transfer_value ** transfer_weight`` (0: variance
            alone; see :meth:`EnvSchedScheduler.transfer_value`).
        direction_transfer: 1: the transfer value is the learned direction of transfer (fitted rates
            x sensitivity mass); 0: the earlier reach x room form (see :meth:`EnvSchedScheduler.transfer_value`).
        repeat_discount: Within one batch, a tool or environment unit that ``c`` earlier picks
            already exercise counts ``1 / (1 + repeat_discount * c)`` in a candidate's transfer
            value (0: every pick is valued alone; no effect with ``transfer_weight = 0``; see
            :meth:`EnvSchedScheduler.transfer_value`).
        max_visits: Most groups one task gets while its family still has tasks below that count
            (0: no cap). Once too few of a family's tasks are below it to fill the family's
            picks, the cap rises by ``max_visits`` (a second pass over the family), so a small
            pool keeps being scheduled (see :meth:`EnvSchedScheduler.open_nodes`). Off by default:
            on the simulated learners a cap of 1 cost 0.026 at T on A and moved B within noise,
            and on real seed 5 EnvSched lost held-out success with a cap of 1 as well
            (docs/curriculum.md, "Visit cap").
        kind_cover: Split each family's groups over its call kinds by their pool share within the
            band (see the module docstring); off: the family's best nodes, whatever their kind.
        kind_transfer: Whether the transfer value is part of the evidence that tilts a family's
            call-kind shares (the picks within a kind use it either way). Off (the default since
            session 49): a kind is tilted by its best nodes' predicted signal alone, so a kind
            whose tasks share fewer units by construction (no-call tasks) is not held at its
            band's floor (see :meth:`EnvSchedScheduler._rescore`).
        predictor: Evidence weights and decay of the variance predictor.
    """

    k_within: int = 10
    k_cross: int = 5
    block: int = 512
    cross_block: int = 512
    text_weight: float = 0.6
    task_bonus: float = 0.1
    env_bonus: float = 0.05
    similarity_penalty: float = 0.05
    max_env_share: float = 0.25
    quota_slack: float = 1.5
    candidates_per_slot: int = 16
    mix_temperature: float = 0.05
    transfer_weight: float = 0.5
    repeat_discount: float = 1.0
    progress_weight: float = 1.0
    direction_transfer: float = 1.0
    max_visits: int = 0
    kind_cover: bool = True
    kind_transfer: bool = False
    predictor: PredictorConfig = field(default_factory=PredictorConfig)


class EnvSchedScheduler(BaseScheduler):
    """The EnvSched curriculum (see the module docstring).

    Args:
        suite: Nodes to schedule over.
        seed: Seeds the graph's hashing and the tie-break offsets.
        config: Knobs; keyword overrides of its fields (and of ``PredictorConfig``'s) also work.
        features: Precomputed node features (the scale benchmark reuses them).
        graph: Precomputed graph.
        weights: Family weights of the target mix (default: the suite's, else the pool share).
        mixture: Floor, cap and band of the target mix.
    """

    name = "envsched"
    STATE_KEYS = (*BaseScheduler.STATE_KEYS, "predictor", "env_groups", "config", "progress", "base_score", "signal_score", "kind_mix")

    def __init__(
        self,
        suite: Suite,
        seed: int = 0,
        config: EnvSchedConfig | None = None,
        features: NodeFeatures | None = None,
        graph: DualGraph | None = None,
        weights: Mapping[str, float] | None = None,
        mixture: MixtureConfig | None = None,
        **overrides: Any,
    ) -> None:
        super().__init__(suite, seed, weights, mixture)
        self.config = _with_overrides(config or EnvSchedConfig(), overrides)
        cfg = self.config
        self.features = features or build_features(suite.nodes, text_weight=cfg.text_weight)
        self.graph = graph or DualGraph.build(self.features, cfg.k_within, cfg.k_cross, cfg.block, cfg.cross_block, seed)
        model = DeclarationModel(self.features, cfg.predictor.model_half_life, cfg.predictor.model_penalty, exposure=cfg.predictor.model_exposure)
        self.predictor = VariancePredictor(self.graph, self.env_of, model, cfg.predictor)
        self.tie_break = np.random.default_rng([seed, 1]).random(len(self.task_ids)) * 1e-6
        units = self.features.units
        self._unit_reach = np.sqrt(np.maximum(units.count - 1, 0) / max(len(self.task_ids) - 1, 1))
        self._unit_mass = np.asarray(units.matrix.sum(axis=0)).ravel()
        self._discounted = units.kind != KINDS.index("signature")
        self._member = units.matrix.copy()
        self._member.data[:] = 1.0  # full credit: a group trains each tool it calls, not a share of one
        self._values: tuple[np.ndarray, np.ndarray] | None = None
        self.env_groups = np.zeros(len(self.env_ids))
        self.progress = LearningProgress(len(self.task_ids))
        self._within_in = self.graph.within.T.tocsr()
        self._slot = np.full(len(self.task_ids), -1, dtype=np.int64)
        n = len(self.task_ids)
        self._base_score, self._signal_score = np.zeros(n, dtype=np.float32), np.zeros(n, dtype=np.float32)
        self._rescore(np.arange(n))
        self.env_family = np.zeros(len(self.env_ids), dtype=np.int64)
        self.env_family[self.env_of] = self.mixture.family_of
        self.env_share = self._env_targets()
        self.kind_mix = [self._kind_mix(members) for members in self.mixture.members]

    def _kind_mix(self, members: np.ndarray) -> Mixture:
        """The mix over the call kinds of one family's ``members`` (one part when ``kind_cover`` is off)."""
        kinds = self.features.call_kind[members] if self.config.kind_cover else np.zeros(len(members), dtype=np.int8)
        present = np.unique(kinds)
        names = [CALL_KINDS[k] for k in present] if self.config.kind_cover else ["all"]
        mix = Mixture.over(names, np.searchsorted(present, kinds), self.mixture.config)
        mix.members = [members[part] for part in mix.members]  # positions in the pool, not in the family
        return mix

    def _env_targets(self) -> np.ndarray:
        """Each environment's target share: its family's target times its share of the family's tasks."""
        mix, family = self.mixture, self.env_family
        return mix.target[family] * np.bincount(self.env_of, minlength=len(self.env_ids)) / mix.sizes[family]

    def next_batch(self, batch_size: int) -> list[str]:
        """Per family, its count's best nodes under score, quotas and similarity penalty."""
        size = self.check_batch_size(batch_size)
        refreshed = self.predictor.refresh()
        self.progress.refresh()
        self._values = None  # the unit values follow the refreshed predictions once per batch
        self._rescore(refreshed)
        score = self.scores()  # one snapshot serves every family: a fill refreshes only its own family's nodes
        picks: list[int] = []
        for family, count in enumerate(self.mixture.counts(size, self.family_shares(size, score))):
            if count:
                picks.extend(self._fill_family(int(count), family, score))
        self.step += 1
        self.predictor.advance()
        return [self.task_ids[i] for i in picks]

    def env_term(self) -> np.ndarray:
        """Coverage bonus of each environment: large while it has had fewer groups than its pool share."""
        expected = self.env_share * self.env_groups.sum()
        return self.config.env_bonus / np.sqrt(1.0 + self.env_groups / np.maximum(expected, 1.0))

    def family_shares(self, batch_size: int, score: np.ndarray) -> np.ndarray:
        """The families' shares of the next batch: the target, tilted by their ``score`` (of every node) within the mixture's band."""
        return self.part_shares(self.mixture, batch_size, score)

    def part_shares(self, mix: Mixture, batch_size: int, score: np.ndarray) -> np.ndarray:
        """The shares of ``mix``'s parts (families, or one family's call kinds) in ``batch_size`` groups, tilted by ``score`` within its band.

        A part's evidence is the mean score of its ``round(B x target)`` best nodes (at
        least one), i.e. of the nodes it would contribute at its target share.
        """
        if len(mix.families) == 1:
            return mix.target
        evidence = np.zeros(len(mix.families))
        for f, members in enumerate(mix.members):
            top = min(len(members), max(1, round(batch_size * mix.target[f])))
            evidence[f] = np.partition(score[members], len(members) - top)[len(members) - top :].mean()
        return mix.shifted(evidence, self.config.mix_temperature)

    def scores(self) -> np.ndarray:
        """Current score of every node (cached per-node part plus the environment bonus)."""
        return self._base_score + self.env_term().astype(np.float32)[self.env_of]

    def transfer_value(self, nodes: np.ndarray, covered: np.ndarray | None = None) -> np.ndarray:
        """How much of what ``nodes`` teach is shared by the pool and not yet learned (1: the pool's average node).

        With ``direction_transfer`` (the default) it is the plug-in form of a group's first-order
        effect on the pool's success: ``(rate_full + rate_share / its tool count) x S_u`` summed
        over the tools the node exercises, plus ``rate_env x S_u`` of its environment. ``S_u`` is
        unit ``u``'s *sensitivity mass*, the pool's predicted within-group variance summed over
        the nodes having ``u`` (row-weighted, over the pool size): a lesson on ``u`` moves the
        success of those of its tasks that are neither solved nor hopeless. The rates are how far
        a unit of group signal moves a task's logit through a tool credited in full, a tool
        credited a share, or the environment: the declaration model's fitted exposure effects
        (:meth:`envsched_gym.curriculum.regression.DeclarationModel.exposure_effect`), each plus
        ``RATE_PRIOR`` so that they start equal. The unit values are computed once per batch,
        from the predictions the batch refreshed. Signature categories are left out:
        nearly a whole family shares them (measured: with them the picks were worse). Without it,
        the older form: per unit ``reach_u room_u``, ``reach_u = sqrt((nodes having u - 1) / (n - 1))``
        and ``room_u = 1 -`` the decayed success rate of the unit's groups, the row-weighted mean over
        each kind over its pool mean, averaged over the three kinds.

        ``covered`` (per unit: how much of it the batch's earlier picks exercise, their unit rows
        summed) discounts tool and environment units by ``1 / (1 + repeat_discount * covered)``:
        a second group on the same tool in one optimizer step pushes the same weights again and
        spreads less than a group on a tool the batch lacks. Signature categories are not
        discounted (nearly every task of a family shares them).
        """
        full, share = self._unit_values()
        if covered is not None:
            full, share = self._discount(full, covered), self._discount(share, covered)
        return np.asarray(self._member[nodes] @ full + self.features.units.matrix[nodes] @ share).ravel()

    RATE_PRIOR = 0.01
    """Logit change per unit of signal added to both fitted exposure effects (see :meth:`transfer_value`)."""

    def _discount(self, values: np.ndarray, covered: np.ndarray) -> np.ndarray:
        """Unit ``values`` with the tool and environment units the batch already ``covered`` discounted."""
        return values / (1.0 + self.config.repeat_discount * np.where(self._discounted, covered, 0.0))

    def _unit_values(self) -> tuple[np.ndarray, np.ndarray]:
        """Per unit, what a pick's transfer value gains from it with full credit and with a row-weighted share (see :meth:`transfer_value`); cached per batch."""
        if self._values is None:
            self._values = self._direction_values() if self.config.direction_transfer else (np.zeros(len(self._unit_mass)), self._room_values())
        return self._values

    def _direction_values(self) -> tuple[np.ndarray, np.ndarray]:
        """``rate x S_u`` of every unit for full credit and of every tool for a share, scaled so that the pool's mean transfer value is 1."""
        units = self.features.units
        effect = np.maximum(self.predictor.model.exposure_effect(), 0.0) + self.RATE_PRIOR
        mass = np.maximum(self.predictor.unit_variance, 0.0) / len(self.task_ids)  # the running sum can drift below 0 where every node predicts 0
        is_tool, is_env = units.kind == KINDS.index("tool"), units.kind == KINDS.index("env")
        full = mass * np.where(is_tool, effect[0], np.where(is_env, effect[2], 0.0))
        share = mass * np.where(is_tool, effect[1], 0.0)
        scale = max(float(self.features.units.count @ full + self._unit_mass @ share) / len(self.task_ids), 1e-12)
        return full / scale, share / scale

    def _room_values(self) -> np.ndarray:
        """``reach_u room_u`` of every unit over its kind's pool mean, over 3 (the older form; see :meth:`transfer_value`)."""
        model, units = self.predictor.model, self.features.units
        prior = self.predictor.pool_prior()[1]
        room = 1.0 - (model.unit_successes + 8.0 * prior) / (model.unit_rollouts + 8.0)
        per_unit = self._unit_reach * room
        kind_mean = np.bincount(units.kind, weights=self._unit_mass * per_unit, minlength=3) / len(self.task_ids)
        return per_unit / np.maximum(kind_mean[units.kind], 1e-12) / 3.0

    def _variance_term(self, nodes: np.ndarray, transfer: np.ndarray | None = None) -> np.ndarray:
        """Predicted variance x transfer value ** transfer_weight x progress ** progress_weight (``transfer``: given values, else computed)."""
        cfg = self.config
        variance = self.predictor.variance[nodes]
        if cfg.transfer_weight:
            variance = variance * (self.transfer_value(nodes) if transfer is None else transfer) ** cfg.transfer_weight
        if cfg.progress_weight:
            variance = variance * self.progress.factor(nodes) ** cfg.progress_weight
        return variance

    def _rescore(self, nodes: np.ndarray) -> None:
        """Refresh the cached scores of ``nodes`` from the cached predictions.

        ``_base_score`` is the pick score without the environment bonus; ``_signal_score`` is the
        same without the transfer factor, the evidence that tilts a family's call kinds unless
        ``kind_transfer`` (a no-call task's transfer value counts its environment alone, so read
        into the kind's share it would hold the kind at its band's floor whatever its rewards say).
        """
        rest = self.config.task_bonus * self.predictor.uncertainty[nodes] + self.tie_break[nodes]
        self._base_score[nodes] = self._variance_term(nodes) + rest
        self._signal_score[nodes] = self._variance_term(nodes, np.ones(len(nodes))) + rest

    def observe(self, node: int, rewards: np.ndarray, mean: float, variance: float) -> None:
        """Fold one checked group into the node's statistics and its neighbours' aggregates."""
        size = len(rewards)
        clipped = mean * size if 0.0 <= rewards.min() and rewards.max() <= 1.0 else sum(min(max(float(r), 0.0), 1.0) for r in rewards)
        self.predictor.observe(node, size, clipped, variance * size / (size - 1) if size > 1 else 0.0)
        self.env_groups[self.env_of[node]] += 1
        self.progress.observe(node, size, clipped / size)

    def estimates(self, nodes: np.ndarray) -> dict[str, np.ndarray]:
        """Fresh predictions (not the cache) for ``nodes``."""
        variance, mean, uncertainty = self.predictor.compute(nodes)
        return {"variance": variance, "mean": mean, "uncertainty": uncertainty}

    def quotas(self, batch_size: int, family: int | None = None) -> np.ndarray:
        """Most picks each environment may take of ``batch_size`` picks from ``family`` (its position; default: the pool).

        An environment's quota follows its share of the predicted variance mass (the sum of its
        nodes' predicted variance) of the family's environments, times ``quota_slack``: at
        least one pick, at most ``max_env_share`` of the picks (raised when too few
        environments could fill them). Environments of other families get 0.
        """
        cfg = self.config
        inside = np.ones(len(self.env_ids), dtype=bool) if family is None else self.env_family == family
        mass = np.where(inside, np.maximum(self.predictor.env_mass, 0.0), 0.0)
        share = mass / mass.sum() if mass.sum() > 0 else inside / inside.sum()
        cap = max(math.ceil(cfg.max_env_share * batch_size), math.ceil(batch_size / inside.sum()))
        return np.where(inside, np.clip(np.ceil(cfg.quota_slack * batch_size * share), 1, cap), 0).astype(np.int64)

    def _fill_family(self, count: int, family: int, score: np.ndarray) -> list[int]:
        """``count`` picks from ``family``: each call kind's count (see :meth:`part_shares`) filled by :meth:`_fill`.

        The kinds share the family's environment quotas, and each kind's picks are penalised
        for similarity to, and discounted for the units of, the family's earlier picks.
        """
        kinds, left = self.kind_mix[family], self.quotas(count, family)
        shares = self.part_shares(kinds, count, score if self.config.kind_transfer else self._signal_score)
        picks: list[int] = []
        for members, part in zip(kinds.members, kinds.counts(count, shares), strict=True):
            if part:
                picks.extend(self._fill(int(part), members, score[members], left, picks))
        return picks

    def _fill(self, size: int, members: np.ndarray, score: np.ndarray, left: np.ndarray, earlier: list[int]) -> list[int]:
        """Greedy fill of ``size`` picks from ``members`` (sorted; ``score``: their cached scores) under quotas and the similarity penalty.

        Candidates are the best nodes by cached score; their predictions are recomputed (and
        cached) before the greedy pass, so a stale cache can delay a node but never gets it
        picked on an outdated score. If quotas (``left``, per environment, spent in place)
        leave slots open, the next candidates come from the environments that still have
        quota; once none has (small environments), the quotas of ``members``' environments are
        lifted for the rest of the fill. ``earlier`` picks of the batch count for the similarity
        penalty and the repeat discount.
        """
        envs = self.env_of[members]
        picks = list(earlier)
        taken = ~self.open_nodes(members, size)
        n_cand = min(len(members), self.config.candidates_per_slot * size)
        while len(picks) < len(earlier) + size:
            open_score = np.where(taken | (left[envs] <= 0), -np.inf, score)
            available = int(np.isfinite(open_score).sum())
            if available == 0:
                left[np.unique(envs)] += size
                continue
            n_cand = min(n_cand, available)
            top = len(members) - n_cand
            local = np.argpartition(open_score, top)[top:] if n_cand < len(members) else np.arange(len(members))
            local = local[np.isfinite(open_score[local])]
            cand = members[local]
            self.predictor.store(cand, *self.predictor.compute(cand))
            self._rescore(cand)
            fresh = self._base_score[cand] + self.env_term()[self.env_of[cand]]
            order = np.argsort(-fresh, kind="stable")
            before = len(picks)
            self._greedy(cand[order], fresh[order], len(earlier) + size, picks, left)
            taken[np.searchsorted(members, picks[before:])] = True
            n_cand *= 4
        return picks[len(earlier) :]

    def open_nodes(self, members: np.ndarray, size: int) -> np.ndarray:
        """Which of a family's ``members`` may be picked under ``max_visits`` for a fill of ``size`` picks.

        A node is open while its groups so far are below the cap; the cap is the smallest
        multiple of ``max_visits`` that leaves at least ``size`` nodes open (all open when
        ``max_visits`` is 0).
        """
        cap = self.config.max_visits
        if not cap:
            return np.ones(len(members), dtype=bool)
        visits = self.progress.stats[members, VISITS]
        limit = cap * (1 + int(np.sort(visits)[min(size, len(members)) - 1] // cap))
        return visits < limit

    def _greedy(self, cand: np.ndarray, score: np.ndarray, size: int, picks: list[int], left: np.ndarray) -> None:
        """Extend ``picks`` from ``cand`` (best first), spending ``left`` quota.

        With ``repeat_discount`` (and the transfer value on), each pick rescores the candidates
        that share its tool or environment units: their variance term is recomputed with those
        units discounted (:meth:`transfer_value`), so the batch's value has diminishing returns
        per unit and a batch spreads over the tools it can teach.
        """
        self._slot[cand] = np.arange(len(cand))
        envs = self.env_of[cand]
        closest = np.zeros(len(cand))
        for node in picks:
            self._penalise(node, closest)
        spread = self._spread(cand, score) if self.config.repeat_discount and self.config.transfer_weight else None
        if spread is not None:
            score = spread(picks)
        allowed = left[envs] > 0
        while len(picks) < size and allowed.any():
            adjusted = np.where(allowed, score - self.config.similarity_penalty * closest, -np.inf)
            best = int(np.argmax(adjusted))
            picks.append(int(cand[best]))
            allowed[best] = False
            self._penalise(int(cand[best]), closest)
            env = int(envs[best])
            left[env] -= 1
            if left[env] <= 0:
                allowed &= envs != env
            if spread is not None:
                score = spread(picks)
        self._slot[cand] = -1

    def _spread(self, cand: np.ndarray, score: np.ndarray) -> Callable[[list[int]], np.ndarray]:
        """The candidates' scores as a function of the batch's picks so far (see :meth:`_greedy`).

        The returned function must be called with one growing list (each call's picks extend the
        last call's), as :meth:`_greedy` does: it adds only the new picks' unit rows.
        """
        unit_rows, power = self.features.units.matrix, self.config.transfer_weight
        full_rows, share_rows = self._member[cand], unit_rows[cand]
        full, share = self._unit_values()  # unit values do not change within a batch
        alone = self._variance_term(cand, np.ones(len(cand)))  # variance x progress: the part the batch does not change
        rest = score - alone * np.asarray(full_rows @ full + share_rows @ share).ravel() ** power  # uncertainty, environment and tie-break terms

        covered, counted = np.zeros(unit_rows.shape[1]), 0  # the picks' unit rows summed, kept up to date pick by pick

        def rescore(picks: list[int]) -> np.ndarray:
            nonlocal counted
            if not picks:
                return score
            for node in picks[counted:]:
                lo, hi = unit_rows.indptr[node], unit_rows.indptr[node + 1]
                np.add.at(covered, unit_rows.indices[lo:hi], unit_rows.data[lo:hi])
            counted = len(picks)
            value = full_rows @ self._discount(full, covered) + share_rows @ self._discount(share, covered)
            return rest + alone * np.asarray(value).ravel() ** power

        return rescore

    def _penalise(self, node: int, closest: np.ndarray) -> None:
        """Raise ``closest`` for candidates joined to ``node`` by a within edge (either direction)."""
        for matrix in (self.graph.within, self._within_in):
            lo, hi = matrix.indptr[node], matrix.indptr[node + 1]
            slots = self._slot[matrix.indices[lo:hi]]
            hit = slots >= 0
            np.maximum.at(closest, slots[hit], matrix.data[lo:hi][hit])

    def state_dict(self) -> dict[str, Any]:
        """Clock, RNG, statistics and cached predictions (the graph is rebuilt from the suite)."""
        return {**self.base_state(), "predictor": self.predictor.state_dict(), "env_groups": self.env_groups.tolist(),
                "config": asdict(self.config), "progress": self.progress.state_dict(), "base_score": self._base_score.tolist(),
                "signal_score": self._signal_score.tolist(),
                "kind_mix": {f: mix.state_dict() for f, mix in zip(self.mixture.families, self.kind_mix, strict=True)}}  # fmt: skip

    def read_state(self, reader: StateReader) -> dict[str, Any]:
        """Adds the checked predictor state and per-environment group counts (the config must be a dict; it is not restored)."""
        if not isinstance(reader.raw("config"), Mapping):
            reader.fail("config", f"must be a dict of EnvSchedConfig fields, found {type(reader.raw('config')).__name__}")
        predictor = self.predictor.read_state(reader.nested("predictor", VariancePredictor.STATE_KEYS))
        kinds = reader.nested("kind_mix", self.mixture.families)
        return {
            **super().read_state(reader),
            "predictor": predictor,
            "env_groups": reader.array("env_groups", (len(self.env_ids),), minimum=0.0),
            "progress": self.progress.read_state(reader.nested("progress", LearningProgress.STATE_KEYS)),
            "_base_score": reader.array("base_score", (len(self.task_ids),)).astype(np.float32),
            "_signal_score": reader.array("signal_score", (len(self.task_ids),)).astype(np.float32),
            "kind_mix": [mix.read_state(kinds.nested(f, Mixture.STATE_KEYS)) for f, mix in zip(self.mixture.families, self.kind_mix, strict=True)],
        }

    def apply_state(self, values: dict[str, Any]) -> None:
        """Assign the checked values; scheduling continues exactly as the saved run would."""
        values = dict(values)
        self.predictor.apply_state(values.pop("predictor"))
        self.progress.apply_state(values.pop("progress"))
        for mix, state in zip(self.kind_mix, values.pop("kind_mix"), strict=True):
            mix.apply_state(state)
        super().apply_state(values)


def _with_overrides(config: EnvSchedConfig, overrides: dict[str, Any]) -> EnvSchedConfig:
    """``config`` with keyword overrides applied to it or to its predictor config."""
    top = {k: v for k, v in overrides.items() if k in EnvSchedConfig.__dataclass_fields__}
    inner = {k: v for k, v in overrides.items() if k in PredictorConfig.__dataclass_fields__}
    unknown = set(overrides) - set(top) - set(inner)
    if unknown:
        known = sorted(set(EnvSchedConfig.__dataclass_fields__) | set(PredictorConfig.__dataclass_fields__))
        raise TypeError(f"unknown EnvSched options {sorted(unknown)}; known: {known}")
    predictor = PredictorConfig(**{**asdict(config.predictor), **inner})
    if predictor.model_exposure < 0:
        raise ValueError(f"model_exposure must be at least 0 (0: no exposure columns), got {predictor.model_exposure}")
    merged = EnvSchedConfig(**{**asdict(config), **top, "predictor": predictor})
    if isinstance(merged.max_visits, bool) or not isinstance(merged.max_visits, int) or merged.max_visits < 0:
        raise ValueError(f"max_visits must be a whole number of groups, at least 0 (0: no cap), got {merged.max_visits!r}")
    if merged.kind_cover not in (0, 1):
        raise ValueError(f"kind_cover must be true (cover every call kind of a family) or false, got {merged.kind_cover!r}")
    if merged.kind_transfer not in (0, 1):
        raise ValueError(f"kind_transfer must be true (the transfer value tilts the call kinds) or false, got {merged.kind_transfer!r}")
    if merged.direction_transfer not in (0, 1):
        raise ValueError(
            f"direction_transfer must be 1 (the learned direction of transfer) or 0 (the reach x room form), "
            f"got {merged.direction_transfer}; the two forms do not blend"
        )
    return merged
