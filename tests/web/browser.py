"""A real browser for the web view: Debian's chromium driven through playwright's protocol client.

No browser is downloaded: playwright launches the system's /usr/bin/chromium (`executable_path`),
and when it is missing the test setup installs Debian's package (`apt-get install chromium`, as CI
runs as root). `tour` signs in and opens every view the way a person would (search, follow a link,
open a citation, click a node of the graph), collecting console errors and failed requests, and
takes a screenshot of each view.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from playwright.async_api import Browser, ConsoleMessage, Page, Request, async_playwright

CHROMIUM = os.environ.get("WIKI_TEST_CHROMIUM", "/usr/bin/chromium")

# A page with claims citing memories and a link in or out, the best connected first.
PAGE_TO_VISIT = """
    SELECT p.title FROM wiki_pages p
    WHERE p.tenant_id = :t AND p.owner_id = :o AND p.status = 'active'
      AND EXISTS (SELECT 1 FROM wiki_page_sections s JOIN wiki_section_claims c ON c.section_id = s.id
                  JOIN wiki_claim_sources cs ON cs.claim_id = c.id WHERE s.page_id = p.id)
      AND EXISTS (SELECT 1 FROM wiki_page_links l JOIN wiki_pages f ON f.id = l.from_page_id
                  WHERE l.to_page_id = p.id AND f.status = 'active')
    ORDER BY p.hubness_score DESC, p.title LIMIT 1
"""


def ensure_chromium() -> str:
    """The system chromium's path, installed from Debian's packages when it is missing."""
    if shutil.which(CHROMIUM):
        return CHROMIUM
    if shutil.which("apt-get") is None:
        raise RuntimeError(f"{CHROMIUM} is missing and there is no apt-get to install Debian's chromium")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["apt-get", "update", "-qq"], check=True, env=env)
    subprocess.run(["apt-get", "install", "-y", "-qq", "chromium"], check=True, env=env)
    return CHROMIUM


@asynccontextmanager
async def chromium() -> AsyncIterator[Browser]:
    path = ensure_chromium()
    async with async_playwright() as driver:
        # --no-sandbox: CI runs as root, where chromium's sandbox cannot start.
        browser = await driver.chromium.launch(executable_path=path, args=["--no-sandbox"])
        try:
            yield browser
        finally:
            await browser.close()


@dataclass
class Tour:
    """What a tour of the views saw."""

    visited: dict[str, str] = field(default_factory=dict)  # view -> URL
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    shots: dict[str, Path] = field(default_factory=dict)
    citation_text: str = ""
    search_hits: int = 0


def _watch(page: Page, tour: Tour) -> None:
    def console(message: ConsoleMessage) -> None:
        if message.type == "error":
            tour.console_errors.append(f"{page.url}: {message.text}")

    def failed(request: Request) -> None:
        tour.failed_requests.append(f"{request.url}: {request.failure}")

    page.on("console", console)
    page.on("pageerror", lambda error: tour.console_errors.append(f"{page.url}: {error}"))
    page.on("requestfailed", failed)


async def _shot(page: Page, tour: Tour, view: str, shots: Path) -> None:
    tour.visited[view] = page.url
    path = shots / f"{view}.png"
    await page.screenshot(path=str(path), full_page=False)
    tour.shots[view] = path


async def tour_views(browser: Browser, base: str, token: str, title: str, shots: Path) -> Tour:
    """Sign in, then open every view by clicking, as a person would: search for `title` (a page with
    claims and links) and open it from the hits."""
    shots.mkdir(parents=True, exist_ok=True)
    tour = Tour()
    context = await browser.new_context(viewport={"width": 1280, "height": 860}, base_url=base)
    page = await context.new_page()
    _watch(page, tour)
    await page.goto("/")
    await page.wait_for_url("**/sign-in")
    await _shot(page, tour, "sign-in", shots)
    await page.fill("input[name=token]", token)
    await page.click("form.sign-in button[type=submit]")
    await page.wait_for_selector("h2:has-text('Recent changes')")
    await _shot(page, tour, "home", shots)

    await page.fill("header input[name=q]", title)
    await page.press("header input[name=q]", "Enter")
    await page.wait_for_selector("ol.hits")
    tour.search_hits = await page.locator("ol.hits > li").count()
    await _shot(page, tour, "search", shots)

    await page.locator("ol.hits a.page-link", has_text=title).first.click()
    await page.wait_for_selector("article.wiki-page")
    citation = page.locator("li.claim details.cite").first
    await citation.locator("summary").click()
    body = citation.locator(".cite-body")
    await body.wait_for(state="visible")
    tour.citation_text = await body.inner_text()
    await _shot(page, tour, "page", shots)

    await body.locator("a").click()
    await page.wait_for_selector("h2:has-text('Everything citing it')")
    await _shot(page, tour, "memory", shots)

    await page.locator("ul.blast-radius a.page-link").first.click()
    await page.wait_for_selector("article.wiki-page")
    linked = page.locator("aside.around a.page-link").first
    await linked.click()
    await page.wait_for_selector("article.wiki-page")
    tour.visited["followed-link"] = page.url

    await page.click("header nav a:has-text('Graph')")
    await page.wait_for_selector("svg.graph")
    await _shot(page, tour, "graph", shots)
    await page.locator("svg.graph a.node").first.click()
    await page.wait_for_selector("article.wiki-page")
    tour.visited["graph-node"] = page.url

    await page.click("header nav a:has-text('Compile runs')")
    await page.wait_for_selector("table.runs")
    await _shot(page, tour, "runs", shots)
    await context.close()
    return tour
