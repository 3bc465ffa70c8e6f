"""`recall`: a question in, the answers out, best first, in a body the budget bounds as sent.

The wiki is an index over the memories behind it. Every retriever (app/recall_retrieve.py) ranks its
candidates, claims and memories alike; the rankings are fused (`domain.recall.fuse`, weights chosen
on a development set); then each candidate becomes an answer:

- a claim that is an excerpt of its memory (the memory says all it says, and more) is answered by
  that memory, with the claim's page;
- a claim that condenses, summarises or paraphrases is answered with the memory that best answers
  the question beside it (`memory`: its id, date and text);
- a memory no claim stands for (cited by none, or not compiled yet) is an answer of its own;
- a line that keeps the wiki's books (counts, spans, names seen together) is left out unless the
  question asks about counts or frequency (domain/recall_lines.py);
- the same memory, or the same claim text, is never sent twice.

The answers are then packed best first into `max_tokens` (domain/recall_body.py): the whole body
counts, keys and ids included. The default shape is compact (per answer its text, date or span,
page and memory ids); `verbose` adds the claim's section, kind, status, confidence, validity,
retriever signals and scores.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from app.reads import BadInput, Database, ReadScope, connection, text_argument
from app.recall_retrieve import Retrieved, Window, retrieve
from domain.claims import UNVERIFIED, claim_mark, status_meanings
from domain.memory import parse_instant
from domain.recall import DEFAULT_TUNING, RETRIEVER_OF, RETRIEVERS, Fused, Tuning, fuse
from domain.recall_body import Body, Candidate, pack_json, pack_lines
from domain.recall_dates import day_text, span_text, with_dates
from domain.recall_lines import asks_for_counts, asks_when, line_role
from domain.sentences import split_sentences
from planners.embedding_providers import provider_embedder
from planners.embeddings import Embedder, static_embedder
from runtime.settings import Settings
from store import recall_reads
from store.recall_reads import MemoryText, RecallClaimRow

MAX_QUESTION_CHARS = 1_000
DEFAULT_MAX_TOKENS = 500
MIN_MAX_TOKENS = 50
MAX_MAX_TOKENS = 8_000
MEMORY_IDS_SHOWN = 3  # memory ids listed per claim, the best-matching first (`source_count` has them all)
LONG_MEMORY_CHARS = 400  # a longer memory is sent as its sentences that best match the question
Form = Literal["json", "text"]


def embedder_for(settings: Settings) -> Callable[[], Embedder] | None:
    """The embedder WIKI_EMBEDDINGS names, made on first use and then kept (the compile embeds the
    claims and memories with it, recall the question), or None when it is `off`."""
    if settings.embeddings == "off":
        return None
    if settings.embeddings == "static":
        return static_embedder
    return functools.cache(functools.partial(provider_embedder, settings))


class AttachedMemory(BaseModel):
    """The memory behind a condensed claim that best answers the question."""

    id: str
    date: str
    text: str


class RecallItem(BaseModel):
    """One answer. Compact: kind, text, page, date, a claim's status (what was checked of it:
    quoted, verified, derived or unverified) and the memory ids (`memories` for a claim, `id` for a
    memory); a condensed claim also carries `memory`. The rest is sent only when verbose."""

    kind: Literal["claim", "memory"]
    id: str | None = None  # a memory's id
    text: str
    page: str | None = None  # type/slug of the page the answer is on
    date: str | None = None  # the day ("7 May 2023"), or a claim's span ("7 May 2023 to 2 June 2023")
    memories: list[str] | None = None  # a claim's memories, the best-matching first
    memory: AttachedMemory | None = None
    # verbose only
    claim_id: str | None = None
    section: str | None = None
    heading: str | None = None
    claim_kind: str | None = None
    status: str | None = None
    confidence: float | None = None
    source_count: int | None = None
    validity: str | None = None
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    occurred_at: datetime | None = None
    uncompiled: bool | None = None
    score: float | None = None
    signals: dict[str, int] | None = None


COMPACT_FIELDS = frozenset({"kind", "id", "text", "page", "date", "status", "memories", "memory"})


class RecallResult(BaseModel):
    """What recall sent (`body`, exactly), and the same answers as objects for the CLI and tests."""

    body: str
    max_tokens: int
    tokens_used: int
    results: list[RecallItem]
    left_out: int
    time_window: Window | None
    took_ms: float


class RecallBody(BaseModel):
    """The shape of the body sent over HTTP and MCP (for the API's schema)."""

    max_tokens: int
    tokens_used: int = Field(description="The body's length in characters over four, rounded up.")
    results: list[RecallItem]
    left_out: dict[str, Any] = Field(description="answers: how many found did not fit; best_tokens: what "
                                                 "the best of them would cost; best (verbose): its text.")


def parse_retrievers(without: list[str] | str | None) -> frozenset[str]:
    """The retrievers to run: all but those named in `without` (a list, or one comma-separated string)."""
    if without is None:
        return frozenset(RETRIEVERS)
    names = [n.strip() for n in (without.split(",") if isinstance(without, str) else without) if n.strip()]
    unknown = sorted(set(names) - set(RETRIEVERS))
    if unknown:
        raise BadInput(f"unknown retriever {', '.join(unknown)}; the retrievers are {', '.join(RETRIEVERS)}")
    return frozenset(RETRIEVERS) - set(names)


def min_confidence_of(value: float | None) -> float:
    if value is None:
        return 0.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value or not 0.0 <= value <= 1.0:
        raise BadInput(f"min_confidence must be a number from 0 to 1 (got {value!r})")
    return float(value)


def budget_of(max_tokens: int | None) -> int:
    if max_tokens is None:
        return DEFAULT_MAX_TOKENS
    if isinstance(max_tokens, bool) or not isinstance(max_tokens, int) or not MIN_MAX_TOKENS <= max_tokens <= MAX_MAX_TOKENS:
        raise BadInput(f"max_tokens must be between {MIN_MAX_TOKENS} and {MAX_MAX_TOKENS} (got {max_tokens!r})")
    return max_tokens


def as_of_of(value: str | datetime | None) -> datetime | None:
    if value is None or isinstance(value, datetime):
        return value
    try:
        return parse_instant("as_of", text_argument("as_of", value, 100))
    except ValueError as error:
        raise BadInput(f"as_of must be an ISO-8601 time such as 2026-11-01T00:00:00Z ({error})") from None


_PLAIN = re.compile(r"[^\w]+")
_DATE_PREFIX = re.compile(r"^\s*(?:[-*]\s+)?(?:\d{4}-\d{2}-\d{2}\s*:\s*)?")
_WORD = re.compile(r"[^\W_]{3,}")


def plain(text: str) -> str:
    """Words only, folded: what two texts compare by (markup, punctuation and case aside)."""
    return " " + _PLAIN.sub(" ", text.casefold()).strip() + " "


def _excerpt(text: str, question: str) -> str:
    """A long memory as its sentences that share most words with the question, in their order,
    within LONG_MEMORY_CHARS (the best one alone, cut, when none fits)."""
    if len(text) <= LONG_MEMORY_CHARS:
        return text
    wanted = {w.casefold() for w in _WORD.findall(question)}
    sentences = list(split_sentences(text))
    order = sorted(range(len(sentences)), key=lambda i: (-len(wanted & {w.casefold() for w in
                                                                        _WORD.findall(sentences[i])}), i))
    kept: list[int] = []
    used = 0
    for i in order:
        if used + len(sentences[i]) + 2 <= LONG_MEMORY_CHARS:
            kept.append(i)
            used += len(sentences[i]) + 2
    if not kept:
        return sentences[order[0]][:LONG_MEMORY_CHARS - 1].rstrip() + "…" if sentences else text[:LONG_MEMORY_CHARS]
    kept.sort()
    parts = [sentences[kept[0]]]
    for previous, index in zip(kept, kept[1:], strict=False):
        parts.append(sentences[index] if index == previous + 1 else "… " + sentences[index])
    return " ".join(parts) + (" …" if kept[-1] < len(sentences) - 1 else "")


class _Answers:
    """The fused candidates as answers, in order, each memory and claim text sent once."""

    def __init__(self, question: str, found: Retrieved, fused: list[Fused], claims: dict[str, RecallClaimRow],
                 texts: dict[str, MemoryText], floor: float, moment: datetime | None,
                 validity: dict[str, str]) -> None:
        self.question = question
        self.found = found
        self.claims = claims
        self.texts = texts
        self.floor = floor
        self.moment = moment
        self.validity = validity  # memory -> the validity of the claims citing it ("replaced": none holds)
        self.dated = asks_when(question) or found.window is not None
        self.counts = asks_for_counts(question)
        self.fused = {f.key: f for f in fused}
        self.fused_score = {f.key: f.score for f in fused}
        self.items: list[RecallItem] = []
        self.shown: set[str] = set()
        self.answered_by: dict[str, RecallItem] = {}  # memory id -> the memory answer sent for it
        # The page of the best-ranked claim citing each memory (a memory answer is shown on its page).
        self.page_of: dict[str, str] = {}
        for f in fused:
            claim = claims.get(f.key[2:]) if f.key.startswith("c:") else None
            if claim is not None:
                for memory_id in [*claim.sources, *found.cited.get(claim.id, [])]:
                    self.page_of.setdefault(memory_id, f"{claim.page_type}/{claim.page_slug}")
        self.seen_texts: set[str] = set()
        for item in fused:
            self._add(item)

    def best_memory(self, claim: RecallClaimRow) -> str | None:
        """The claim's memory that best answers: the best fused, then the best by words, then its first."""
        candidates = list(dict.fromkeys([*self.found.cited.get(claim.id, []), *claim.sources]))
        candidates = [m for m in candidates if m in self.texts]
        if not candidates:
            return None
        return max(candidates, key=lambda m: (self.fused_score.get(f"m:{m}", 0.0),
                                              self.found.memory_scores.get(m, 0.0), -candidates.index(m)))

    def memory_text(self, memory: MemoryText) -> str:
        text = _excerpt(memory.content, self.question)
        return with_dates(text, memory.occurred_at) if self.dated else text

    @staticmethod
    def _signals(*items: Fused | None) -> dict[str, int]:
        """Each retriever's best rank of the answer (a claim answered by its memory has both's)."""
        signals: dict[str, int] = {}
        for item in items:
            for ranking, rank in (item.ranks.items() if item else ()):
                name = RETRIEVER_OF.get(ranking, ranking)
                signals[name] = min(rank, signals.get(name, rank))
        return signals

    def _memory_item(self, memory_id: str, item: Fused, page: str | None,
                     claim: RecallClaimRow | None = None) -> None:
        if self.validity.get(memory_id) == "replaced":
            return  # every claim it supports was replaced by a newer fact: history, not an answer
        memory = self.texts[memory_id]
        self.shown.add(memory_id)
        own = self.fused.get(f"m:{memory_id}")
        answer = RecallItem(
            kind="memory", id=memory_id, text=self.memory_text(memory), page=page or self.page_of.get(memory_id),
            date=day_text(memory.occurred_at), occurred_at=memory.occurred_at,
            uncompiled=memory_id in self.found.uncompiled, validity=self.validity.get(memory_id),
            score=round(max(item.score, own.score if own else 0.0), 6),
            signals=self._signals(item, own if own is not item else None))
        if claim is not None:
            self._held(answer, claim)
        self.answered_by[memory_id] = answer
        self.items.append(answer)

    @staticmethod
    def _held(answer: RecallItem, claim: RecallClaimRow) -> None:
        """A memory answering for its claim holds as the claim does (verbose shows it)."""
        answer.validity, answer.valid_from, answer.valid_to = claim.validity, claim.valid_from, claim.valid_to

    def _add(self, item: Fused) -> None:
        kind, key = item.key[:1], item.key[2:]
        if kind == "m":
            if key in self.texts and key not in self.shown:
                self._memory_item(key, item, None)
            return
        claim = self.claims.get(key)
        if (claim is None or (self.floor > 0 and (claim.confidence or 0.0) < self.floor) or claim.text_key in self.seen_texts
                or (self.moment and claim.first_seen and claim.first_seen > self.moment)
                or (line_role(claim.text, claim.kind) == "bookkeeping" and not self.counts)):
            return
        self.seen_texts.add(claim.text_key)
        page = f"{claim.page_type}/{claim.page_slug}"
        best = self.best_memory(claim)
        said = plain(_DATE_PREFIX.sub("", claim.text))
        if best is not None and claim.corroboration <= 1 and said.strip() and said in plain(self.texts[best].content):
            # An excerpt of its one memory: the memory says it all, and more.
            if best not in self.shown:
                self._memory_item(best, item, page, claim)
            elif best in self.answered_by:  # sent already: the claim's page and retrievers join it
                sent = self.answered_by[best]
                sent.page = sent.page or page
                if sent.valid_from is None:
                    self._held(sent, claim)
                sent.signals = {**self._signals(item), **(sent.signals or {})}
            return
        matching = [m for m in self.found.cited.get(claim.id, []) if m in self.texts]
        ids = list(dict.fromkeys([*([best] if best else []), *matching, *claim.sources]))[:MEMORY_IDS_SHOWN]
        attached = None
        if best is not None and best not in self.shown and plain(self.texts[best].content) not in said:
            memory = self.texts[best]
            attached = AttachedMemory(id=best, date=day_text(memory.occurred_at), text=self.memory_text(memory))
            self.shown.add(best)
        text = claim.text
        if self.dated and claim.first_seen is not None:
            text = with_dates(text, claim.first_seen)
        self.items.append(RecallItem(
            kind="claim", text=text, page=page, date=span_text(claim.first_seen, claim.last_seen), memories=ids,
            memory=attached, claim_id=claim.id, section=claim.section_slug, heading=claim.heading,
            claim_kind=claim.kind, status=claim.status, confidence=claim.confidence,
            source_count=claim.corroboration, validity=claim.validity, valid_from=claim.valid_from,
            valid_to=claim.valid_to, score=round(item.score, 6), signals=self._signals(item)))


def item_json(item: RecallItem, verbose: bool) -> dict[str, Any]:
    dumped = item.model_dump(mode="json", exclude_none=True)
    return dumped if verbose else {k: v for k, v in dumped.items() if k in COMPACT_FIELDS}


def item_text(item: RecallItem) -> str:
    """Everything an answer says in words: its text and its memory's."""
    return item.text + (f" {item.memory.text}" if item.memory else "")


def item_lines(rank: int, item: RecallItem) -> str:
    """An answer for people (the CLI)."""
    where = " · ".join(part for part in (item.page, item.date) if part)
    if item.kind == "memory":
        lines = [f"{rank:>2}. {item.text}", f"    memory {item.id}" + (f" · {where}" if where else "")
                 + (" · not compiled yet" if item.uncompiled else "")]
    else:
        mark = claim_mark(item.status or UNVERIFIED, item.confidence)
        lines = [f"{rank:>2}. {item.text}", f"    {where} · {mark} · memories {', '.join(item.memories or [])}"]
    if item.memory:
        lines.append(f"    memory {item.memory.id} · {item.memory.date}: {item.memory.text}")
    return "\n".join(lines)


async def recall(db: Database, scope: ReadScope, question: str, max_tokens: int | None = None,
                 as_of: str | datetime | None = None, min_confidence: float | None = None,
                 without: list[str] | str | None = None, embedder: Callable[[], Embedder] | None = None,
                 verbose: bool = False, form: Form = "json", tuning: Tuning = DEFAULT_TUNING,
                 reserve: int = 0) -> RecallResult:
    """The answers to `question`, best first, in a body of at most `max_tokens` (every character sent
    counts, four characters a token) less `reserve` characters, saying how many did not fit."""
    return (await recall_variants(db, scope, question, max_tokens, [tuning], as_of, min_confidence, without,
                                  embedder, verbose, form, reserve))[0]


async def recall_variants(db: Database, scope: ReadScope, question: str, max_tokens: int | None,
                          tunings: list[Tuning], as_of: str | datetime | None = None,
                          min_confidence: float | None = None, without: list[str] | str | None = None,
                          embedder: Callable[[], Embedder] | None = None, verbose: bool = False,
                          form: Form = "json", reserve: int = 0) -> list[RecallResult]:
    """`recall` under each of `tunings` (the development eval's A/B): the retrievers run once per
    neighbour share, the details are read once for all."""
    started = time.perf_counter()
    question = text_argument("question", question, MAX_QUESTION_CHARS)
    budget = budget_of(max_tokens)
    floor = min_confidence_of(min_confidence)
    moment = as_of_of(as_of)
    use = parse_retrievers(without)
    head_size = min(200, 30 + budget * 4 // 60)
    async with connection(db) as conn:
        retrieved: dict[float, Retrieved] = {}
        for tuning in tunings:
            if tuning.neighbours not in retrieved:
                retrieved[tuning.neighbours] = await retrieve(conn, scope, question, use, moment, embedder, tuning)
        runs = [(tuning, retrieved[tuning.neighbours], fuse(retrieved[tuning.neighbours].rankings, tuning))
                for tuning in tunings]
        heads = {f.key for _, _, fused in runs for f in fused[:head_size]}
        claims = await recall_reads.claim_details(conn, scope.tenant, scope.owner,
                                                  sorted(k[2:] for k in heads if k.startswith("c:")), moment)
        wanted = {k[2:] for k in heads if k.startswith("m:")}
        for claim in claims.values():
            for found in retrieved.values():
                wanted.update(found.cited.get(claim.id, [])[:MEMORY_IDS_SHOWN])
            wanted.update(claim.sources[:1])
        texts = await recall_reads.memory_texts(conn, scope.tenant, scope.owner, sorted(wanted))
        validity = await recall_reads.memory_validity(conn, scope.tenant, scope.owner, sorted(texts), moment)
    took = round((time.perf_counter() - started) * 1000, 1)
    results = []
    for _, found, fused in runs:
        head = fused[:head_size]
        answers = _Answers(question, found, head, claims, texts, floor, moment, validity).items
        body = _body(answers, budget, verbose, form, found, took, question, use, reserve)
        results.append(RecallResult(body=body.text, max_tokens=budget, tokens_used=body.tokens_used,
                                    results=[answers[i] for i in body.chosen],
                                    left_out=body.left_out + len(fused) - len(head), time_window=found.window,
                                    took_ms=took))
    return results


def _body(answers: list[RecallItem], budget: int, verbose: bool, form: Form, found: Retrieved, took: float,
          question: str, use: frozenset[str], reserve: int) -> Body:
    if form == "text":
        return pack_lines(
            lambda tokens, most: f"Recall {question[:80]!r}: {tokens} of {most} tokens, {took:.0f} ms",
            [Candidate(item=item_lines(rank, a), text=item_text(a)) for rank, a in enumerate(answers, 1)],
            budget, lambda left, best: (f"left out: {left} more answer{'s' if left != 1 else ''}"
                                        + (f"; the best: {best}" if best else "")) if left else
            ("" if answers else "nothing in this wiki answers it"), reserve)
    extras = [{"statuses": status_meanings(a.status for a in answers if a.status),
               "retrievers": [r for r in RETRIEVERS if r in use],
               "time_window": found.window.model_dump(mode="json") if found.window else None,
               "took_ms": took}] if verbose else []
    return pack_json({"max_tokens": budget}, [Candidate(item=item_json(a, verbose), text=item_text(a))
                                              for a in answers], budget, extras, verbose, reserve)
