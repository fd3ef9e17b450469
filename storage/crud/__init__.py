"""Reading and writing batches and their results, one module per job:

- ``ids``: ``NotFound`` and ``resolve_batch_id``, the prefix resolution the edges call;
- ``batches``: store a plan, read batches by full id (``find_batch`` for a typed id or
  prefix, raising ``NotFound``), list them, move their status;
- ``tally``: done, failed, rate and ETA from the chunk rows;
- ``chunks``: written and missing ranges, stop-rule count totals;
- ``writes``: ``write_chunk``, one chunk's rows in one idempotent transaction;
- ``deletion``: ``delete_batch``, a finished or cancelled batch and every row it owns.

Every function takes the engine first and keyword-only arguments after it where the meaning
would otherwise be unclear. The names below are the package's public face: callers write
``from storage import crud`` and ``crud.get_batch(...)``.
"""

from storage.chunking import chunk_ranges, split_aligned
from storage.crud.batches import (
    cancel_batch,
    clear_stopped_early,
    create_batch,
    find_batch,
    first_error,
    get_batch,
    list_batches,
    set_status,
)
from storage.crud.chunks import (
    StopTotals,
    chunk_exists,
    gaps,
    last_written_at,
    missing_chunks,
    range_written,
    stop_count_totals,
    written_ranges,
)
from storage.crud.deletion import BatchIsLive, delete_batch
from storage.crud.ids import MIN_PREFIX, NotFound, resolve_batch_id
from storage.crud.tally import Progress, measured_work, progress
from storage.crud.writes import match_rows, write_chunk
from storage.models import BATCH, CHUNK, MATCH, SEAT_RESULT, STOP_COLUMNS

__all__ = [
    "BATCH",
    "CHUNK",
    "MATCH",
    "MIN_PREFIX",
    "SEAT_RESULT",
    "STOP_COLUMNS",
    "BatchIsLive",
    "NotFound",
    "Progress",
    "StopTotals",
    "cancel_batch",
    "chunk_exists",
    "chunk_ranges",
    "clear_stopped_early",
    "create_batch",
    "delete_batch",
    "find_batch",
    "first_error",
    "gaps",
    "get_batch",
    "last_written_at",
    "list_batches",
    "match_rows",
    "measured_work",
    "missing_chunks",
    "progress",
    "range_written",
    "resolve_batch_id",
    "set_status",
    "split_aligned",
    "stop_count_totals",
    "write_chunk",
    "written_ranges",
]
