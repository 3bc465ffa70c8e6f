"""`compile.worker_capacity`: what the worker that answers runs at once, so a compile keeps no more
section writes in flight than it can start (app/capacity.py sizes it; the workflow asks once a run,
on the queue its section writes go to)."""

from __future__ import annotations

from temporalio import activity

from activities.common import compile_step
from messages.compile import CapacityInput, WorkerCapacityReport


class Capacity:
    def __init__(self, report: WorkerCapacityReport) -> None:
        self._report = report

    @activity.defn(name="compile.worker_capacity")
    @compile_step
    async def report(self, request: CapacityInput) -> WorkerCapacityReport:
        return self._report
