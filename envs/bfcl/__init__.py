"""Glue around the bfcl-eval backends."""
