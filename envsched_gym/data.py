"""Where benchmark data is read from.

Benchmark files are never shipped with this package: users get them from the upstream
projects (see the README). The root directory is the first of these that is given: the
``data_dir`` argument, the ``ENVSCHED_BENCHMARKS`` environment variable, or
``../shared/benchmarks`` next to a source checkout. A ``data_dir`` or ``ENVSCHED_BENCHMARKS``
that does not exist is an error, never a reason to look elsewhere. The root's layout is
``bfcl/``, ``tau2/`` and ``acebench/`` as upstream ships them.
"""

from __future__ import annotations

import os
from pathlib import Path

from envsched_gym.data_files import DataError, DataNotFoundError

__all__ = ["ENV_VAR", "DataError", "DataNotFoundError", "benchmark_path", "benchmark_root"]

ENV_VAR = "ENVSCHED_BENCHMARKS"
_CHECKOUT_DEFAULT = Path(__file__).resolve().parents[2] / "shared" / "benchmarks"
GET_DATA = "Download the benchmarks as the README's 'Benchmark data' section says"


def benchmark_root(data_dir: str | os.PathLike[str] | None = None) -> Path:
    """The benchmark data root (see the module docstring for the search order).

    Raises:
        DataNotFoundError: The chosen root is not a folder; the message names where it came from.
    """
    if data_dir is not None:
        return _existing(
            Path(data_dir), f"data_dir={str(data_dir)!r}", "pass the benchmark data root (the folder holding bfcl/, tau2/, acebench/)"
        )
    if os.environ.get(ENV_VAR):
        return _existing(Path(os.environ[ENV_VAR]), f"${ENV_VAR}={os.environ[ENV_VAR]!r}",
                         f"set {ENV_VAR} to the benchmark data root, or unset it to use {_CHECKOUT_DEFAULT}")  # fmt: skip
    return _existing(_CHECKOUT_DEFAULT, f"the checkout default {str(_CHECKOUT_DEFAULT)!r}",
                     f"{GET_DATA} and set {ENV_VAR}=/path/to/benchmarks (no data_dir argument or ${ENV_VAR} was given)")  # fmt: skip


def _existing(path: Path, origin: str, fix: str) -> Path:
    if not path.is_dir():
        raise DataNotFoundError(
            f"benchmark data root {origin} is not a folder ({'it does not exist' if not path.exists() else 'it is a file'}). Fix: {fix}."
        )
    return path


def benchmark_path(*parts: str, data_dir: str | os.PathLike[str] | None = None, hint: str = "") -> Path:
    """A file or folder under the data root; a :class:`DataNotFoundError` naming it if absent."""
    path = benchmark_root(data_dir).joinpath(*parts)
    if not path.exists():
        raise DataNotFoundError(f"{path} does not exist. Fix: {hint or 'check the benchmark data layout described in the README.'}")
    return path
