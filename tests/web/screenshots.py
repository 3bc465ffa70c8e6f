"""Writes docs/web/*.png: a screenshot of each view of the web view, taken in Debian's chromium.

    python -m tests.web.screenshots [COUNT]     # COUNT sample memories, 250 by default

Starts private services (a throwaway Postgres and Temporal dev server), retains the sample into
scope demo/eric, compiles it with the scripted planner, serves the API with its web view on a
loopback port and takes the same tour the browser test takes (tests/web/browser.py), keeping its
screenshots in docs/web/.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from sqlalchemy import text

from evals.run import private_services
from servers.http_api import create_app
from tests.compile.helpers import compile_scope, retain_sample, running_worker, test_settings
from tests.servers.conftest import serving
from tests.servers.wiki import token_for
from tests.web.browser import PAGE_TO_VISIT, chromium, tour_views

DOCS = Path(__file__).resolve().parents[2] / "docs" / "web"


async def take(count: int, out: Path) -> dict[str, Path]:
    async with private_services("wiki-shots-") as (client, engine):
        settings = test_settings()
        await retain_sample(engine, "demo", "eric", count)
        async with running_worker(client, engine, settings):
            await compile_scope(client, settings, "demo", "eric")
        token = await token_for(engine, "demo", "eric", rights="read")
        async with engine.connect() as conn:
            title = (await conn.execute(text(PAGE_TO_VISIT), {"t": "demo", "o": "eric"})).scalar_one()

        async def no_temporal():
            raise RuntimeError("the web view never connects to Temporal")

        async with serving(create_app(engine, no_temporal, settings)) as base, chromium() as browser:
            tour = await tour_views(browser, base, token, title, out)
    if tour.console_errors or tour.failed_requests:
        raise RuntimeError(f"the tour saw errors: {tour.console_errors + tour.failed_requests}")
    return tour.shots


if __name__ == "__main__":
    shots = asyncio.run(take(int(sys.argv[1]) if len(sys.argv) > 1 else 250, DOCS))
    for view, path in shots.items():
        print(f"{view}: {path}")
