"""Benchmark adapters (installed as ``envsched_gym.adapters``): data to declarations, tasks, worlds and verifiers."""
