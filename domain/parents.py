"""Deterministic parent (hub) candidates from memory metadata and page summaries.

No model call: a city shared by several memories, or a journal they belong to, suggests a topic
page ("Austin", "Summer in Paris 2026") that should gather them. The candidates feed the
deterministic linker and the aggregation planner; they are suggestions, never writes.

Record metadata is read where the memory store keeps it: the nested `place`/`journal` objects and
`tags` at the top of `metadata`, and the flat keys other memory sources write (`place_city`,
`city`, `place_address`, `place_types`, `journal_id`, `journal_title`, `idea_tags`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import regex
from pydantic import BaseModel, Field

from domain.aliases import slugify_title
from domain.closed_class import DEMONSTRATIVES, ENGLISH_ARTICLES, POSSESSIVE_DETERMINERS, PRONOUNS
from domain.kinds import STREET_SUFFIXES

DEFAULT_MIN_CLUSTER_SIZE = 2
JOURNAL_ID_TITLE_CHARS = 8

_US_STYLE_REGION = re.compile(r"[A-Z]{2,4}(?:\s|\Z)")
_DOTTED_REGION = re.compile(r"(?:[A-Z][a-z]{0,2}\.){1,4}")
_DOTTED_REGION_MAX_CHARS = 10
_LEADING_POSTCODE = re.compile(r"^[0-9][0-9A-Za-z-]*\s+")
_CSV_SEPARATORS = re.compile(r"[,;]")
# A capitalised word is an uppercase letter and at least one more letter, up to the next non-letter.
_PLACE_AFTER_PREPOSITION = regex.compile(
    r"\b(?:in|at|on|near|from|of)\s+(?P<place>\p{Lu}\p{L}+(?:\s+\p{Lu}\p{L}+)?)")
_GEO_SUFFIX = re.compile(r",\s+\S")

# Words that stand where a place would and are none ("in The …", "near My …"): closed-class words.
_NOT_A_PLACE = ENGLISH_ARTICLES | DEMONSTRATIVES | PRONOUNS | POSSESSIVE_DETERMINERS
_MIN_CITY_CHARS = 3
_MAX_CITY_WORDS = 4

# Narrowest first: Google Places tags coffee shops "cafe" and "food", and they belong under Coffee.
_SECTIONS_BY_PLACE_TYPE: tuple[tuple[frozenset[str], str, str], ...] = (
    (frozenset({"cafe", "coffee"}), "coffee", "Coffee"),
    (frozenset({"restaurant", "food", "meal_takeaway"}), "restaurants", "Restaurants"),
    (frozenset({"park", "natural_feature"}), "parks-and-outdoors", "Parks & Outdoors"),
    (frozenset({"lodging", "hotel"}), "lodging", "Lodging"),
)
_DEFAULT_SECTION = ("overview", "Overview")
_JOURNAL_SECTION = ("entries", "Entries")


class ParentCandidate(BaseModel):
    """A suggested hub page and the evidence for it."""

    reason: Literal["city", "journal"]
    parent_title: str
    parent_slug: str
    parent_type: Literal["topic"] = "topic"
    suggested_section_slug: str
    suggested_section_heading: str
    # Memory ids for `source_kind="record"`, page ids for `source_kind="summary"`.
    source_record_ids: list[str] = Field(default_factory=list)
    observed_tags: list[str] = Field(default_factory=list)
    supporting_count: int
    source_kind: Literal["record", "summary"] = "record"


class _Record(Protocol):
    @property
    def id(self) -> Any: ...
    @property
    def metadata(self) -> Mapping[str, Any] | None: ...


class _SummarisedPage(Protocol):
    id: Any
    title: str
    summary: str | None


@dataclass
class _Cluster:
    """Evidence gathered for one candidate key, in first-seen order (dicts as ordered sets)."""

    reason: Literal["city", "journal"]
    title: str
    section: tuple[str, str]
    source_ids: dict[str, None] = field(default_factory=dict)
    tags: dict[str, None] = field(default_factory=dict)

    def add(self, source_id: str, tags: Iterable[str]) -> None:
        self.source_ids.setdefault(source_id)
        for tag in tags:
            self.tags.setdefault(tag)

    def to_candidate(self, source_kind: Literal["record", "summary"]) -> ParentCandidate:
        return ParentCandidate(
            reason=self.reason,
            parent_title=self.title,
            parent_slug=slugify_title(self.title),
            suggested_section_slug=self.section[0],
            suggested_section_heading=self.section[1],
            source_record_ids=list(self.source_ids),
            observed_tags=list(self.tags),
            supporting_count=len(self.source_ids),
            source_kind=source_kind,
        )


# --- metadata readers -------------------------------------------------------------------------


def _read_string(meta: Mapping[str, Any], *path: str) -> str | None:
    current: Any = meta
    for key in path:
        if not isinstance(current, Mapping) or key not in current:
            return None
        current = current[key]
    if isinstance(current, str) and current.strip():
        return current.strip()
    return None


def _split_csv(raw: str) -> list[str]:
    return [part.strip() for part in _CSV_SEPARATORS.split(raw) if part.strip()]


def _string_list(raw: Any) -> list[str] | None:
    """A list of strings from an array or a `,`/`;` separated string; None when neither."""
    if isinstance(raw, list | tuple):
        return [item for item in raw if isinstance(item, str)]
    if isinstance(raw, str):
        return _split_csv(raw)
    return None


def _read_place_types(meta: Mapping[str, Any]) -> list[str]:
    flat = _string_list(meta.get("place_types"))
    if flat is not None:
        return flat
    place = meta.get("place")
    nested = _string_list(place.get("types")) if isinstance(place, Mapping) else None
    return nested or []


def _read_tags(meta: Mapping[str, Any]) -> list[str]:
    return (_string_list(meta.get("tags")) or []) + (_string_list(meta.get("idea_tags")) or [])


def _read_city(meta: Mapping[str, Any]) -> str | None:
    explicit = (
        _read_string(meta, "place", "city") or _read_string(meta, "place_city") or _read_string(meta, "city")
    )
    if explicit:
        return explicit
    address = _read_string(meta, "place", "address") or _read_string(meta, "place_address")
    return extract_city_from_address(address)


def _title_case(raw: str) -> str:
    return " ".join(word[:1].upper() + word[1:] for word in raw.split())


# --- city extraction ----------------------------------------------------------------------------


def _strip_leading_postcode(part: str) -> str:
    return _LEADING_POSTCODE.sub("", part, count=1).strip()


def _is_region_code(part: str) -> bool:
    if _US_STYLE_REGION.match(part):
        return True
    return len(part) <= _DOTTED_REGION_MAX_CHARS and _DOTTED_REGION.fullmatch(part) is not None


def extract_city_from_address(address: str | None) -> str | None:
    """The city of a postal address, or None.

    Comma-separated parts, trimmed, empties dropped; fewer than two -> None. Walking from the
    second-to-last part down to the second, the first part that looks like a region ("TX 78701",
    "ON M6J 1G1", "CDMX", "UK", or dotted "Gto.", "Q.R.", "B.C.") means the part before it is the
    city. Otherwise the second-to-last part is. The country (last part) is never taken for a region.
    A leading postcode is stripped from the city: "75006 Paris" -> "Paris".
    """
    if not isinstance(address, str):
        return None
    parts = [part.strip() for part in address.split(",") if part.strip()]
    if len(parts) < 2:
        return None
    for index in range(len(parts) - 2, 0, -1):
        if _is_region_code(parts[index]):
            return _strip_leading_postcode(parts[index - 1]) or None
    return _strip_leading_postcode(parts[-2]) or None


def extract_city_from_summary(summary: str) -> str | None:
    """The place named after the first preposition in a summary, or None.

    A lowercase preposition, then one or two capitalised words of at least two letters each (accents
    included: "Bogotá", "Montréal"); a trailing ", TX" is not part of it. Only the first match
    counts, and it is discarded when it is a pronoun or article ("The", "My", ...).
    """
    match = _PLACE_AFTER_PREPOSITION.search(summary)
    if match is None:
        return None
    token = match.group("place")
    return None if token.lower() in _NOT_A_PLACE else token


def is_likely_city_token(token: str) -> bool:
    """Precision filter for summary-derived cities.

    At least 3 characters, 1–4 words, and the last word (lowercased, one trailing "." removed) is
    not a street suffix: "St", "Congress Ave" and a nine-word sentence fragment are not cities.
    """
    trimmed = token.strip()
    if len(trimmed) < _MIN_CITY_CHARS:
        return False
    words = trimmed.split()
    if not 1 <= len(words) <= _MAX_CITY_WORDS:
        return False
    last = words[-1].lower()
    return last.removesuffix(".") not in STREET_SUFFIXES


def is_geo_qualified_extension(candidate: str, target: str) -> bool:
    """Whether `target` is `candidate` plus a region suffix: "Austin" -> "Austin, Texas".

    The gate on fuzzy parent-title matches: the target must start with the candidate as a whole
    word, case-insensitively, and contain ", <something>". The word boundary is Unicode-aware, so
    "Bogotá" -> "Bogotá, Colombia" passes.
    """
    if not candidate or not target:
        return False
    prefix = re.compile(re.escape(candidate) + r"\b", re.IGNORECASE)
    return prefix.match(target) is not None and _GEO_SUFFIX.search(target) is not None


def section_for_place_types(types: Sequence[str]) -> tuple[str, str]:
    """(slug, heading) of the hub section a place of these Google-Places-like types belongs in.

    Case-insensitive; cafe/coffee -> Coffee, restaurant/food/meal_takeaway -> Restaurants,
    park/natural_feature -> Parks & Outdoors, lodging/hotel -> Lodging, anything else -> Overview.
    """
    lowered = {place_type.lower() for place_type in types}
    for matching, slug, heading in _SECTIONS_BY_PLACE_TYPE:
        if lowered & matching:
            return slug, heading
    return _DEFAULT_SECTION


# --- candidate derivation -----------------------------------------------------------------------


def _ranked(candidates: list[ParentCandidate]) -> list[ParentCandidate]:
    # Strongest evidence first; Python's sort is stable, so ties keep first-seen order.
    return sorted(candidates, key=lambda candidate: candidate.supporting_count, reverse=True)


def _journal_cluster_key_and_title(meta: Mapping[str, Any]) -> tuple[str, str] | None:
    journal_id = _read_string(meta, "journal_id") or _read_string(meta, "journal", "id")
    if not journal_id:
        return None
    title = (
        _read_string(meta, "journal", "title")
        or _read_string(meta, "journal_title")
        or f"Journal {journal_id[:JOURNAL_ID_TITLE_CHARS]}"
    )
    return f"journal:{journal_id}", title


def derive_parent_candidates(
    records: Iterable[_Record], min_cluster_size: int = DEFAULT_MIN_CLUSTER_SIZE
) -> list[ParentCandidate]:
    """City and journal hubs shared by at least `min_cluster_size` memories.

    City: `place.city`, `place_city` or `city`, else the city of `place.address`/`place_address`;
    title-cased, clustered case-insensitively; the section comes from the first memory's place types.
    Journal: `journal_id` or `journal.id`, titled by `journal.title`, `journal_title` or
    "Journal <first 8 chars of id>"; section "entries". `tags`/`idea_tags` only feed observed tags.
    Sorted by supporting count, descending.
    """
    clusters: dict[str, _Cluster] = {}
    for record in records:
        meta = record.metadata or {}
        record_id = str(record.id)
        tags = _read_tags(meta)
        city = _read_city(meta)
        if city:
            title = _title_case(city)
            section = section_for_place_types(_read_place_types(meta))
            clusters.setdefault(f"city:{title.lower()}", _Cluster("city", title, section)).add(
                record_id, tags
            )
        journal = _journal_cluster_key_and_title(meta)
        if journal:
            key, title = journal
            clusters.setdefault(key, _Cluster("journal", title, _JOURNAL_SECTION)).add(record_id, tags)
    return _ranked(
        [
            cluster.to_candidate("record")
            for cluster in clusters.values()
            if len(cluster.source_ids) >= min_cluster_size
        ]
    )


def derive_parent_candidates_from_page_summaries(
    pages: Iterable[_SummarisedPage], min_cluster_size: int = DEFAULT_MIN_CLUSTER_SIZE
) -> list[ParentCandidate]:
    """City hubs named by the summaries of at least `min_cluster_size` pages.

    The city is the preposition match of the summary, else the city of an address inside it, and
    must pass `is_likely_city_token`. Supporting ids are page ids (`source_kind="summary"`), tags
    come from an optional `tags` attribute, the section is always "overview".
    """
    clusters: dict[str, _Cluster] = {}
    for page in pages:
        if not page.summary:
            continue
        city = extract_city_from_summary(page.summary) or extract_city_from_address(page.summary)
        if not city or not is_likely_city_token(city):
            continue
        title = _title_case(city)
        cluster = clusters.setdefault(title.lower(), _Cluster("city", title, _DEFAULT_SECTION))
        cluster.add(str(page.id), getattr(page, "tags", None) or [])
    return _ranked(
        [
            cluster.to_candidate("summary")
            for cluster in clusters.values()
            if len(cluster.source_ids) >= min_cluster_size
        ]
    )


def merge_parent_candidates(*candidate_lists: Iterable[ParentCandidate]) -> list[ParentCandidate]:
    """One candidate per parent slug, evidence unioned.

    The first occurrence of a slug keeps its reason, section and source kind; later ones add their
    source ids and tags (first-seen order, no duplicates) and the count becomes the union's size.
    Sorted by supporting count, descending. Inputs are not modified.
    """
    merged: dict[str, ParentCandidate] = {}
    for candidates in candidate_lists:
        for candidate in candidates:
            existing = merged.get(candidate.parent_slug)
            if existing is None:
                merged[candidate.parent_slug] = candidate.model_copy(deep=True)
                continue
            source_ids = list(dict.fromkeys([*existing.source_record_ids, *candidate.source_record_ids]))
            existing.source_record_ids = source_ids
            existing.observed_tags = list(dict.fromkeys([*existing.observed_tags, *candidate.observed_tags]))
            existing.supporting_count = len(source_ids)
    return _ranked(list(merged.values()))
