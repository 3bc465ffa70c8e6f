"""The rules of forgetting (domain/forget.py, planners/rederive.py) on generated sections: seeded,
randomly composed lines citing random sets of memories, some of them forgotten or edited."""

from __future__ import annotations

import json
import random

import pytest

from domain.aliases import normalize_alias
from domain.evidence import evidence_of
from domain.forget import (
    RederiveLine,
    RederiveMemory,
    RederiveTask,
    alias_goes,
    line_fate,
    remaining_sightings,
    splice,
)
from planners.rederive import (
    MEMORIES_SHOWN_PER_LINE,
    build_rederive_prompt,
    offline_body,
    parse_rederive_reply,
)

WORDS = ["river", "garden", "lantern", "harbor", "violin", "meadow", "copper", "falcon", "pepper", "timber",
         "orchid", "marble", "canyon", "saddle", "walnut", "ember"]
NAMES = ["Lena", "Sam", "Priya", "Omar", "Hana"]


def memory_text(rng: random.Random, nonce: str | None) -> str:
    words = rng.sample(WORDS, 4)
    if nonce:
        words.insert(rng.randint(0, 4), nonce)
    return f"{rng.choice(NAMES)} mentioned the {' '.join(words)}."


def generated(seed: int) -> tuple[RederiveTask, dict[str, str], set[str], set[str]]:
    """A section of 3 to 9 lines over 2 to 6 memories, the forgotten ones holding a word no other has;
    the task as a forget pass builds it (dropped lines out, redo lines with their remaining memories)."""
    rng = random.Random(seed)
    ids = [f"m{i}" for i in range(rng.randint(2, 6))]
    forgotten = set(rng.sample(ids, rng.randint(1, len(ids) - 1)))
    texts = {m: memory_text(rng, f"zq{seed}x{m}" if m in forgotten else None) for m in ids}
    section_lines: list[tuple[str, list[str]]] = []
    for _ in range(rng.randint(3, 9)):
        refs = sorted(rng.sample(ids, rng.randint(1, min(3, len(ids)))))
        base = texts[refs[0]] if rng.random() < 0.5 else " and ".join(texts[r].rstrip(".") for r in refs) + "."
        section_lines.append((f"- {base}", refs))
    lines = []
    for text, refs in section_lines:
        fate = line_fate(refs, forgotten, set())
        if fate == "dropped":
            continue
        remaining = [r for r in refs if r not in forgotten]
        lines.append(RederiveLine(text=text, redo=fate == "redo", memory_ids=remaining if fate == "redo" else []))
    task = RederiveTask(section_id="s", page_title="Lena", page_type="entity", slug="notes", heading="Notes",
                        lines=lines, memories=[RederiveMemory(id=m, content=texts[m], day=f"2026-03-0{i + 1}")
                                               for i, m in enumerate(ids) if m not in forgotten])
    return task, texts, forgotten, {f"zq{seed}x{m}" for m in forgotten}


@pytest.mark.parametrize("seed", range(40))
def test_the_offline_writer_keeps_what_is_not_redone_and_never_restates_a_forgotten_memory(seed):
    task, texts, forgotten, nonces = generated(seed)
    body = offline_body(task)
    kept = [line.text for line in task.lines if not line.redo]
    # Lines not citing a forgotten memory stay byte for byte, in order.
    assert [line for line in body.split("\n") if line in kept] == [t for t in kept if t in body.split("\n")]
    assert all(text in body.split("\n") for text in kept)
    # No word only a forgotten memory held survives a re-derivation.
    assert not any(nonce in body for nonce in nonces), body
    # Each re-derived line is either kept (its memories hold all its words) or quotes a remaining memory.
    remaining_text = " ".join(texts[m] for m in texts if m not in forgotten)
    for line in body.split("\n"):
        if line and line not in kept:
            words = [w.strip("-'") for w in normalize_alias(line).split()]
            assert all(word in normalize_alias(remaining_text) for word in words
                       if word and not word[0].isdigit()), line


