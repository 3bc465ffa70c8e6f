"""The simulated model's leaf plan: what a careful model following the leaf prompt would answer.

Read from the request alone (claude_sim/leaf_reading.py), never from the product's planner:

- Subjects are the names the records give: their metadata entities, their place, the place's city and
  their journal, or, for a record whose metadata lists no entities, the names its text writes
  (claude_sim/names.py). Spellings that fold alike are one subject.
- A subject a candidate page carries (its title, an alias or its slug) updates that page: its log
  section (the default section for observations) gets a line per record, and a place's visits
  section the visit days; a new spelling becomes an alias.
- A subject the prompt's own threshold allows ("at least two records reinforce it") becomes a new
  page with its type's default sections: a lead line in the third person (what the metadata says it
  is, or what two of its records say, joined), then a line per record.
- A subject that matches an open mention is promoted when the prompt's rule allows it (seen often
  enough, recently), else held again; any other single sighting is held.
- A record's line is its own dated line ("@m4") when its first sentence names the subject; else the
  sentence that does, dated; a subject only the metadata names is led by its name ("@m4:<name>").
- Links: a place to its city, a trip's places and people to the trip.

Every shortcut is used only when the system prompt offers it (claude_sim/leaf_reading.py
`Conventions`); the reply is written in the keys the prompt's output shape names.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from claude_sim.leaf_reading import Conventions, LeafRequest, Memory, Page
from claude_sim.names import first_sentence, inner_capitalised, names_in
from claude_sim.reading import fold, kebab
from claude_sim.turns import Turn, names_same_person, read_turns

_SENTENCES = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'“(])")
_LOG_PURPOSE = ("observations", "bullets", "what followed", "situation")
# A new page's log opens with the count and span of its records from this many records on.
SPAN_FROM = 3


@dataclass
class Subject:
    key: str
    type: str
    kind: str = ""
    spellings: Counter[str] = field(default_factory=Counter)
    names: set[str] = field(default_factory=set)  # folded spellings and aliases
    memories: list[str] = field(default_factory=list)  # handles, in record order
    places: list[str] = field(default_factory=list)  # records where it is the place visited
    from_metadata: set[str] = field(default_factory=set)  # records whose metadata (not text) names it
    city: str = ""
    address: str = ""
    role: str = ""  # "place", "city", "trip" or ""

    @property
    def title(self) -> str:
        cased = [(count, spelling) for spelling, count in self.spellings.items() if spelling[:1].isupper()]
        return max(cased or [(c, s) for s, c in self.spellings.items()])[1]

    def see(self, memory: str, spelling: str, *, metadata: bool) -> None:
        self.spellings[spelling] += 1
        self.names.add(fold(spelling))
        if memory not in self.memories:
            self.memories.append(memory)
        if metadata:
            self.from_metadata.add(memory)


class _Subjects:
    def __init__(self) -> None:
        self.all: list[Subject] = []

    def find(self, names: set[str]) -> Subject | None:
        return next((s for s in self.all if s.names & names), None)

    def add(self, memory: str, name: str, page_type: str, *, kind: str = "", aliases: list[str] | None = None,
            metadata: bool = False) -> Subject | None:
        names = {fold(name)} | {fold(a) for a in aliases or []}
        names.discard("")
        if not names:
            return None
        subject = self.find(names)
        if subject is None:
            subject = Subject(key=fold(name), type=page_type if page_type in ("entity", "topic", "decision")
                              else "entity", kind=kind)
            self.all.append(subject)
        subject.names |= names
        subject.kind = subject.kind or kind
        subject.see(memory, name, metadata=metadata)
        return subject


def _humanize(word: str) -> str:
    text = word.replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def _person(subjects: _Subjects, memory: str, name: str, written: str = "") -> None:
    """A speaker as a subject: one however written (their full name, first name or a nickname)."""
    aliases = [name.split()[0]] + ([written] if written else [])
    subject = subjects.add(memory, name, "entity", kind="person", aliases=aliases)
    if subject is not None and written and fold(written) != fold(name):
        subject.spellings[written] += 0  # an alias the page keeps, never its title


def _turn_subjects(subjects: _Subjects, memory: str, turn: Turn, people: list[str], names: list[str]) -> None:
    """Whom a turn's line is about: its speaker (or, for an assistant's turn the user confirmed, the
    user), and whoever its stating sentences name, a speaker however they are called."""
    if not turn.line:
        return
    about = turn.addressee if turn.assistant else turn.said.speaker
    if about:
        _person(subjects, memory, about)
    for name in names:
        person = next((p for p in people if names_same_person(name, p)), None)
        if person is not None:
            _person(subjects, memory, person, name)
        else:
            subjects.add(memory, name, "entity")


def collect(memories: list[Memory], turns: dict[str, Turn] | None = None) -> list[Subject]:
    known = inner_capitalised(m.text for m in memories)
    turns = read_turns(memories) if turns is None else turns
    people = list(dict.fromkeys(t.said.speaker for t in turns.values() if not t.assistant))
    subjects = _Subjects()
    for memory in memories:
        meta = memory.metadata
        entities = meta.get("entities") if isinstance(meta.get("entities"), list) else None
        for entity in entities or []:
            if isinstance(entity, dict) and isinstance(entity.get("name"), str):
                subjects.add(memory.handle, entity["name"], str(entity.get("type") or "entity"),
                             kind=str(entity.get("kind") or ""), aliases=list(entity.get("aliases") or []),
                             metadata=True)
        place = meta.get("place")
        if isinstance(place, dict) and isinstance(place.get("name"), str) and place["name"].strip():
            types = place.get("types") if isinstance(place.get("types"), list) else []
            subject = subjects.add(memory.handle, place["name"], "entity", kind=str(types[0]) if types else "",
                                   metadata=True)
            if subject is not None:
                subject.role = "place"
                subject.places.append(memory.handle)
                subject.city = subject.city or str(place.get("city") or "")
                subject.address = subject.address or str(place.get("address") or "")
            if isinstance(place.get("city"), str) and place["city"].strip():
                city = subjects.add(memory.handle, place["city"], "topic", kind="city", metadata=True)
                if city is not None:
                    city.role = city.role or "city"
        journal = meta.get("journal")
        if isinstance(journal, dict) and isinstance(journal.get("title"), str) and journal["title"].strip():
            trip = subjects.add(memory.handle, journal["title"], "topic", kind="trip", metadata=True)
            if trip is not None:
                trip.role = "trip"
        turn = turns.get(memory.handle)
        if turn is not None:
            _turn_subjects(subjects, memory.handle, turn, people, turn.names)
        elif entities is None:
            for name in names_in(memory.text, known):
                subjects.add(memory.handle, name, "entity")
    return subjects.all


# ------------------------------------------------------------------ lines


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCES.split(" ".join(text.split())) if s.strip()]


def _names_it(sentence: str, subject: Subject) -> bool:
    folded = f" {fold(sentence)} "
    return any(f" {name} " in folded for name in subject.names)


def record_line(memory: Memory, subject: Subject, conventions: Conventions) -> tuple[str, bool]:
    """The line a record gives a page about `subject`, and whether it quotes the record ("@m4")."""
    said = sentences(memory.text)
    first = said[0] if said else first_sentence(memory.text)
    if conventions.quotes and (not said or _names_it(first, subject)):
        return f"@{memory.handle}", True
    naming = next((s for s in said if _names_it(s, subject)), None)
    if naming is not None:
        return f"- {memory.day}: {naming}", False
    place = memory.metadata.get("place")
    lead = place.get("name") if isinstance(place, dict) else None
    if conventions.led_quotes and isinstance(lead, str) and lead.strip() and fold(lead) not in subject.names:
        return f"@{memory.handle}:{lead.strip()}", True
    if conventions.quotes:
        return f"@{memory.handle}", True
    return f"- {memory.day}: {first}", False


_FILLER = re.compile(r"\b(?:recently|currently|really|just|also|actually|still)\s+", re.IGNORECASE)


def _third_person(subject: Subject, memories: list[Memory]) -> str | None:
    """A lead line saying what one record says of a subject the metadata does not describe: its first
    sentence opening with the subject's name, as a writer trims it (fillers and a trailing clause
    after ";" dropped), citing that record; or nothing."""
    title = subject.title
    for memory in memories:
        for sentence in sentences(memory.text)[:2]:
            if sentence.startswith(f"{title} ") and len(sentence) < 200:
                trimmed = _FILLER.sub("", sentence.split(";", 1)[0]).rstrip(".!? ")
                return f"{trimmed}."
    return None


def _log_section(conventions: Conventions, page_type: str) -> str:
    defaults = [slug for slug, _ in conventions.page_types.get(page_type, [])]
    for slug in defaults:
        if any(word in conventions.purposes.get(page_type, {}).get(slug, "").lower() for word in _LOG_PURPOSE):
            return slug
    return defaults[1] if len(defaults) > 1 else (defaults[0] if defaults else "notes")


# ------------------------------------------------------------------ the plan


class Planner:
    def __init__(self, request: LeafRequest) -> None:
        self.request = request
        self.conventions = request.conventions
        self.by_handle = {m.handle: m for m in request.memories}
        self.turns = read_turns(request.memories)
        self.updates: dict[str, dict[str, Any]] = {}
        self.new_pages: list[dict[str, Any]] = []
        self.held: list[dict[str, Any]] = []
        self.promotions: list[dict[str, Any]] = []
        self.ends: dict[str, str] = {}  # subject key -> its page as a link end
        self.consumed: set[str] = set()
        newest = max((m.day for m in request.memories), default="")
        self.newest = date.fromisoformat(newest) if newest else None

    # ---- matching

    def page_for(self, subject: Subject) -> Page | None:
        hits = [p for p in self.request.pages
                if {fold(p.title), *map(fold, p.aliases), p.slug.replace("-", " ")} & subject.names]
        return next((p for p in hits if p.type == subject.type), hits[0] if hits else None)

    def mention_for(self, subject: Subject):  # noqa: ANN201 - a Mention or None
        return next((m for m in self.request.mentions if {fold(m.alias), fold(m.key or "")} & subject.names), None)

    def promotable(self, count: int, last_seen: str) -> bool:
        if count < self.conventions.promotion_min_sightings or self.newest is None:
            return False
        try:
            seen = date.fromisoformat(last_seen[:10])
        except ValueError:
            return False
        return (self.newest - seen).days <= self.request.promotion_window_days

    # ---- sections

    def lines(self, subject: Subject) -> tuple[list[str], list[str]]:
        lines, refs = [], []
        for handle in subject.memories:
            turn = self.turns.get(handle)
            if turn is not None:
                # a turn's line: what it states in the third person, citing it (and, for an assistant's
                # turn the user confirmed, the confirming turn)
                about = turn.addressee if turn.assistant else turn.said.speaker
                naming = [w for w in turn.written if _names_it(w, subject)]
                said = turn.line if fold(about or "") in subject.names or not naming else " ".join(naming)
                lines.append(f"- {self.by_handle[handle].day}: {said}")
                refs += turn.refs
                continue
            line, quoted = record_line(self.by_handle[handle], subject, self.conventions)
            lines.append(line)
            if not quoted:
                refs.append(handle)
        return list(dict.fromkeys(lines)), refs

    def section(self, page_type: str, slug: str, lines: list[str], refs: list[str]) -> dict[str, Any]:
        out: dict[str, Any] = {"slug": slug}
        heading = self.conventions.heading(page_type, slug)
        if heading is None or not self.conventions.omit_default_heading:
            out["heading"] = heading or _humanize(slug)
        out["lines"] = lines
        if refs:
            out["refs"] = list(dict.fromkeys(refs))
        return out

    def page_sections(self, subject: Subject, page_type: str, extra: list[tuple[str, str]] = ()) -> list[dict]:
        defaults = [slug for slug, _ in self.conventions.page_types.get(page_type, [])]
        memories = [self.by_handle[h] for h in subject.memories]
        out = []
        log = _log_section(self.conventions, page_type)
        if page_type == "decision" and page_type in defaults:
            # the decision itself, in one plain sentence: the page's title
            out.append(self.section(page_type, page_type, [f"{subject.title}."], subject.memories[:1]))
        elif subject.address and "address" in self.conventions.derivations and defaults:
            out.append(self.section(page_type, defaults[0], ["=address"], subject.places or subject.memories))
        elif subject.kind in ("", "person") and defaults and defaults[0] != log:
            lead = _third_person(subject, memories)
            if lead is not None:
                source = next(m.handle for m in memories if lead.rstrip(".")[:40] in _FILLER.sub("", m.text))
                out.append(self.section(page_type, defaults[0], [lead], [source]))
        lines, refs = self.lines(subject)
        if len(subject.memories) >= SPAN_FROM and "span" in self.conventions.derivations and not extra:
            lines.insert(0, "=span")  # how many records and the days they span, written by the compiler
        lines += [f"- {quote}" for quote, _ in extra]
        refs += [handle for _, handle in extra if handle]
        if lines:
            out.append(self.section(page_type, log, lines, refs))
        if subject.places and "visits" in defaults and "visits" in self.conventions.derivations:
            out.append(self.section(page_type, "visits", ["=visits"], subject.places))
        return out

    # ---- decisions

    def place(self, subject: Subject) -> None:
        page = self.page_for(subject)
        mention = self.mention_for(subject)
        if page is not None:
            self.update(subject, page)
            self.ends[subject.key] = page.handle
            return
        if mention is not None:
            self.consumed.add(mention.handle)
            if self.promotable(mention.count + len(subject.memories), mention.last_seen):
                self.promote(subject, mention)
            else:
                self.hold(subject)
            return
        if len(subject.memories) >= self.conventions.new_page_min_records or subject.type == "decision":
            self.create(subject)
        else:
            self.hold(subject)

    def update(self, subject: Subject, page: Page) -> None:
        entry = self.updates.setdefault(page.handle, {"page": page.handle, "sections": {}, "aliases": []})
        log = next((s.slug for s in page.sections if s.slug == _log_section(self.conventions, page.type)),
                   _log_section(self.conventions, page.type))
        lines, refs = self.lines(subject)
        section = entry["sections"].setdefault(log, {"lines": [], "refs": []})
        section["lines"] += [line for line in lines if line not in section["lines"]]
        section["refs"] += refs
        if subject.places and page.type == "entity" and "visited" in self.conventions.derivations:
            visits = entry["sections"].setdefault("visits", {"lines": ["=visited"], "refs": []})
            visits["refs"] += subject.places
        known = {fold(page.title), *map(fold, page.aliases), *map(fold, entry["aliases"])}
        for spelling in subject.spellings:
            if fold(spelling) not in known and spelling[:1].isupper():
                entry["aliases"].append(spelling)
                known.add(fold(spelling))

    def line_text(self, line: str) -> str:
        if line.startswith("@"):
            memory = self.by_handle.get(line[1:].split(":", 1)[0])
            return first_sentence(memory.text) if memory else ""
        return line.split(": ", 1)[-1]

    def create(self, subject: Subject) -> None:
        title = subject.title
        page: dict[str, Any] = {"type": subject.type, "title": title, "slug": kebab(title)}
        summary = self.summary(subject)
        if summary:
            page["summary"] = summary
        aliases = [s for s in subject.spellings if fold(s) != fold(title) and s[:1].isupper()]
        if aliases:
            page["aliases"] = aliases
        page["sections"] = self.page_sections(subject, subject.type)
        self.new_pages.append(page)
        self.ends[subject.key] = f"{subject.type}/{page['slug']}"

    def summary(self, subject: Subject) -> str | None:
        if subject.role == "trip":
            return f"Trip: {subject.title}."
        if subject.role == "city":
            return f"City: {subject.title}."
        if subject.kind and subject.kind not in ("person", subject.type):
            return f"{_humanize(subject.kind)}{f' in {subject.city}' if subject.city else ''}."
        return None

    def promote(self, subject: Subject, mention) -> None:  # noqa: ANN001
        page_type = mention.suggested_type if mention.suggested_type in self.conventions.page_types else subject.type
        title = subject.title
        extra = [(s.quote, s.handle or "") for s in mention.sightings if s.quote]
        self.promotions.append({"mention": mention.handle, "type": page_type, "title": title, "slug": kebab(title),
                                "reason": f"Seen {mention.count + len(subject.memories)} times, the latest recently.",
                                "sections": self.page_sections(subject, page_type, extra)})
        self.ends[subject.key] = f"{page_type}/{kebab(title)}"

    def hold(self, subject: Subject) -> None:
        for handle in subject.memories:
            memory = self.by_handle[handle]
            spelling = next((s for s in subject.spellings if fold(s) in fold(memory.text) or handle
                             in subject.from_metadata), subject.title)
            entry: dict[str, Any] = {"name": spelling, "type": subject.type, "ref": handle}
            turn = self.turns.get(handle)
            said = turn.sentences if turn is not None and turn.sentences else sentences(memory.text)
            naming = next((s for s in said if _names_it(s, subject)), said[0] if said else "")
            first = sentences(memory.text)[:1]
            if not self.conventions.omit_held_quote or (naming and [naming] != first):
                entry["quote"] = naming
            self.held.append(entry)

    def lint_promotions(self) -> None:
        for handle in self.request.promotion_candidates:
            mention = next(m for m in self.request.mentions if m.handle == handle)
            if handle in self.consumed or not self.promotable(mention.count, mention.last_seen):
                continue
            quotes = [(s.quote, s.handle or "") for s in mention.sightings if s.quote]
            if not quotes:
                continue
            page_type = mention.suggested_type if mention.suggested_type in self.conventions.page_types else "entity"
            log = _log_section(self.conventions, page_type)
            lines = list(dict.fromkeys(f"- {quote}" for quote, _ in quotes))
            self.promotions.append({"mention": handle, "type": page_type, "title": mention.alias,
                                    "slug": kebab(mention.alias), "reason": f"Seen {mention.count} times.",
                                    "sections": [self.section(page_type, log, lines, [h for _, h in quotes if h])]})

    # ---- links

    def links(self, subjects: list[Subject]) -> list[list[Any]]:
        wanted: dict[tuple[str, str], list[str]] = {}
        for subject in subjects:
            source = self.ends.get(subject.key)
            if source is None:
                continue
            for other in subjects:
                target = self.ends.get(other.key)
                if target is None or target == source or not set(subject.memories) & set(other.memories):
                    continue
                if subject.role == "place" and other.role == "city" and fold(subject.city) in other.names:
                    wanted.setdefault((target, f"Located in {other.title}."), []).append(source)
                elif other.role == "trip" and subject.role not in ("trip", "city") and \
                        set(subject.memories) & set(other.memories):
                    wanted.setdefault((target, f"Part of {other.title}."), []).append(source)
        out: list[list[Any]] = []
        for (target, context), sources in wanted.items():
            sources = list(dict.fromkeys(sources))
            if self.conventions.grouped_links:
                out.append([sources if len(sources) > 1 else sources[0], target, context])
            else:
                out += [[source, target, context] for source in sources]
        return out

    # ---- the reply

    def page_out(self, page: dict[str, Any]) -> dict[str, Any]:
        if self.conventions.omit_default_slug and page.get("slug") == kebab(page["title"]) and \
                page["title"].isascii():
            page = {key: value for key, value in page.items() if key != "slug"}
        return page

    def reply(self, subjects: list[Subject]) -> dict[str, Any]:
        updates = []
        for entry in self.updates.values():
            sections = []
            for slug, body in entry["sections"].items():
                section: dict[str, Any] = {"slug": slug, "lines": body["lines"]}
                if body["refs"]:
                    section["refs"] = list(dict.fromkeys(body["refs"]))
                if body.get("supersede"):
                    section["supersede"] = body["supersede"]
                sections.append(section)
            updates.append({"page": entry["page"], **({"aliases": entry["aliases"]} if entry["aliases"] else {}),
                            "sections": sections})
        return {"updates": updates, "new_pages": [self.page_out(p) for p in self.new_pages], "held": self.held,
                "promotions": [self.page_out(p) for p in self.promotions], "links": self.links(subjects)}


def plan(request: LeafRequest) -> dict[str, Any]:
    """The compact reply a careful model writes for this request."""
    planner = Planner(request)
    subjects = collect(request.memories, planner.turns)
    for subject in subjects:
        planner.place(subject)
    planner.lint_promotions()
    return planner.reply(subjects)


def as_arrays(answer: dict[str, Any], conventions: Conventions) -> dict[str, Any]:
    """The reply with each section that has nothing but a slug, lines and refs written as an array,
    when the prompt allows it (done last: the lying mode and the faults read sections as objects)."""
    if not conventions.arrays:
        return answer
    for key in ("updates", "new_pages", "promotions"):
        for page in answer.get(key) or []:
            if isinstance(page, dict) and isinstance(page.get("sections"), list):
                page["sections"] = [
                    [s["slug"], s.get("lines", []), *([s["refs"]] if s.get("refs") else [])]
                    if isinstance(s, dict) and "slug" in s and set(s) <= {"slug", "lines", "refs"} else s
                    for s in page["sections"]]
    return answer
