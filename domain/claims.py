"""Claims: the lines of a section as units of trust, and the rules that decide which are kept.

A section is an ordered list of claims, one per body line. Each claim cites exactly the memories it
comes from, carries a confidence that grows with the number of distinct memories saying it, and a
status from the verification gate. Pure rules only: the rows live in `store/claims.py`.

Grounding (the gate's deterministic half): every number, date and proper name of a claim must
appear, after the alias normalisation the resolver uses (`normalize_alias`: case, accents and
punctuation folded), in one of its cited memories (content, metadata values or the day it
happened) or among the page's own names; a number may also be a count of the claim's own memories,
recomputed (`counts_of`). A term that fails is named in the rejection's reason.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from domain.aliases import normalize_alias
from domain.markup import safe_markdown
from domain.plan import LineSources, Plan
from domain.resolved_plan import ProposedClaim

ClaimKind = Literal["fact", "derived"]
ClaimStatus = Literal["verified", "unverified"]
Verdict = Literal["verified", "unverified", "rejected"]

# Seed 003's schedule: a claim starts at 0.7 on its first memory, each further distinct memory
# saying it adds 0.1, capped at 1.0; a claim is durable from 0.8 (two independent memories).
INITIAL_CONFIDENCE = 0.7
CORROBORATION_STEP = 0.1
DURABLE_CONFIDENCE = 0.8

# The judge's thresholds on the average of accuracy, relevance and specificity (seed 003).
VERIFIED_AT = 0.6
REJECTED_BELOW = 0.3


def confidence(corroboration: int) -> float:
    """The confidence of a claim cited by `corroboration` distinct memories (0 for none)."""
    if corroboration <= 0:
        return 0.0
    return round(min(1.0, INITIAL_CONFIDENCE + CORROBORATION_STEP * (corroboration - 1)), 2)


def verdict(accuracy: float, relevance: float, specificity: float) -> Verdict:
    average = (accuracy + relevance + specificity) / 3
    if average >= VERIFIED_AT:
        return "verified"
    if average < REJECTED_BELOW:
        return "rejected"
    return "unverified"


# ------------------------------------------------------------------ line text

_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"[*_`]+")
_TRAILING_NOTE = re.compile(r"\s*\([^()]*\)\s*\.?\s*$")
_BOLD_OR_LINK = re.compile(r"\*\*([^*]+)\*\*|\[([^\]]+)\]\(")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


def plain_text(line: str) -> str:
    """The line as a reader reads it: link targets, emphasis and the bullet dropped."""
    return _EMPHASIS.sub("", _LINK.sub(r"\1", _BULLET.sub("", line))).strip()


def claim_key(line: str) -> str:
    """Two lines are the same claim when their plain text normalises alike (case, accents,
    punctuation and spacing do not make a new claim)."""
    return normalize_alias(plain_text(line))


def body_lines(body: str | None) -> list[str]:
    """The claims of a body, in order: its non-blank lines, stripped."""
    return [line.strip() for line in (body or "").splitlines() if line.strip()]


# ------------------------------------------------------------------ grounding terms

_DATE = re.compile(r"\b\d{4}-\d{2}(?:-\d{2})?\b")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# A word starting with an upper-case letter (any script that has case), apostrophes and hyphens inside.

@dataclass(frozen=True)
class Terms:
    dates: tuple[str, ...]
    numbers: tuple[str, ...]
    names: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.dates or self.numbers or self.names)


# The labels the compiler's own summary lines start with (planners/scripted_condense.py and the
# section writer): structure, not names. The figures after them are still checked, by recounting.
DERIVED_LABELS = ("latest", "by month", "visited", "most mentioned", "often together with", "earlier", "trip")
# Closed-class words (articles, pronouns, prepositions, conjunctions) are never names, wherever a
# sentence puts them: "A person.", "They stayed until sunset."
FUNCTION_WORDS = frozenset(["a", "an", "the", "this", "that", "these", "those", "it", "its", "he", "she", "they", "them", "their", "his", "her", "we", "our", "you", "your", "i", "my", "me", "in", "on", "at", "by", "for", "from", "with", "to", "of", "and", "or", "but", "so", "as", "if", "when", "while", "after", "before", "during", "until", "since", "about", "into", "over", "under", "between", "there", "here", "then", "also", "all", "both", "each", "every", "some", "any", "no", "not", "one"])


def _label_free(text: str) -> str:
    lowered = text.lower()
    for label in DERIVED_LABELS:
        if lowered.startswith(label) and not lowered[len(label):len(label) + 1].isalpha():
            return text[len(label):]
    return text


def terms_of(line: str) -> Terms:
    """The checkable terms of a line: its dates (YYYY-MM or YYYY-MM-DD), its other numbers, and its
    capitalised words (each normalised), a leading label of the compiler's summary lines left out."""
    plain = plain_text(line)
    text = _label_free(plain)
    dates = tuple(dict.fromkeys(_DATE.findall(text)))
    rest = _DATE.sub(" ", text)
    numbers = tuple(dict.fromkeys(n.replace(",", "") for n in _NUMBER.findall(rest)))
    names = tuple(dict.fromkeys(
        key for word in _capitalised_words(rest, opening=text == plain)  # after a label, names follow
        if (key := normalize_alias(word)) and key not in FUNCTION_WORDS
    ))
    return Terms(dates=dates, numbers=numbers, names=names)


