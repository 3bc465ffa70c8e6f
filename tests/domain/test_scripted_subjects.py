"""collect_subjects keeps what it compares subjects by as sightings arrive, and memoises the ladder's
verdicts: it must group exactly as reading every sighting again at each comparison does.

The reference below is that plain reading (each subject's title, side and cities recomputed from all
its sightings for every name of every memory). Both run over seeded random slices of the sample
generator's corpora (spelling variants, places in two cities, names read from text), and must give
the same subjects: type, kind, title, memories, names and variant spellings.
"""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime

import pytest

from domain.aliases import best_attested, normalize_alias
from domain.context import MemoryRecord
from domain.memory import MemoryIn
from domain.merge_questions import MergeSide
from planners.scripted.matching import same_subject, subject_side
from planners.scripted.subjects import Hint, Subject, collect_subjects, hints_of, place_of
from sample.corpus import generate_sample


def reference_side(subject: Subject, summary: str) -> MergeSide:
    return subject_side(best_attested(subject.spellings), subject.type, [*subject.spellings, *subject.hint_aliases],
                        summary, [s.memory.content for s in subject.sightings],
                        [place_of(s.memory) for s in subject.sightings if s.is_place or s.is_city])


def reference_elsewhere(subject: Subject, hint: Hint, memory: MemoryRecord) -> bool:
    city = normalize_alias(str(place_of(memory).get("city") or "")) if hint.is_place else ""
    cities = {normalize_alias(str(place_of(s.memory).get("city") or "")) for s in subject.sightings if s.is_place}
    return bool(city) and bool(cities - {""}) and city not in cities


def reference_subjects(memories: list[MemoryRecord]) -> list[Subject]:
    subjects: list[Subject] = []
    for index, memory in enumerate(memories):
        for hint in hints_of(memory):
            names, probe = hint.names(), Subject(type=hint.type, kind=hint.kind)
            probe.add(index, memory, hint)
            seen = reference_side(probe, hint.kind)
            matching = [s for s in subjects if s.type == hint.type and not reference_elsewhere(s, hint, memory)
                        and (s.names & names or same_subject(seen, reference_side(s, s.kind)))]
            if matching:
                subject = matching[0]
                for other in matching[1:]:
                    subject.absorb(other)
                    subjects.remove(other)
            else:
                subject = Subject(type=hint.type, kind=hint.kind)
                subjects.append(subject)
            subject.add(index, memory, hint)
    return sorted(subjects, key=lambda s: (s.sightings[0].memory_index, normalize_alias(best_attested(s.spellings))))


def described(subject: Subject, title: str, variants: list[str]) -> tuple:
    return (subject.type, subject.kind, title, subject.memory_ids, sorted(subject.names), variants)


def records(count: int, seed: int) -> list[MemoryRecord]:
    out = []
    for index, row in enumerate(generate_sample(count, seed)):
        memory = MemoryIn.model_validate(row)
        at = memory.occurred_at or datetime(2026, 1, 1, tzinfo=UTC)
        out.append(MemoryRecord(id=uuid.uuid5(uuid.NAMESPACE_OID, f"{seed}/{index}"), content=memory.content,
                                metadata=memory.metadata, created_at=at, updated_at=at))
    return out


@pytest.mark.parametrize("seed", range(8))
def test_the_subjects_are_those_a_plain_reading_finds(seed: int) -> None:
    rng = random.Random(seed)
    corpus = records(rng.choice([200, 300, 400]), seed)
    # A section's memories: a random slice of the corpus, or everything naming one of its names.
    named = rng.choice([h.name for m in corpus[:50] for h in hints_of(m)])
    chosen = ([m for m in corpus if any(h.name == named for h in hints_of(m))] if rng.random() < 0.5 else
              sorted(rng.sample(corpus, rng.randint(20, len(corpus) // 2)), key=corpus.index))
    fast = collect_subjects(chosen)
    plain = reference_subjects(chosen)
    assert [described(s, s.title, s.variant_spellings(set())) for s in fast] == [
        described(s, best_attested(s.spellings), _variants(s)) for s in plain]


def _variants(subject: Subject) -> list[str]:
    variants: dict[str, str] = {}
    for raw in [*subject.spellings, *subject.hint_aliases]:
        key = normalize_alias(raw)
        if key and key not in variants:
            variants[key] = raw
    return list(variants.values())
