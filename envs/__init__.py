"""Concrete simulated worlds (installed as ``envsched_gym.envs``): ToolWorld, tau-bench, ACEBench."""