_TOKEN = re.compile(r"[\w'’-]+|[^\w\s]", re.UNICODE)
_SENTENCE_END = frozenset(".!?;")


def _capitalised_words(text: str, *, opening: bool = True) -> list[str]:
    """The capitalised words that may be names. A sentence's first word is capitalised by grammar, so
    it counts only when the next word is capitalised too (the start of a name of several words,
    "Chef Bartholomew cooked"): "Notes on Uchi" or "Waited an hour" name nothing. A one-word name
    opening a sentence is left to the judge."""
    tokens = _TOKEN.findall(text)
    out: list[str] = []
    for n, token in enumerate(tokens):
        if not (token[:1].isalnum() or token[:1] == "_"):
            opening = opening or token in _SENTENCE_END
            continue
        capitalised = token[:1].isupper()
        if capitalised and not token[:1].isdigit():
            following = tokens[n + 1] if n + 1 < len(tokens) else ""
            if not opening or following[:1].isupper():
                out.append(token)
        opening = False
    return out


def opening_words(line: str) -> list[str]:
    """The one-word openings `terms_of` leaves out, normalised: each sentence's first word when it is
    capitalised and the next word is not ("Oriane cooked dinner."), closed-class words left out.
    Whether one is a name is a question of the language (a rare word, or an ordinary one capitalised
    by grammar), which the caller answers (domain/opening_names.py)."""
    plain = plain_text(line)
    text = _label_free(plain)
    tokens = _TOKEN.findall(_DATE.sub(" ", text))
    opening = text == plain  # after a label, the first word is no sentence's opening
    found: list[str] = []
    for n, token in enumerate(tokens):
        if not (token[:1].isalnum() or token[:1] == "_"):
            opening = opening or token in _SENTENCE_END
            continue
        following = tokens[n + 1] if n + 1 < len(tokens) else ""
        if opening and token[:1].isupper() and not following[:1].isupper():
            key = normalize_alias(token)
            if key and key not in FUNCTION_WORDS and not key.isdigit():
                found.append(key)
        opening = False
    return list(dict.fromkeys(found))


