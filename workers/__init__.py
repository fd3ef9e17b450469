"""Playing chunks of matches: the chunk runner shared by local mode and Celery workers.

``celery -A workers worker`` finds the Celery application as ``workers.app``. It is imported on
first access only, so local mode (``playtester run``) never pays Celery's import cost.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name in {"app", "celery"}:
        from workers.celery_app import app

        return app
    raise AttributeError(f"module 'workers' has no attribute {name!r}")