@pytest.mark.parametrize("seed", range(20))
def test_line_fates_partition_every_claim(seed):
    rng = random.Random(seed)
    ids = [f"m{i}" for i in range(6)]
    forgotten, edited = set(rng.sample(ids, 2)), set(rng.sample(ids, 1))
    edited -= forgotten
    for _ in range(30):
        refs = rng.sample(ids, rng.randint(1, 4))
        fate = line_fate(refs, forgotten, edited)
        touched = set(refs) & (forgotten | edited)
        assert (fate == "kept") == (not touched)
        assert (fate == "dropped") == (set(refs) <= forgotten)


def test_splice_writes_a_line_two_replacements_share_once_and_drops_empty_ones():
    task = RederiveTask(section_id="s", page_title="T", page_type="entity", slug="notes", heading="Notes", lines=[
        RederiveLine(text="- kept one"), RederiveLine(text="- redo a", redo=True),
        RederiveLine(text="- redo b", redo=True), RederiveLine(text="- kept two")])
    assert splice(task, {1: ["- same", ""], 2: ["- same", "- other"]}) == "- kept one\n- same\n- other\n- kept two"
    assert splice(task, {}) == "- kept one\n- kept two"


def test_the_model_reply_is_read_for_marked_lines_only():
    task, *_ = generated(3)
    prompt = build_rederive_prompt(task)
    marked = [i for i, line in enumerate(task.lines) if line.redo]
    assert all(f"*{i + 1}| " in prompt for i in marked)
    reply = json.dumps({"rederived": [{"line": i + 1, "text": ["- [[Link]] new"]} for i in range(len(task.lines))]
                        + [{"line": 999, "text": ["- out of range"]}, {"line": "x"}]})
    parsed = parse_rederive_reply(task, reply)
    assert sorted(parsed) == marked and all(texts == ["- Link new"] for texts in parsed.values())
    with pytest.raises(ValueError):
        parse_rederive_reply(task, "{}")


def test_an_alias_goes_only_when_the_forgotten_memories_alone_named_it():
    forgotten = [evidence_of("f", "We call her Zee at the studio.", {}, None)]
    remaining = [evidence_of("r", "Zoe Park teaches pottery.", {}, None)]
    assert alias_goes("Zee", "Zoe Park", forgotten, remaining)
    assert not alias_goes("Zoe Park", "Zoe Park", forgotten, remaining)  # the title stays
    assert not alias_goes("pottery", "Zoe Park", forgotten, remaining)  # not named by the forgotten one
    assert not alias_goes("Zee", "Zoe Park", forgotten, [*remaining, evidence_of("r2", "Zee again.", {}, None)])


def test_sightings_of_the_forgotten_memories_leave_a_mention():
    samples = [{"quote": "a", "source_ref": "m1"}, {"quote": "b", "source_ref": "m2"}, "not a sighting"]
    kept, lost = remaining_sightings(samples, {"m1"})
    assert lost == 1 and kept == samples[1:]


def test_a_line_resting_on_many_memories_shows_the_latest_and_the_count_and_span_of_all():
    memories = [RederiveMemory(id=f"m{i}", content=f"Note {i} about the garden.", day=f"2026-01-{i + 1:02d}")
                for i in range(30)]
    task = RederiveTask(section_id="s", page_title="Garden", page_type="topic", slug="highlights",
                        heading="Highlights", memories=memories,
                        lines=[RederiveLine(text="- 31 notes, 2026-01-01 to 2026-01-31.", redo=True,
                                            memory_ids=[m.id for m in memories])])
    prompt = build_rederive_prompt(task)
    assert prompt.count("about the garden") == MEMORIES_SHOWN_PER_LINE
    assert "Note 29 about" in prompt and "Note 0 about" not in prompt
    assert f"(the latest {MEMORIES_SHOWN_PER_LINE} of 30 memories, 2026-01-01 to 2026-01-30)" in prompt
