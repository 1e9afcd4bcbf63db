"""Where benchmark data is read from.

Benchmark files are never shipped with this package: users get them from the upstream
projects (see the README). The root directory is, in order: the ``data_dir`` argument,
the ``ENVSCHED_BENCHMARKS`` environment variable, or ``../shared/benchmarks`` next to a
source checkout. Its layout is ``bfcl/``, ``tau2/`` and ``acebench/`` as upstream ships them.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "ENVSCHED_BENCHMARKS"
_CHECKOUT_DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"


class DataNotFoundError(FileNotFoundError):
    """Benchmark data is missing; the message says where it was looked for and how to get it."""


def benchmark_root(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The benchmark data root (see the module docstring for the search order)."""
    for candidate in (data_dir, os.environ.get(ENV_VAR), _CHECKOUT_DEFAULT):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    raise DataNotFoundError(
        f"benchmark data not found (looked at the data_dir argument, ${ENV_VAR}, and {_CHECKOUT_DEFAULT}). "
        f"Download the benchmarks as the README's 'Benchmark data' section says and set {ENV_VAR}=/path/to/benchmarks."
    )


def benchmark_path(*parts: str, data_dir: str | os.PathLike[str] | None = None, hint: str = "") -> Path:
    """A file or folder under the data root; a :class:`DataNotFoundError` naming it if absent."""
    path = benchmark_root(data_dir).joinpath(*parts)
    if not path.exists():
        raise DataNotFoundError(f"{path} does not exist. {hint or 'Check the benchmark data layout described in the README.'}")
    return path