def counts_of(line: str, evidence: Sequence[Evidence]) -> set[str]:
    """The counts a line may state about its own memories, recomputed from them: how many it cites,
    how many vouch for it, how many happened on each day or month it names, within the span of days
    it names, or name a name it gives
    ("- Visited 3 times, 2026-03-01 to 2026-03-09.", "- By month: 2026-03 (2).")."""
    days = [e.happened.date().isoformat() for e in evidence if e.happened is not None]
    counts = {str(len(evidence)), str(len(supporting(line, evidence)))}
    # how many of its memories say the line's sentence itself ("- Closed on Sundays. (2 times, …)"),
    # with or without a leading "Name: "
    sentence = _TRAILING_NOTE.sub("", _label_free(plain_text(line)))
    for said in {normalize_alias(sentence), normalize_alias(sentence.split(": ", 1)[-1])} - {""}:
        counts.add(str(sum(1 for e in evidence if f" {said} " in e.text)))
    named = _DATE.findall(plain_text(line))
    for token in named:
        counts.add(str(sum(1 for day in days if day.startswith(token))))
    full = sorted(token for token in named if len(token) == 10)
    if len(full) >= 2:
        counts.add(str(sum(1 for day in days if full[0] <= day <= full[-1])))
    counts.add(str(sum(1 for day in days if day in full)))
    # how many of its memories name each name the line gives ("Most mentioned: **Lena** (3)")
    for groups in _BOLD_OR_LINK.findall(line):
        key = normalize_alias(groups[0] or groups[1])
        if key:
            counts.add(str(sum(1 for e in evidence if f" {key} " in e.text)))
    counts.discard("0")
    return counts


@dataclass(frozen=True)
class Evidence:
    """What one memory can vouch for: its normalised words, its numbers and its dates."""

    memory_id: str
    words: frozenset[str]
    text: str
    numbers: frozenset[str]
    dates: frozenset[str]
    happened: datetime | None = None
    # The memory's metadata keys, normalised: a line may label a value by its key ("Address: …").
    labels: frozenset[str] = frozenset()


def flat_values(value: Any) -> Iterable[str]:
    """Every scalar value of a memory's metadata, in order (keys left out)."""
    if isinstance(value, dict):
        for item in value.values():
            yield from flat_values(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from flat_values(item)
    elif value is not None:
        yield str(value)


def metadata_keys(value: Any) -> Iterable[str]:
    """Every key of a memory's metadata, at any depth."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from metadata_keys(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from metadata_keys(item)


def evidence_of(memory_id: str, content: str, metadata: dict[str, Any] | None, happened: datetime | date | None) -> Evidence:
    raw = " ".join([content, *flat_values(metadata or {})])
    dates = set(_DATE.findall(raw))
    if happened is not None:
        day = happened.date() if isinstance(happened, datetime) else happened
        dates.update({day.isoformat(), day.isoformat()[:7]})
    normalised = normalize_alias(raw)
    numbers = {n.replace(",", "") for n in _NUMBER.findall(_DATE.sub(" ", raw))}
    return Evidence(memory_id=memory_id, words=frozenset(normalised.split()), text=f" {normalised} ",
                    numbers=frozenset(numbers), dates=frozenset(dates),
                    happened=happened if isinstance(happened, datetime) else None,
                    labels=frozenset(key for key in map(normalize_alias, metadata_keys(metadata or {})) if key))


def _name_in(name: str, evidence: Evidence) -> bool:
    return name in evidence.words or f" {name} " in evidence.text


def _names_text(page_names: Iterable[str]) -> str:
    return " " + " ".join(normalize_alias(name) for name in page_names) + " "


def unsupported_terms(line: str, evidence: Sequence[Evidence], page_names: Iterable[str] = ()) -> list[str]:
    """The line's terms that none of the evidence (nor the page's own names) contains, in order."""
    terms = terms_of(line)
    names_text = _names_text(page_names)
    counts = counts_of(line, evidence) if terms.numbers else set()
    missing: list[str] = []
    for day in terms.dates:
        if not any(day in e.dates for e in evidence):
            missing.append(day)
    for number in terms.numbers:
        if not any(number in e.numbers for e in evidence) and f" {number} " not in names_text \
                and number not in counts:
            missing.append(number)
    for name in terms.names:
        if not any(_name_in(name, e) for e in evidence) and f" {name} " not in names_text:
            missing.append(name)
    return missing


def supporting(line: str, evidence: Sequence[Evidence]) -> list[str]:
    """The memories that vouch for the line: those holding all its terms, if any does; else those
    holding one of its telling terms (a term some but not all of the memories hold; when no term tells
    them apart, any of its terms). All of them when the line has no term. A line folded from several
    memories cites exactly those it draws on."""
    terms = terms_of(line)
    if not terms:
        return [e.memory_id for e in evidence]
    holders: list[set[str]] = []
    for day in terms.dates:
        holders.append({e.memory_id for e in evidence if day in e.dates})
    for number in terms.numbers:
        holders.append({e.memory_id for e in evidence if number in e.numbers})
    for name in terms.names:
        holders.append({e.memory_id for e in evidence if _name_in(name, e)})
    every = set.intersection(*holders) if holders else set()
    telling = [h for h in holders if h and len(h) < len(evidence)] or holders
    chosen = every or (set().union(*telling) if telling else set())
    return [e.memory_id for e in evidence if e.memory_id in chosen]


def grounding_reason(missing: Sequence[str]) -> str:
    shown = ", ".join(repr(term) for term in missing[:5])
    more = f" and {len(missing) - 5} more" if len(missing) > 5 else ""
    return f"not in its cited memories: {shown}{more}"


# ------------------------------------------------------------------ the plan's proposed lines


def proposed_sections(plan: Plan) -> Iterable[tuple[str, list[str], list[LineSources]]]:
    """Every section proposal of a leaf plan: (body, section citations, per-line citations)."""
    for update in plan.pageUpdates:
        for section in update.sections:
            yield section.proposed_body_md, section.source_refs, section.line_sources
    for page in [*plan.newPages, *(p.newPage for p in plan.sectionPromotions)]:
        for new_section in page.sections:
            yield new_section.body_md, new_section.source_refs or page.source_refs, new_section.line_sources
    for promotion in plan.promotions:
        for new_section in promotion.sections:
            yield new_section.body_md, new_section.source_refs, new_section.line_sources


def lines_with_refs(body: str, section_refs: list[str], line_sources: list[LineSources]) -> list[LineSources]:
    """Each line of a proposed body with its own citations: the ones the plan gave the line, else the
    section's (a plan in the long form cites per section only)."""
    own = {claim_key(line.text): line for line in line_sources}
    out = []
    for text in body_lines(body):
        line = own.get(claim_key(text))
        out.append(LineSources(text=text, refs=line.refs if line else list(section_refs),
                               status=line.status if line else "", kind=line.kind if line else "",
                               supersedes=line.supersedes if line else [],
                               superseded_by=line.superseded_by if line else [], reasons=line.reasons if line else {},
                               unsure=line.unsure if line else []))
    return out


