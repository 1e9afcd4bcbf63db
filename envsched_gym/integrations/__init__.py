"""Adapters to other RL engines' environment interfaces (install the engine's extra first)."""
