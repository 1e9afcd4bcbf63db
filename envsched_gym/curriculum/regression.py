"""The declaration model: an online logistic ridge regression of success on the declaration features.

The graph propagation predicts a never-seen task from its neighbours' statistics; this model
predicts it from what its declarations have in common with every task seen so far. It fits the
success probability of each group's task as ``sigmoid(x beta)`` over the node's row

    units (tools used, environment, signature categories; :mod:`envsched_gym.curriculum.units`)
    + the standardised numeric signature facts + 1 + log(1 + earlier groups of this node)
    + three training-exposure columns: its tools trained in full, in a share, its environment (below)
    + the group's age ``(born - now) / half_life`` (the drift column; 0 for a prediction)

by binomial maximum likelihood with a ridge penalty (``penalty`` on every coefficient but the
intercept), each group weighted by ``0.5 ** (age / half_life)`` so the fit follows the moving
policy. The visits column separates what training a task did to that task from what its
declarations predict: a never-seen task has 0 there. That matters when the learner memorises
(its trained tasks rise faster than their untrained neighbours), which would otherwise bias
every prediction for never-seen tasks upward.

The drift column is there because the policy improves while the groups age: the decayed
average of the kept groups is the success rate of a policy about a half-life old, so every
prediction lagged the current one (on the simulated learners, the predicted mean success of
never-seen tasks sat 0.1-0.15 below the truth after 60-100 steps). With a common linear trend in
logit over the kept window, the fit at age 0 is the current policy's. The drift's coefficient is
re-estimated at every fit, so a plateau flattens it, and it is penalised like the others: while
the kept groups span a few steps their ages differ too little to tell a drift from a change in
which tasks were picked, and the penalty keeps it near 0.

The exposure columns model what training did to the units. Every checked group adds its
*signal*, ``var / 0.25`` (its rewards' variance, clipped to 1: GRPO's expected update grows with
it and a group whose rewards are all equal moves nothing), to the tools and the environment it
exercises, in two ways: in full to each tool, and ``1 / its tool count`` to each. A row's three
columns are, when its group arrives (so a group counts the training before it, not its own): the
unit-weighted mean over its tools of the full sums, the same of the shared sums, and its
environment's sum. Their coefficients, fitted from the groups like the rest, say how far a unit of
signal moves a task's logit through a tool trained in full (each tool of a group learns), through a
tool trained a share (a group's training is split over its tools), and through the environment;
which of the first two fits tells how the learner spreads a group's training. The columns let
the fit tell a tool trained since its groups were rolled from one that was not: without them, a
never-seen task's prediction followed its units' *old* groups, whatever the training since (the
drift column moves every task alike). EnvSched's transfer value reads the coefficients as rates
(:meth:`exposure_effect`).

The prediction for a node is the logit-normal ``N(x beta, s^2)``. ``s^2`` is the spread of the
tasks' logits around the fit, estimated from the groups' overdispersion (the variance of their
success counts beyond the binomial's, by the delta method) and shrunk towards
``prior_residual`` while there are few groups. ``E[p]`` and ``E[p (1 - p)]`` follow by
Gauss-Hermite quadrature.

**Cost.** The model keeps the groups of the last six half-lives (older ones weigh under
``DROP`` = 1/64 and leave), as a sparse matrix that grows by the new rows only. Each batch of
updates triggers one iteratively-reweighted-least-squares step, solved by at most
``CG_ITERATIONS`` matrix-free conjugate-gradient iterations warm-started from the previous
coefficients (each: two sparse products over the kept groups), so a refit costs the same at any
pool size. The step is taken only if it does not raise the penalised likelihood, else halved
until it does not (each halving: one more product); the full step passes nearly always, so the
check costs a few vector operations. A prediction is one sparse row product per node.

``beta`` holds the design's coefficients, then the visits column's, the three exposure
columns' (tools in full, tools shared, environment), then the drift's.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import LinearOperator, cg
from scipy.special import expit

from envsched_gym.curriculum.features import NodeFeatures
from envsched_gym.curriculum.state import StateReader
from envsched_gym.curriculum.units import KINDS

EXPOSED = (KINDS.index("tool"), KINDS.index("tool"), KINDS.index("env"))
"""Unit kind of each exposure column: tools credited in full, tools credited a share, the
environment. Signature categories have none: nearly every task of a family shares them, so their
exposure is a clock, which the drift column already is (with it the fit was unstable:
coefficients in the hundreds)."""
SHARED = 1
"""The exposure column whose tools are credited ``1 / tools`` of a group's signal (the others: all of it)."""

