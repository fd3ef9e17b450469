"""Where the tests find the repository and their recorded data, wherever a test module sits."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"
