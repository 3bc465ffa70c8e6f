"""The promotion rule: an unresolved mention becomes a page only after repeated, recent evidence.

At least three sightings, the latest within the last thirty days. The resolver enforces it on
every plan (a model's proposal alone is never enough), the scripted planner proposes only what it
allows, and the nightly lint offers only mentions that pass it.
"""

from __future__ import annotations

from datetime import datetime, timedelta

PROMOTION_MIN_SIGHTINGS = 3
PROMOTION_WINDOW_DAYS = 30
PROMOTION_WINDOW = timedelta(days=PROMOTION_WINDOW_DAYS)


def promotion_allowed(sightings: int, last_seen_at: datetime, now: datetime) -> bool:
    return sightings >= PROMOTION_MIN_SIGHTINGS and now - last_seen_at <= PROMOTION_WINDOW
