"""What a Celery worker's log (``-l info``) says about the chunk tasks it holds.

A worker logs ``Task playtester.play_chunk[<id>] received`` when a chunk reaches it, and the
same task ``succeeded``, ``retry`` or ``raised`` when it ends; between the two, ``batch <id>
chunk <start>-<stop> taken, attempt <n>`` once it holds the chunk's lease
(``workers.delivery``). With one task at a time (the solo pool, or one child), a task received
and not ended is the chunk the worker is playing or storing now: what a test waits on before it
kills or cuts a worker in the middle of one.
"""

from __future__ import annotations

import re

TASK_LINE = re.compile(r"Task playtester\.play_chunk\[([0-9a-f-]+)\] (\w+)")


def held_tasks(log: str) -> list[str]:
    """The chunk tasks the log shows received and not ended yet, in the order received."""
    held: dict[str, None] = {}
    for task, event in TASK_LINE.findall(log):
        if event == "received":
            held[task] = None
        else:
            held.pop(task, None)
    return list(held)


def held_task(log: str) -> str | None:
    """The chunk task received last and not ended yet, if any."""
    held = held_tasks(log)
    return held[-1] if held else None


def task_ended(log: str, task: str) -> bool:
    """True once the log shows the task ended: done, skipped, retried or failed."""
    return any(t == task and event != "received" for t, event in TASK_LINE.findall(log))


def taken_chunks(log: str, batch_id: str) -> list[int]:
    """Starts of the chunks of ``batch_id`` the log shows taken (their lease held), in order."""
    pattern = re.compile(rf"batch {re.escape(batch_id)} chunk (\d+)-\d+ taken, attempt \d+")
    return [int(start) for start in pattern.findall(log)]
