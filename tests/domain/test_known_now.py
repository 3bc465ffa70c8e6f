"""What is known now of a page's subject (planners/scripted/known_now.py), on lines composed at random."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta

import pytest

from domain.context import MemoryRecord
from planners.scripted.condense import linked_size, log_body
from planners.scripted.known_now import known_now
from planners.section_edits import SECTION_BUDGET_CHARS

_NAMES = ("Ilse", "Tomasz", "Amara", "Keoni", "Saoirse", "Dmitri", "Yuki", "Ines")
_PLACES = ("Tromsø", "Valparaíso", "Cluj", "Hobart", "Ghent", "Oaxaca")
_RELATIONS = ("sister", "husband", "dog", "cat", "mother", "son", "neighbor", "boss")
_FILLER = ("baked bread", "repainted the fence", "read about glaciers", "fixed a bicycle", "planted tulips")


@pytest.mark.parametrize("seed", range(10))
def test_the_newest_value_of_each_fact_and_the_relations_of_the_subject_are_known_now(seed: int) -> None:
    rng = random.Random(seed)
    subject, other = rng.sample(_NAMES, 2)
    texts: list[str] = []
    homes: list[int] = []
    relations: dict[str, int] = {}
    for _ in range(rng.randint(15, 40)):
        roll = rng.random()
        if roll < 0.15:
            homes.append(len(texts))
            texts.append(f"{subject} moved to {rng.choice(_PLACES)}.")
        elif roll < 0.3:
            relation = rng.choice(_RELATIONS)
            relations[relation] = len(texts)
            texts.append(f"{subject} went out with her {relation}.")
        elif roll < 0.45:  # about someone else: never what is known of the subject
            texts.append(f"{other} moved to {rng.choice(_PLACES)} with her {rng.choice(_RELATIONS)}.")
        else:
            texts.append(f"{subject} {rng.choice(_FILLER)}.")

    chosen = known_now(texts, subject)

    assert all(texts[position].startswith(subject) for position in chosen)
    if homes:
        assert homes[-1] in chosen and not set(homes[:-1]) & set(chosen) - set(relations.values())
    newest = sorted(relations.values(), reverse=True)[:4]
    assert set(newest) <= set(chosen)


def test_a_fact_said_once_long_ago_opens_the_section_of_a_busy_page() -> None:
    base = datetime(2025, 1, 1, tzinfo=UTC)
    contents = ["Ines lives in Ghent.", *(f"Ines logged practice session {n} of the cello suite." for n in range(80))]
    memories = [MemoryRecord(id=uuid.UUID(int=n + 1), content=text, metadata={}, created_at=base + timedelta(days=n),
                             updated_at=base) for n, text in enumerate(contents)]

    lines = log_body(memories, "Ines").splitlines()

    assert lines[1] == "- 2025-01-01: Ines lives in Ghent."


def test_what_is_known_now_never_passes_the_section_bound() -> None:
    base = datetime(2025, 1, 1, tzinfo=UTC)
    long = " and ".join(["a very long clause about the weather and the hills"] * 4)
    relations = ("sister", "brother", "mother", "father", "aunt", "uncle", "cousin", "dog", "cat")
    contents = [f"Ines went out with her {relation}, {long}." for relation in relations]
    contents += [f"Ines lives in Ghent, {long}.", f"Ines works at Acme, {long}.", f"Ines works as a welder, {long}.",
                 f"Ines is married to Tomasz, {long}.", f"Ines's phone number is 555 0199, {long}.",
                 f"Ines's email address is changed to ines at example, {long}."]
    memories = [MemoryRecord(id=uuid.UUID(int=n + 1), content=text, metadata={}, created_at=base + timedelta(days=n),
                             updated_at=base) for n, text in enumerate(contents)]

    assert len(known_now([m.content for m in memories], "Ines")) >= 8  # about as much as the bound holds
    body = log_body(memories, "Ines")

    assert sum(linked_size(line) + 1 for line in body.splitlines()) <= SECTION_BUDGET_CHARS
