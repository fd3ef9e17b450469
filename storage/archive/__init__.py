"""Batches as files that outlive the database: ``export_batch`` writes a stored batch (its
definition and state, chunk rows, matches and seat results) to a folder of Parquet tables and a
JSON manifest; ``import_batch`` merges such a folder into a database, idempotently.

- ``layout``: the folder's files, the format version, the Parquet schemas and writer options;
- ``dump``: ``export_batch``;
- ``load``: ``read_archive``, ``read_batch`` (the manifest's batch row alone), ``describe``
  and ``import_batch``;
- ``zipped``: a folder as one zip (``pack``) and a zip from elsewhere checked and unpacked
  (``unpack``), for HTTP.
"""

from storage.archive.dump import ExportSummary, export_batch
from storage.archive.layout import FORMAT, MANIFEST, VERSION, ArchiveError
from storage.archive.load import (
    Archive,
    ImportSummary,
    describe,
    import_batch,
    read_archive,
    read_batch,
)

__all__ = [
    "FORMAT",
    "MANIFEST",
    "VERSION",
    "Archive",
    "ArchiveError",
    "ExportSummary",
    "ImportSummary",
    "describe",
    "export_batch",
    "import_batch",
    "read_archive",
    "read_batch",
]
