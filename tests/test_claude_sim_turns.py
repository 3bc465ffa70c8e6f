"""The Claude simulator reads conversation turns by the leaf prompt's contract: each speaker one subject
however addressed, first-person words the speaker's (written in the third person with the verb a writer
would fix), "you" the person spoken to, greetings, thanks, questions and reactions no line, an
assistant's turn a fact about the user only when the user's next turn confirms it, every line citing its
turns. Checked on seeded generated conversations (speakers of many cultures, nicknames, random mixes of
turns), through the brain and through the anthropic SDK over HTTP."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from uuid import UUID

import pytest
from nicknames import NickNamer

from app.worker import build_model_client
from claude_sim import ClaudeSimulator, brain, judge
from claude_sim.third_person import third_person
from domain.context import MemoryRecord, PlannerContext
from planners.claude_planner import ClaudePlanner
from planners.compact_plan import PLANNER_REPLY_SCHEMA
from planners.leaf_prompt import build_planner_prompt
from tests.compile.helpers import test_settings

SPEAKERS = ["Priya Raman", "Caroline", "Melanie", "Kwame Mensah", "Sofía García", "Hiroshi Tanaka", "Olga Petrova",
            "Ahmed Hassan", "Robert", "Katherine", "Jonathan", "Elizabeth", "Giovanni Rossi", "Ingrid", "Aisha Bello",
            "Nikolai", "Mei Lin", "Joseph", "Margaret", "Tomasz Nowak"]
PLACES = ["Lisbon", "Nairobi", "Osaka", "Cusco", "Tbilisi", "Reykjavik", "Hanoi", "Accra"]
# (first person, third person with {S} for the speaker): forms a writer changes, and forms that stay.
STATEMENTS = [
    ("I adopted a second cat.", "{S} adopted a second cat."),
    ("I painted a sunrise over the lake last week.", "{S} painted a sunrise over the lake last week."),
    ("I am a nurse at the children's hospital.", "{S} is a nurse at the children's hospital."),
    ("I'm training for a marathon in {place}.", "{S} is training for a marathon in {place}."),
    ("I've been learning the cello for two years.", "{S} has been learning the cello for two years."),
    ("I have three brothers and a sister.", "{S} has three brothers and a sister."),
    ("I love hiking in the mountains.", "{S} loves hiking in the mountains."),
    ("I really enjoy baking sourdough bread.", "{S} really enjoys baking sourdough bread."),
    ("I teach pottery on weekends.", "{S} teaches pottery on weekends."),
    ("I'll visit {place} next month.", "{S} will visit {place} next month."),
    ("My daughter started school in September.", "{S}'s daughter started school in September."),
    ("My brother moved to {place}.", "{S}'s brother moved to {place}."),
    ("We moved to a bigger apartment.", "{S} and others moved to a bigger apartment."),
    ("Our garden is full of tomatoes this year.", "{S}'s garden is full of tomatoes this year."),
    ("I don't eat meat anymore.", "{S} doesn't eat meat anymore."),
    ("I went to {place} with my mom.", "{S} went to {place} with {S}'s mom."),
]
GREETINGS = ["Hey {to}!", "Hi {to}!", "Hello {to}!", "Thanks, {to}!", "Thank you so much, {to}!",
             "Good morning, {to}!", "Hey there, {to}."]
QUESTIONS = ["How was your weekend?", "What did you do next?", "Did you like it?", "How are the kids?",
             "Have you ever been to {place}?"]
REACTIONS = ["Aww!", "Wow!", "Yum!", "Bummer.", "That's so cool!", "Sounds fun!", "Oh no!", "Haha.",
             "That sounds amazing!", "Awesome."]
PRAISE = ["You're so talented.", "You did an amazing job.", "You are such a good friend."]
NOT_NAMES = {"hey", "hi", "hello", "thanks", "thank", "good", "aww", "wow", "yum", "bummer", "oh", "haha",
             "awesome", "sounds", "that"}
FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'll|I'd|me|my|mine|myself|we|our|us)\b", re.IGNORECASE)
_NICKNAMES = NickNamer()


@dataclass
class Said:
    speaker: str
    text: str
    role: str | None = None
    facts: list[str] = field(default_factory=list)  # what the turn states, in the third person
    about: str = ""  # whose page those facts belong on


def address(name: str, rng: random.Random) -> str:
    """How the other speaker calls `name`: their first name, or a nickname of it."""
    first = name.split()[0]
    nicknames = sorted(n.capitalize() for n in _NICKNAMES.nicknames_of(first.lower()) if len(n) > 2)
    return rng.choice([first, *nicknames[:2]])


def conversation(rng: random.Random, turns: int) -> list[Said]:
    """Two speakers taking turns: greetings, statements, questions, reactions and praise mixed at random."""
    a, b = rng.sample(SPEAKERS, 2)
    out = []
    for index in range(turns):
        speaker, other = (a, b) if index % 2 == 0 else (b, a)
        parts: list[str] = []
        facts: list[str] = []
        if rng.random() < 0.4:
            parts.append(rng.choice(GREETINGS).format(to=address(other, rng)))
        if rng.random() < 0.3:
            parts.append(rng.choice(REACTIONS))
        for first, third in rng.sample(STATEMENTS, rng.choice([0, 1, 1, 2])):
            place = rng.choice(PLACES)
            parts.append(first.format(place=place))
            facts.append(third.format(place=place, S=speaker))
        if rng.random() < 0.2:
            parts.append(rng.choice(PRAISE))
        if rng.random() < 0.4:
            parts.append(rng.choice(QUESTIONS).format(place=rng.choice(PLACES)))
        if not parts:
            parts.append(rng.choice(REACTIONS))
        if rng.random() < 0.15 and facts:  # the other speaker named by a nickname inside a statement
            place = rng.choice(PLACES)
            parts.append(f"{address(other, rng)} and I went to {place} together.")
            facts.append(f"{other} and {speaker} went to {place} together.")
        out.append(Said(speaker=speaker, text=" ".join(parts), facts=facts, about=speaker))
    return out


def with_assistant(rng: random.Random, user: str) -> list[Said]:
    """A user and an assistant: the assistant says something of the user; the user confirms or not."""
    day = rng.choice(["Monday", "Friday", "June 3", "the 14th"])
    thing = rng.choice(["a dentist appointment", "a flight to Osaka", "a piano lesson", "a team dinner"])
    confirmed = rng.random() < 0.5
    reply = rng.choice(["Yes, that's right.", "Yeah, thanks!", "Exactly."]) if confirmed else \
        rng.choice(["No, that was cancelled.", "Hmm, not sure.", "What time was it?"])
    return [Said(user, rng.choice(["Hi! Can you check my calendar?", "What's coming up?"]), "user"),
            Said("Assistant", f"You have {thing} on {day}.", "assistant",
                 [f"{user} has {thing} on {day}."] if confirmed else [], user),
            Said(user, reply, "user")]


def records(talk: list[Said], conversation_id: str = "c1", start: int = 1) -> list[MemoryRecord]:
    when = datetime(2026, 5, 2, 9, tzinfo=UTC)
    return [MemoryRecord(id=UUID(int=start + i), content=f"{s.speaker}: {s.text}", created_at=when + timedelta(minutes=i),
                         updated_at=when, speaker=s.speaker, speaker_role=s.role, conversation=conversation_id,
                         position=i) for i, s in enumerate(talk)]


def simulated_plan(memories: list[MemoryRecord]) -> tuple[dict[str, Any], dict[str, str]]:
    """The brain's plan, its sections as [slug, lines, refs], and the handle of each record's id."""
    context = PlannerContext(tenant_id="t", owner_id="o", memories=memories, candidate_pages=[], open_mentions=[],
                             promotion_candidate_ids=[])
    prompt = build_planner_prompt(context)
    reply = brain.answer(system=prompt.system, messages=[{"role": "user", "content": prompt.user}],
                         tools=[{"name": "submit_plan", "input_schema": PLANNER_REPLY_SCHEMA}],
                         tool_choice={"type": "tool", "name": "submit_plan"})
    assert not reply.confused, reply.confused
    return reply.answer, {prompt.handles.memory(m.id): str(m.id) for m in memories}


def sections(page: dict[str, Any]) -> list[tuple[list[str], list[str]]]:
    out = []
    for section in page["sections"]:
        if isinstance(section, list):
            out.append((section[1], section[2] if len(section) > 2 else []))
        else:
            out.append((section.get("lines", []), section.get("refs", [])))
    return out


@pytest.mark.parametrize("seed", range(12))
def test_generated_conversations_give_each_speaker_one_page_in_the_third_person_citing_its_turns(seed) -> None:
    rng = random.Random(seed)
    talk = conversation(rng, rng.randint(8, 24))
    answer, ids = simulated_plan(records(talk))
    by_handle = {handle: index for index, handle in enumerate(ids)}
    speakers = {s.speaker for s in talk}
    stating = {sp: [i for i, s in enumerate(talk) if s.facts and s.speaker == sp] for sp in speakers}

    titles = [p["title"] for p in answer["new_pages"]]
    named = titles + [h["name"] for h in answer["held"]]
    # One subject per speaker, never a nickname or first name of its own, never a greeting or reaction.
    for speaker in speakers:
        assert titles.count(speaker) == (1 if len(stating[speaker]) >= 2 else 0), (speaker, titles)
        forms = {speaker.split()[0], *(n.capitalize() for n in _NICKNAMES.nicknames_of(speaker.split()[0].lower()))}
        assert not (set(named) & (forms - {speaker})), named
    assert not {n.lower() for n in named} & NOT_NAMES, named

    cited: set[int] = set()
    for page in answer["new_pages"]:
        for lines, refs in sections(page):
            cited |= {by_handle[r] for r in refs}
            for line in lines:
                if line.startswith("="):
                    continue
                assert not FIRST_PERSON.search(line.split(": ", 1)[1]), line
                assert not re.search(r"\b(?:hey|hi|hello|thanks|thank you)\b", line, re.IGNORECASE), line
                assert "?" not in line, line
    # Every turn that states something is cited (on a page, or held for its speaker); nothing else is.
    held = {by_handle[h["ref"]] for h in answer["held"]}
    assert cited | held >= {i for i, s in enumerate(talk) if s.facts}
    assert not (cited | held) & {i for i, s in enumerate(talk) if not s.facts}
    # What each turn states is on its speaker's page, in the third person, with the verb agreed.
    for page in answer["new_pages"]:
        text = " ".join(line for lines, _ in sections(page) for line in lines)
        for said in talk:
            if said.about == page["title"]:
                for fact in said.facts:
                    assert fact in text, (fact, text)
        for said in talk:  # praise said to someone is no fact on the speaker's page
            if said.speaker == page["title"]:
                assert "so talented" not in text and "amazing job" not in text and "good friend" not in text


@pytest.mark.parametrize("seed", range(8))
def test_an_assistants_turn_is_a_fact_about_the_user_only_when_the_user_confirms_it(seed) -> None:
    rng = random.Random(1000 + seed)
    user = rng.choice(SPEAKERS)
    talk = [said for _ in range(rng.randint(2, 4)) for said in with_assistant(rng, user)]
    answer, ids = simulated_plan(records(talk))
    handles = list(ids)
    named = [p["title"] for p in answer["new_pages"]] + [h["name"] for h in answer["held"]]
    assert "Assistant" not in named
    pages = [p for p in answer["new_pages"] if p["title"] == user]
    cited = {ref for page in pages for _, refs in sections(page) for ref in refs} | \
        {h["ref"] for h in answer["held"] if h["name"] == user}
    text = " ".join(line for page in pages for lines, _ in sections(page) for line in lines)
    for index, said in enumerate(talk):
        if said.role == "assistant" and said.facts:
            assert handles[index] in cited and (not pages or handles[index + 1] in cited)
            assert not pages or said.facts[0] in text, (said.facts, text)
        elif said.role == "assistant":
            assert handles[index] not in cited
        elif not said.facts:
            # the user's own turns here state nothing (a greeting, a question, a bare "yes")
            assert handles[index] not in cited or talk[index - 1].facts


@pytest.mark.parametrize(("said", "speaker", "to", "written"), [
    ("I am happy.", "Ana", "Bo", "Ana is happy."),
    ("I'm so proud of you!", "Ana", "Bo", "Ana is so proud of Bo."),
    ("I hope you are well.", "Ana", "Bo", "Ana hopes Bo is well."),
    ("I'll let you know.", "Ana", "Bo", "Ana will let Bo know."),
    ("My kids and I love camping.", "Ana", "Bo", "Ana's kids and Ana love camping."),
    ("I'm tired and I want coffee.", "Ana", "Bo", "Ana is tired and Ana wants coffee."),
    ("I'd been there before.", "Ana", "Bo", "Ana had been there before."),
    ("I haven't seen it.", "Ana", "Bo", "Ana hasn't seen it."),
    ("You were right.", "Ana", None, None),
    ("The bus was late.", "Ana", "Bo", None),
])
def test_a_sentence_is_written_in_the_third_person_with_the_verb_a_writer_would_fix(said, speaker, to, written) -> None:
    assert third_person(said, speaker, to) == written


async def test_through_the_sdk_the_planner_gets_third_person_lines_citing_the_turns(sim: ClaudeSimulator) -> None:
    rng = random.Random(7)
    talk = conversation(rng, 16)
    memories = records(talk)
    settings = test_settings(WIKI_LLM="anthropic", ANTHROPIC_API_KEY=next(iter(sim.config.api_keys)))
    gateway = build_model_client(settings)
    try:
        reply = await ClaudePlanner(gateway).plan_batch(
            PlannerContext(tenant_id="t", owner_id="o", memories=memories, candidate_pages=[], open_mentions=[],
                           promotion_candidate_ids=[]), settings.model_id)
    finally:
        await gateway.aclose()
    assert [c.kind for c in sim.calls] == ["planner"]
    plan = reply.plan
    speakers = {s.speaker for s in talk if sum(1 for t in talk if t.facts and t.speaker == s.speaker) >= 2}
    assert {p.title for p in plan.newPages} >= speakers
    ids = {str(m.id): i for i, m in enumerate(memories)}
    for page in plan.newPages:
        if page.title not in speakers:
            continue
        body = " ".join(s.body_md for s in page.sections)
        assert not FIRST_PERSON.search(re.sub(r"\d{4}-\d{2}-\d{2}", "", body)), body
        cited = {ids[ref] for s in page.sections for ref in s.source_refs}
        # its speaker's turns that state something, and the other speaker's that name them
        assert cited == {i for i, s in enumerate(talk) if any(page.title in fact for fact in s.facts)}
        for index in cited:
            for fact in talk[index].facts:
                assert fact in body or talk[index].speaker != page.title and page.title not in fact


@pytest.mark.parametrize("seed", range(4))
def test_the_simulated_judge_reads_a_turn_as_its_speaker_said_it(seed) -> None:
    """The claim judge accepts the third-person lines a turn gives (the speaker for "I", the other for
    "you") and rejects the same line said of the other speaker."""
    rng = random.Random(500 + seed)
    talk = conversation(rng, 20)
    memories = records(talk)
    answer, ids = simulated_plan(memories)
    by_id = {str(m.id): m for m in memories}
    honest = rejected = swapped = caught = 0
    for page in answer["new_pages"]:
        for lines, refs in sections(page):
            cited = [by_id[ids[ref]] for ref in refs]
            for line in (x for x in lines if not x.startswith("=")):
                said = line.split(": ", 1)[1]
                honest += 1
                memory = next((m for m in cited if judge.read(said, [m.content], page["title"]).supported), None)
                if memory is None:
                    rejected += 1
                    continue
                speaker = memory.speaker or ""
                other = next(s.speaker for s in talk if s.speaker != speaker)
                if said.startswith(f"{speaker} ") and other not in said:
                    swapped += 1  # the same line said of the other speaker
                    lie = said.replace(speaker, other)
                    caught += 0 if judge.read(lie, [memory.content], page["title"]).supported else 1
    assert honest and rejected <= 0.05 * honest, (rejected, honest)
    # The rule-based judge finds who acts in a sentence by its opening name; a compound subject
    # ("Priya and others moved") hides it, so a few swaps pass.
    assert swapped and caught >= 0.8 * swapped, (caught, swapped)
