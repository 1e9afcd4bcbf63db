"""The training scripts' tests import them from the repository root, as a user runs them."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for path in (ROOT, ROOT / "tests" / "rl"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))