_POINTS, _WEIGHTS = np.polynomial.hermite_e.hermegauss(12)
_WEIGHTS = _WEIGHTS / _WEIGHTS.sum()


class DeclarationModel:
    """Online weighted ridge regression of group success logits on declaration features (see the module docstring).

    Args:
        features: The suite's node features (their units and numeric signature).
        half_life: Steps after which a group weighs half.
        penalty: Ridge penalty on every coefficient but the intercept.
        prior_residual: Logit variance assumed around the fit before there is evidence.
        exposure: Scale of the exposure columns (0: none, their coefficients stay 0; a larger
            scale is penalised less).
    """

    DROP = 1.0 / 64.0
    """Groups weighing less (six half-lives old) leave the fit."""
    CG_ITERATIONS = 12
    MAX_HALVINGS = 30
    """Most halvings of an IRLS step that raises the objective; past them the coefficients stay as they were."""
    ROWS = ("node", "prior_visits", "size", "successes", "born")
    STATE_KEYS = (*ROWS, "exposed", "exposure", "visits", "beta", "residual", "pending", "fit_step")

    def __init__(
        self, features: NodeFeatures, half_life: float, penalty: float = 1.0, prior_residual: float = 2.0, exposure: float = 1.0
    ) -> None:
        n = len(features)
        self.design = sp.hstack([features.units.matrix, sp.csr_matrix(features.numeric.astype(np.float64)), np.ones((n, 1))], format="csr")
        self.units = features.units
        self.half_life, self.penalty, self.prior_residual = half_life, penalty, prior_residual
        self.exposure_scale = exposure
        self._member = features.units.matrix.copy()
        self._member.data[:] = 1.0  # a group's signal reaches each tool and environment it exercises in full
        self._member = self._member @ sp.diags(np.isin(self.units.kind, EXPOSED).astype(float))
        self.exposure = np.zeros((len(self.units), 2))
        """Per unit, the summed signal of the groups that exercised it: credited in full (column 0), and shared over a group's tools (column 1)."""
        self._refresh_exposure()
        self.exposed = np.zeros((0, len(EXPOSED)))
        """Exposure columns of every kept group, as they were when it arrived."""
        self.visits = np.zeros(n, dtype=np.int64)
        self.node = np.zeros(0, dtype=np.int64)
        self.prior_visits = np.zeros(0, dtype=np.int64)
        self.size = np.zeros(0)
        self.successes = np.zeros(0)
        self.born = np.zeros(0, dtype=np.int64)
        self.beta = np.zeros(self.design.shape[1] + 2 + len(EXPOSED))
        self.residual = prior_residual
        self.evidence = 0.0
        self.unit_rollouts = np.zeros(len(self.units))
        self.unit_successes = np.zeros(len(self.units))
        self._pending: list[tuple[int, int, float, float, float]] = []
        self._kept = self._rows(self.node, self.prior_visits, self.exposed)
        self.fit_step = 0
        """The step of the last fit (its decay weighs the unit statistics)."""

    def observe(self, node: int, size: int, successes: float, step: int, signal: float) -> None:
        """Queue one finished group of ``node`` (``successes``: the sum of its rewards clipped to [0, 1]).

        ``signal`` (``var / 0.25`` of its rewards, at most 1) joins its units' exposure at the next
        :meth:`fit`, after the queued groups' exposure columns are read: the groups of one batch,
        rolled by one policy, see the same exposure.
        """
        self._pending.append((node, int(self.visits[node]), float(size), float(successes), float(signal)))
        self.visits[node] += 1

    @property
    def stale(self) -> bool:
        """Whether groups arrived since the last :meth:`fit`."""
        return bool(self._pending)

    def fit(self, step: int) -> None:
        """Add the queued groups, drop those weighing under ``DROP``, refit the coefficients and unit statistics."""
        if self._pending:
            node, prior, size, successes, signal = (np.array(c) for c in zip(*self._pending, strict=True))
            self._pending.clear()
            node, prior = node.astype(np.int64), prior.astype(np.int64)
            exposed = self.exposure_columns(node)  # the exposure before these groups' own signal: it changes only here
            self.node, self.prior_visits = np.r_[self.node, node], np.r_[self.prior_visits, prior]
            self.size, self.successes = np.r_[self.size, size], np.r_[self.successes, successes]
            self.born = np.r_[self.born, np.full(len(node), step, dtype=np.int64)]
            self.exposed = np.r_[self.exposed, exposed]
            self._kept = sp.vstack([self._kept, self._rows(node, prior, exposed)], format="csr")
            self.exposure[:, 0] += self._member[node].T @ signal
            self.exposure[:, 1] += self.units.matrix[node].T @ signal
            self._refresh_exposure()
        self.fit_step = step
        decay = 0.5 ** ((step - self.born) / self.half_life)
        alive = decay >= self.DROP
        if not alive.all():
            for name in (*self.ROWS, "exposed"):
                setattr(self, name, getattr(self, name)[alive])
            self._kept, decay = self._kept[alive], decay[alive]
        self._solve(decay)

    def _solve(self, decay: np.ndarray) -> None:
        """One warm-started IRLS step (matrix-free conjugate gradients on the weighted normal equations); then the spread and unit statistics."""
        rows = self._kept
        if not len(self.node):
            self.residual = self.prior_residual
            self._unit_statistics(decay)
            return
        age = (self.born - self.fit_step) / self.half_life

        def product(v: np.ndarray) -> np.ndarray:
            return rows @ v[:-1] + age * v[-1]

        def transposed(u: np.ndarray) -> np.ndarray:
            return np.r_[rows.T @ u, age @ u]

        penalty = np.full(len(self.beta), self.penalty)
        penalty[self.design.shape[1] - 1] = 1e-4  # the intercept
        rate = self.successes / self.size
        logit = product(self.beta)
        p = np.clip(expit(logit), 1e-4, 1 - 1e-4)
        weight = decay * self.size * p * (1.0 - p)
        working = logit + (rate - p) / (p * (1.0 - p))
        normal = LinearOperator((len(penalty),) * 2, matvec=lambda v: transposed(weight * product(v)) + penalty * v, dtype=np.float64)
        proposal, _ = cg(normal, transposed(weight * working), x0=self.beta, rtol=1e-5, maxiter=self.CG_ITERATIONS)
        self.beta, logit = self._halve_until_better(self.beta, logit, proposal, product, decay, penalty)
        p = expit(logit)
        spread = p * (1.0 - p)
        excess = decay @ ((self.successes - self.size * p) ** 2 - self.size * spread)
        scale = decay @ (self.size * (self.size - 1.0) * spread**2)
        groups = float(decay.sum())
        self.residual = (groups * min(max(excess / max(scale, 1e-9), 0.05), 6.0) + self.prior_residual) / (groups + 1.0)
        self._unit_statistics(decay)

    def _objective(self, beta: np.ndarray, logit: np.ndarray, decay: np.ndarray, penalty: np.ndarray) -> float:
        """The penalised negative log-likelihood the fit minimises (decayed binomial groups, ridge)."""
        failures = self.size - self.successes
        return float(decay @ (self.successes * np.logaddexp(0.0, -logit) + failures * np.logaddexp(0.0, logit)) + 0.5 * penalty @ beta**2)

    def _halve_until_better(
        self,
        beta: np.ndarray,
        logit: np.ndarray,
        proposal: np.ndarray,
        product: Callable[[np.ndarray], np.ndarray],
        decay: np.ndarray,
        penalty: np.ndarray,
    ) -> tuple[np.ndarray, np.ndarray]:
        """The IRLS proposal, or the largest ``2^-k`` step towards it that does not raise the objective.

        A plain IRLS step overshoots where the groups separate the data (every early group of a
        batch failed, so the barely penalised intercept heads for minus infinity): each step then
        overshoots further the other way, and with a fit after every group or every small batch
        the coefficients swung between -8000 and +8000. Halving the step until the penalised
        likelihood does not get worse (as R's ``glm`` does) makes every fit a descent step.
        Returns the coefficients and their logits.
        """
        before = self._objective(beta, logit, decay, penalty)
        candidate, step = proposal, proposal - beta
        for _ in range(self.MAX_HALVINGS):
            candidate_logit = product(candidate)
            if self._objective(candidate, candidate_logit, decay, penalty) <= before + 1e-9 * abs(before):
                return candidate, candidate_logit
            step = step / 2.0
            candidate = beta + step
        return beta, logit

    def _unit_statistics(self, decay: np.ndarray) -> None:
        """Decayed rollouts and successes of every unit over the kept groups, and the evidence (decayed group count)."""
        self.evidence = float(decay.sum())
        units = len(self.units)
        self.unit_rollouts = (self._kept.T @ (decay * self.size))[:units]
        self.unit_successes = (self._kept.T @ (decay * self.successes))[:units]

    def exposure_columns(self, nodes: np.ndarray) -> np.ndarray:
        """``(len(nodes), 3)``: each node's exposure columns (see the module docstring), with the signal applied so far."""
        return np.asarray(self.units.matrix[nodes] @ self._exposure_by_kind)

    def exposure_effect(self) -> np.ndarray:
        """The fitted logit change per unit of signal: through a tool credited in full, a tool credited a share, the environment."""
        return self.beta[-1 - len(EXPOSED) : -1]

    def _refresh_exposure(self) -> None:
        """Lay the units' exposure out by column (``(units, 3)``, scaled), as :meth:`exposure_columns` reads it."""
        self._exposure_by_kind = np.zeros((len(self.units), len(EXPOSED)))
        for column, kind in enumerate(EXPOSED):
            credit = self.exposure[:, 1 if column == SHARED else 0]
            self._exposure_by_kind[:, column] = np.where(self.units.kind == kind, credit * self.exposure_scale, 0.0)

    def _rows(self, nodes: np.ndarray, prior_visits: np.ndarray, exposed: np.ndarray) -> sp.csr_matrix:
        return sp.hstack([self.design[nodes], np.log1p(prior_visits)[:, None], exposed], format="csr")

    def predict(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(E[p], E[p (1 - p)])`` of ``nodes`` under the current fit (the prior 0.5 logit spread before any group)."""
        logit = self._rows(nodes, self.visits[nodes], self.exposure_columns(nodes)) @ self.beta[:-1]  # age 0: the current policy
        p = expit(logit[:, None] + np.sqrt(self.residual) * _POINTS[None, :])
        return p @ _WEIGHTS, (p * (1.0 - p)) @ _WEIGHTS

    # ------------------------------------------------------------------- state
    def state_dict(self) -> dict[str, Any]:
        """The kept groups, the groups queued since the last fit, per-node visit counts,
        coefficients and residual (JSON-able). Saving does not fit: the queued groups are saved as
        they are, so a restored model fits at the same step the uninterrupted one does."""
        state: dict[str, Any] = {name: getattr(self, name).tolist() for name in (*self.ROWS, "exposed", "exposure", "visits", "beta")}
        state["residual"] = self.residual
        state["pending"] = [list(p) for p in self._pending]
        state["fit_step"] = self.fit_step
        return state

    def read_state(self, reader: StateReader) -> dict[str, Any]:
        """The checked values of a saved state: group arrays of one length, nodes inside the pool."""
        values: dict[str, Any] = {
            name: reader.array(name, (-1,), integer=name != "size" and name != "successes", minimum=0) for name in self.ROWS
        }
        lengths = [len(v) for v in values.values()]
        common = max(set(lengths), key=lengths.count)
        for name, length in zip(self.ROWS, lengths, strict=True):
            if length != common:
                reader.fail(name, f"has length {length}, expected {common} like the other group arrays {list(self.ROWS)}")
        if len(values["node"]) and values["node"].max() >= len(self.visits):
            reader.fail("node", f"holds node {values['node'].max()}, outside the {len(self.visits)} nodes")
        values["exposed"] = reader.array("exposed", (common, len(EXPOSED)), minimum=0) if common else np.zeros((0, len(EXPOSED)))
        values["exposure"] = reader.array("exposure", self.exposure.shape, minimum=0)
        values["visits"] = reader.array("visits", self.visits.shape, integer=True, minimum=0)
        values["beta"] = reader.array("beta", self.beta.shape)
        values["residual"] = reader.number("residual", minimum=0.0)
        width = 5  # node, prior visits, size, successes, signal
        pending = reader.array("pending", (-1, width), minimum=0) if reader.state.get("pending") else np.zeros((0, width))
        if len(pending) and pending[:, 0].max() >= len(self.visits):
            reader.fail("pending", f"holds node {int(pending[:, 0].max())}, outside the {len(self.visits)} nodes")
        values["pending"] = pending
        values["fit_step"] = reader.integer("fit_step", minimum=0)
        return values

    def apply_state(self, values: dict[str, Any]) -> None:
        """Assign the checked values and recompute the derived statistics as the last fit left them."""
        values = dict(values)
        pending = values.pop("pending")
        for name, value in values.items():
            setattr(self, name, value)
        self._pending = [(int(n), int(v), float(size), float(ok), float(signal)) for n, v, size, ok, signal in pending]
        self._kept = self._rows(self.node, self.prior_visits, self.exposed)
        self._refresh_exposure()
        self._unit_statistics(0.5 ** ((self.fit_step - self.born) / self.half_life))  # as the last fit left them
