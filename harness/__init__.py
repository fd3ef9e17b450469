"""The service run for trials, apart from the product and from the tests that use it.

``harness.servers``: private PostgreSQL and Redis servers, the API and Celery workers as child
processes on this machine (the service tests and the benchmarks run on them).
``harness.cluster``: the layout of docs/across-machines.md on one machine, each host a network
namespace (the cluster tests, and ``scripts/cluster`` for a person to try it).
``harness.worker_log``: what a Celery worker's log says about the tasks it holds.
"""
