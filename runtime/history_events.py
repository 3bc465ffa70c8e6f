"""Reading workflow histories: local activities, which appear only as markers.

The compile workflow runs its database steps as local activities, so a history records them as
`MarkerRecorded` events (marker `core_local_activity`) carrying the activity type, the attempt and
the result, instead of the scheduled/started/completed events of a regular activity. Anything
that reads histories (tests, benchmarks, the fault suite) reads them through here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from temporalio.api.common.v1 import Payload
from temporalio.api.enums.v1 import EventType
from temporalio.api.history.v1 import HistoryEvent

LOCAL_ACTIVITY_MARKER = "core_local_activity"


@dataclass(frozen=True)
class LocalActivityRun:
    activity_type: str
    activity_id: str
    attempt: int
    # The result's payloads (empty when the activity failed).
    result: list[Payload] = field(default_factory=list)


def local_activity(event: HistoryEvent) -> LocalActivityRun | None:
    """The local activity a marker event records; None for any other event."""
    if event.event_type != EventType.EVENT_TYPE_MARKER_RECORDED:
        return None
    attributes = event.marker_recorded_event_attributes
    if attributes.marker_name != LOCAL_ACTIVITY_MARKER or "data" not in attributes.details:
        return None
    data = json.loads(attributes.details["data"].payloads[0].data)
    result = list(attributes.details["result"].payloads) if "result" in attributes.details else []
    return LocalActivityRun(activity_type=data["activity_type"], activity_id=str(data.get("activity_id", "")),
                            attempt=int(data.get("attempt") or 1), result=result)


def activity_type_names(events: list[HistoryEvent]) -> set[str]:
    """Every activity type a history ran, regular or local."""
    names = set()
    for event in events:
        if event.event_type == EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
            names.add(event.activity_task_scheduled_event_attributes.activity_type.name)
        elif (local := local_activity(event)) is not None:
            names.add(local.activity_type)
    return names