def proposed_claims(plan: Plan) -> dict[str, ProposedClaim]:
    """The plan's lines by claim key, each with the union of the citations the plan gave it."""
    out: dict[str, ProposedClaim] = {}
    for body, refs, line_sources in proposed_sections(plan):
        for line in lines_with_refs(body, refs, line_sources):
            # Apply stores the line made safe (a tag neutralised, a link to elsewhere reduced to its
            # text), which can change its key: the line is found under either, with its own citations.
            replaced = [key for text in line.supersedes if (key := claim_key(text))]
            replacing = [key for text in line.superseded_by if (key := claim_key(text))]
            unsure = [key for text in line.unsure if (key := claim_key(text))]
            reasons = {key: why for text, why in line.reasons.items() if (key := claim_key(text)) and why}
            for key in dict.fromkeys([claim_key(line.text), claim_key(safe_markdown(line.text))]):
                claim = out.setdefault(key, ProposedClaim(status=line.status, kind=line.kind))
                claim.refs = list(dict.fromkeys([*claim.refs, *line.refs]))
                claim.supersedes = list(dict.fromkeys([*claim.supersedes, *replaced]))
                claim.superseded_by = list(dict.fromkeys([*claim.superseded_by, *replacing]))
                claim.unsure = list(dict.fromkeys([*claim.unsure, *unsure]))
                claim.reasons = {**claim.reasons, **reasons}
                if line.status == "unverified":
                    claim.status = "unverified"
    return out


# ------------------------------------------------------------------ attributing a written body

_DATED = re.compile(r"^\s*-\s*(\d{4}-\d{2}-\d{2})\s*:\s*(.+)$")


@dataclass(frozen=True)
class KnownClaim:
    """What a section's stored claim already holds (its citations, status and kind)."""

    refs: tuple[str, ...]
    status: str
    kind: str


