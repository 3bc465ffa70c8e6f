"""The scripted planner: deterministic plans, section bodies, merge judgements and aggregation plans
from the memories' metadata hints, with no model, so the whole product runs offline.

`planner.py` is the `Planner` behind the port; `leaf_plan.py` plans a batch and writes sections,
`subjects.py` gathers what the batch's memories are about, `matching.py` matches them to candidate
pages with the resolution ladder, `condense.py` rebuilds a section from every memory it cites, and
`aggregation.py` plans hubs and rollups.
"""
