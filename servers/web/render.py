"""Markdown to HTML for the web view, through the markup sanitiser, and the graph's drawing.

A claim or a section body is markdown the compiler wrote from untrusted memory text. It is first
made safe as the agents read it (`domain.markup.safe_markdown`: no raw HTML, links only to wiki
routes, no web address), then rendered by markdown-it-py in CommonMark mode with raw HTML off, then
cleaned by nh3 (the Ammonia sanitiser) to an allow-list of inline and block tags where the only
attribute is a link's `href`, kept only for a wiki route (`/wiki/<type>/<slug>`, which the web view
serves in the signed-in scope: no link can leave the scope or the site).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup

from domain.markup import safe_markdown

_MARKDOWN = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
_TAGS = {"p", "a", "strong", "em", "code", "pre", "ul", "ol", "li", "blockquote", "br", "hr", "h3", "h4", "h5",
         "h6", "del"}
_WIKI_ROUTE = re.compile(r"^/wiki/(?:entity|topic|decision)/[^\s/?#]+$")


def _only_wiki_routes(tag: str, attribute: str, value: str) -> str | None:
    if tag == "a" and attribute == "href" and _WIKI_ROUTE.match(value):
        return value
    return None


# A rendering depends on the text alone, so it is kept by text: a claim or body rewritten is new text
# (and rendered anew), one unchanged since the last view costs a dictionary lookup. Bounded.
RENDERED_KEPT = 8192


@lru_cache(maxsize=RENDERED_KEPT)
def markdown_html(markdown: str | None, *, inline: bool = False) -> Markup:
    """Sanitised HTML of a body or a claim; `inline` drops the paragraph around a one-line claim."""
    source = safe_markdown(markdown)
    html = _MARKDOWN.renderInline(source) if inline else _MARKDOWN.render(source)
    cleaned = nh3.clean(html, tags=_TAGS, attributes={"a": {"href"}}, attribute_filter=_only_wiki_routes,
                        url_schemes=set(), link_rel="nofollow", strip_comments=True)
    return Markup(cleaned)  # noqa: S704 - sanitised just above


# ------------------------------------------------------------------------------------------ the graph

TYPE_ORDER = ("entity", "topic", "decision")
GRAPH_SIZE = 1000
_CENTRE = GRAPH_SIZE / 2
_OUTER = GRAPH_SIZE / 2 - 30
_GOLDEN = (math.sqrt(5) - 1) / 2
LABELLED = 30


@dataclass(frozen=True)
class Node:
    id: str
    type: str
    href: str
    title: str
    x: float
    y: float
    r: float
    labelled: bool


@dataclass(frozen=True)
class Edge:
    x1: float
    y1: float
    x2: float
    y2: float
    kind: str


def layout(pages: list[tuple[str, str, str, str, int]], links: list[tuple[str, str, str]]) -> tuple[list[Node], list[Edge]]:
    """Positions for (id, type, slug, title, hubness) pages, given best connected first: each type
    gets a sector of the disc in proportion to its pages, and within it pages sit on a sunflower
    spiral (radius growing with the square root of their rank), so hubs are near the centre and
    the rest spread evenly. The same pages always get the same drawing."""
    by_type: dict[str, list[tuple[int, tuple[str, str, str, str, int]]]] = {}
    for rank, page in enumerate(pages):
        by_type.setdefault(page[1], []).append((rank, page))
    top = max((page[4] for page in pages), default=0) or 1
    nodes: dict[str, Node] = {}
    start = 0.0
    for page_type in sorted(by_type, key=lambda t: (TYPE_ORDER.index(t) if t in TYPE_ORDER else 9, t)):
        members = by_type[page_type]
        sweep = 2 * math.pi * len(members) / len(pages)
        spread = _OUTER / math.sqrt(len(members))
        for index, (rank, (page_id, kind, slug, title, hubness)) in enumerate(members):
            fraction = 0.5 if len(members) == 1 else 0.08 + 0.84 * ((index * _GOLDEN) % 1.0)
            angle = start + sweep * fraction
            radius = spread * math.sqrt(index + 0.5)
            nodes[page_id] = Node(id=page_id, type=kind, href=f"/wiki/{kind}/{slug}", title=title,
                                  x=round(_CENTRE + radius * math.cos(angle), 1),
                                  y=round(_CENTRE + radius * math.sin(angle), 1),
                                  r=round(5 + 11 * math.sqrt(max(hubness, 0) / top), 1), labelled=rank < LABELLED)
        start += sweep
    edges = [Edge(nodes[a].x, nodes[a].y, nodes[b].x, nodes[b].y, kind)
             for a, b, kind in links if a in nodes and b in nodes]
    return list(nodes.values()), edges
