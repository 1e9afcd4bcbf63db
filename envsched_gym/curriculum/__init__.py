"""EnvSched curriculum: the dual-relation graph, the variance predictor, the scheduler, baselines.

``make_scheduler(name, suite, seed)`` builds any curriculum behind the :class:`Scheduler`
interface, each following the suite's target mix of families (:class:`Mixture`);
:class:`EnvSchedCurriculum` wraps a suite as one gymnasium environment driven by a
scheduler.
"""

from envsched_gym.curriculum.base import BaseScheduler, Scheduler, group_variance
from envsched_gym.curriculum.baselines import DAPOScheduler, DUMPScheduler, MoPPSScheduler, PLRScheduler, RandomScheduler
from envsched_gym.curriculum.envsched import EnvSchedConfig, EnvSchedScheduler
from envsched_gym.curriculum.features import NodeFeatures, build_features, execution_signature
from envsched_gym.curriculum.graph import DualGraph
from envsched_gym.curriculum.mixture import Mixture, MixtureConfig
from envsched_gym.curriculum.predictor import PredictorConfig, VariancePredictor
from envsched_gym.curriculum.progress import LearningProgress
from envsched_gym.curriculum.registry import SCHEDULERS, make_scheduler, parse_options, parse_variant
from envsched_gym.curriculum.regression import DeclarationModel
from envsched_gym.curriculum.wrapper import EnvSchedCurriculum

__all__ = [
    "SCHEDULERS", "BaseScheduler", "DAPOScheduler", "DUMPScheduler", "DeclarationModel", "DualGraph", "EnvSchedConfig", "EnvSchedCurriculum",
    "EnvSchedScheduler", "LearningProgress", "Mixture", "MixtureConfig", "MoPPSScheduler", "NodeFeatures", "PLRScheduler", "PredictorConfig", "RandomScheduler", "Scheduler",
    "VariancePredictor", "build_features", "execution_signature", "group_variance", "make_scheduler", "parse_options", "parse_variant",
]  # fmt: skip