@dataclass(frozen=True)
class ClaimDraft:
    text: str
    key: str
    occurrence: int
    kind: ClaimKind
    status: ClaimStatus
    refs: tuple[str, ...]


def quoted_by(line: str, evidence: Sequence[Evidence]) -> list[str]:
    """The memories a dated line `- YYYY-MM-DD: …` quotes: happened on that day (or name it) and
    contain the text after the date's last `: ` part."""
    match = _DATED.match("- " + plain_text(line))
    if match is None:
        return []
    day, rest = match.groups()
    tail = normalize_alias(plain_text(rest).split(": ")[-1])
    if not tail:
        return []
    return [e.memory_id for e in evidence if day in e.dates and f" {tail} " in e.text]


def _content_words(text: str) -> set[str]:
    return {w for w in normalize_alias(text).split() if len(w) >= 4 and not w.isdigit()}


def folded_from(line: str, known: dict[str, KnownClaim]) -> list[str]:
    """The citations of the stored claims a writer's line folds: those at least half of whose content
    words (four letters or more) the line repeats. A fold cites the union of what it folds."""
    words = _content_words(plain_text(line))
    refs: list[str] = []
    for key, claim in known.items():
        theirs = _content_words(key)
        if theirs and len(theirs & words) * 2 >= len(theirs):
            refs += [r for r in claim.refs if r not in refs]
    return refs


# A section citing more memories than this is a hub or rollup the compiler computes (its lines list
# pages, counts and rankings over all of them); checking each of its writer-made lines term by term
# against every memory would cost lines x memories at every batch, so such a line is derived.
LARGE_SECTION_SOURCES = 100


def attribute_body(body: str | None, sources: Sequence[Evidence], proposed: dict[str, ProposedClaim],
                   known: dict[str, KnownClaim], page_names: Sequence[str] = ()) -> list[ClaimDraft]:
    """The claims of a written section body, in order, each with its citations (always among the
    section's `sources`):

    1. the citations the plan gave the line, and those its stored claim had (a line proposed again
       citing a new memory unions them: its corroboration grows);
    2. else the memories a dated line quotes (its day and text);
    3. else the citations of the stored lines it folds (`folded_from`), when their memories hold
       every term of it;
    4. else the line came from the section writer (a fold of lines, a condensed summary): when every
       term of it is in the section's memories it is a fact citing exactly the memories that vouch
       for it (a fold cites the union of what it folds); otherwise it is a line the compiler derived
       in code (counts, spans, rankings), grounded by construction, citing all the section's sources.
    """
    allowed = {e.memory_id for e in sources}
    drafts: list[ClaimDraft] = []
    seen: dict[str, int] = {}
    for text in body_lines(body):
        key = claim_key(text) or text
        occurrence = seen.get(key, 0)
        seen[key] = occurrence + 1
        plan_claim, stored = proposed.get(key), known.get(key)
        if stored is not None and plan_claim is None and stored.kind == "derived":
            # An unchanged computed line summarises the whole section: it cites all its memories.
            drafts.append(ClaimDraft(text=text, key=key, occurrence=occurrence, kind="derived",
                                     status="verified", refs=tuple(e.memory_id for e in sources)))
            continue
        refs = [r for r in [*(plan_claim.refs if plan_claim else []), *(stored.refs if stored else [])]
                if r in allowed]
        kind: ClaimKind = "derived" if ((stored and stored.kind == "derived" and not plan_claim)
                                        or (plan_claim and plan_claim.kind == "derived")) else "fact"
        status: ClaimStatus = "unverified" if (plan_claim and plan_claim.status == "unverified") else (
            "unverified" if stored and stored.status == "unverified" and not plan_claim else "verified")
        if not refs:
            refs = quoted_by(text, sources)
        if not refs:
            folded = [r for r in folded_from(text, known) if r in allowed]
            # A fold is a fact of the lines it folds only when their memories hold its terms; a count
            # of them ("Earlier: 16 notes") is not, and is attributed by rule 4.
            if folded and not unsupported_terms(text, [e for e in sources if e.memory_id in folded], page_names):
                refs = folded
        if not refs and len(sources) > LARGE_SECTION_SOURCES:
            kind, refs = "derived", [e.memory_id for e in sources]  # a hub's computed list: see below
        if not refs and is_summary(text, sources):
            kind, refs = "derived", [e.memory_id for e in sources]
        if not refs:
            if not unsupported_terms(text, sources, page_names):
                refs = supporting(text, sources)
                status = "verified" if not terms_of(text) else "unverified"
            else:
                kind, refs = "derived", [e.memory_id for e in sources]
        drafts.append(ClaimDraft(text=text, key=key, occurrence=occurrence, kind=kind, status=status,
                                 refs=tuple(dict.fromkeys(refs))))
    return drafts


