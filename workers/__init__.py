"""Playing chunks of matches: the chunk runner shared by local mode and Celery workers."""