# ------------------------------------------------------------------ the judge


class ClaimQuestion(BaseModel):
    """One new claim for the judge: its text, the page it is about and the memories it cites."""

    key: str
    text: str
    page: str
    memories: list[str]


class ClaimScore(BaseModel):
    key: str
    accuracy: float = Field(ge=0, le=1)
    relevance: float = Field(ge=0, le=1)
    specificity: float = Field(ge=0, le=1)

    @property
    def verdict(self) -> Verdict:
        return verdict(self.accuracy, self.relevance, self.specificity)


_CONTENT_WORD = re.compile(r"[^\W\d_]{4,}", re.UNICODE)


def scripted_score(question: ClaimQuestion) -> ClaimScore:
    """The offline judge, from the same evidence the model judge sees: accuracy is the share of the
    claim's content words (four letters or more) its memories contain, relevance whether it shares a
    word with the page's name or its memories at all, specificity whether it has a checkable term (none
when nothing it says is in its memories)."""
    evidence = " " + " ".join(normalize_alias(m) for m in question.memories) + " "
    words = [normalize_alias(w) for w in _CONTENT_WORD.findall(plain_text(question.text))]
    found = [w for w in words if f" {w}" in evidence]
    accuracy = len(found) / len(words) if words else 1.0
    page_words = set(normalize_alias(question.page).split())
    relevance = 1.0 if (found or page_words & set(words)) else 0.0
    specificity = (1.0 if terms_of(question.text) else 0.5) if found else 0.0
    return ClaimScore(key=question.key, accuracy=round(accuracy, 3), relevance=relevance, specificity=specificity)


def is_summary(line: str, evidence: Sequence[Evidence]) -> bool:
    """A line of dates and grounded figures only, with no name and no capitalised word: a summary the
    compiler can recompute ("- 3 new memories.", "- 2 memories, 2026-03-01 to 2026-03-09."), derived."""
    terms = terms_of(line)
    capitalised = any(token[:1].isupper() for token in _TOKEN.findall(_label_free(plain_text(line))))
    return bool(terms.numbers or terms.dates) and not capitalised and not unsupported_terms(line, evidence)


# Words that only join a memory's words into a line ("Restaurant in Austin", "A person"): an article
# or a preposition of place states nothing of its own. Negations and verbs are never in it.
JOINING_WORDS = frozenset(["a", "an", "the", "in", "at", "on", "of"])
_FIELD_LABEL = re.compile(r"^\s*([^:]{1,40}):\s+")


def _field_label_free(text: str, evidence: Sequence[Evidence]) -> str:
    """The text without a leading "Key: " that names a metadata key of its memories ("Address: …")."""
    match = _FIELD_LABEL.match(text)
    if match and any(normalize_alias(match.group(1)) in e.labels for e in evidence):
        return text[match.end():]
    return text


def is_verbatim(line: str, evidence: Sequence[Evidence]) -> bool:
    """Every word of the line (after the compiler's labels, a metadata key labelling its value, and a
    trailing note) is in its memories, a joining word, or a recount of its memories: it rearranges
    what they say and adds nothing, so it needs no judge."""
    text = _field_label_free(_TRAILING_NOTE.sub("", _label_free(plain_text(line))), evidence)
    words = normalize_alias(text).split()
    held = set().union(*(e.words for e in evidence)) if evidence else set()
    counts = counts_of(line, evidence) if any(word.isdigit() for word in words) else set()
    return any(word in held for word in words) and all(
        word in held or word in JOINING_WORDS or (word.isdigit() and word in counts) for word in words)
