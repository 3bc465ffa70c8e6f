"""A seeded corpus for the retrieval eval: plain-sentence memories about generated people, places and
events, shaped like an agent's real memory (a few subjects with hundreds of facts, many with a few),
and questions generated from them, each with its evidence memories and its answer.

Question kinds:
- `single`: one fact, asked in words that mostly come from the memory;
- `two_pages`: two facts about two different subjects in one question;
- `temporal`: "when did …" (answered by the memory's date), and "what did X do in <month year>";
- `paraphrase`: a unique event asked in words that share no content word with its memory (only its
  meaning connects them).

Nothing here is tuned on: a seed draws the names, the facts and the questions; the held-out seed's
corpus is never looked at while building recall, and its paraphrases are written apart from the
development seed's (a template the development seed tuned on never reaches the held-out one).
"""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime, timedelta

from pydantic import BaseModel

FIRST = ["Maya", "Tomas", "Ingrid", "Ravi", "Lucia", "Omar", "Hana", "Felix", "Nadia", "Bruno", "Keiko", "Elena",
         "Jonah", "Priya", "Mateo", "Sofia", "Anders", "Leila", "Viktor", "Amara", "Desmond", "Yusuf", "Greta",
         "Kofi", "Marisol", "Teodor", "Ines", "Arjun", "Birgit", "Caspian", "Dalia", "Emeka", "Fiona", "Gideon"]
LAST = ["Okafor", "Lindqvist", "Moreau", "Castellano", "Nakamura", "Haddad", "Petrov", "Oyelaran", "Brennan",
        "Sorensen", "Varga", "Quintero", "Abernathy", "Kowalczyk", "Delacroix", "Fairweather"]
CITIES = ["Lisbon", "Oslo", "Kyoto", "Valparaiso", "Tbilisi", "Edinburgh", "Marrakesh", "Ljubljana", "Hobart",
          "Cartagena", "Tallinn", "Hanoi", "Bergen", "Porto", "Quebec", "Krakow"]
BREEDS = ["beagle", "greyhound", "terrier", "spaniel", "dachshund", "collie", "poodle", "whippet"]
PETS = ["Biscuit", "Juniper", "Pickle", "Waffles", "Clementine", "Otis", "Pepper", "Mochi", "Ziggy", "Bramble"]
INSTRUMENTS = ["cello", "ukulele", "clarinet", "banjo", "harp", "trombone", "accordion", "mandolin"]
CAUSES = ["mental health", "clean rivers", "childhood cancer", "refugee housing", "animal rescue", "literacy"]
DISHES = ["mushroom risotto", "lamb tagine", "pad thai", "shakshuka", "beef rendang", "paella", "pierogi"]
BOOKS = [("The Glass Orchard", "Mirela Dunne"), ("Salt and Thunder", "Ade Cole"), ("A Map of Small Hours",
         "Ines Vail"), ("The Lantern Keeper", "Tobias Reyes"), ("Winter Harbour", "Solveig Amund"),
         ("Paper Comets", "Lio Marchetti")]
CAFES = ["Copper Kettle", "Blue Heron", "Moss and Bean", "The Daily Grind", "Little Fig", "Ember Roasters"]
JOBS = ["nurse", "architect", "pastry chef", "data analyst", "park ranger", "translator", "sound engineer"]
COMPANIES = ["Northwind Labs", "Halcyon Freight", "Bright Meadow Foods", "Orbital Tiles", "Quarry Lane Studio"]
COLORS = ["red", "teal", "yellow", "silver", "olive", "navy"]
VEHICLES = ["bicycle", "scooter", "van", "hatchback", "kayak"]
FILLER = ["{s} went for a long walk after dinner.", "{s} spent the evening tidying the flat.",
          "{s} had a slow morning with coffee and the news.", "{s} watched a documentary about volcanoes.",
          "{s} called their mother for an hour.", "{s} worked late to finish a report.",
          "{s} did the weekly grocery shopping.", "{s} stayed in because of the rain.",
          "{s} tried a new stretching routine.", "{s} fixed the squeaky hallway door."]

# (memory, question, answer): the question shares no content word with the memory. The development
# seed's paraphrases; the held-out seeds get their own (HELD_OUT_PARAPHRASES), never seen in development.
DEVELOPMENT_SEED = 11
PARAPHRASES = [
    ("{s}'s violin was stolen on the tram.", "Whose musical instrument went missing during a commute?", "{s}"),
    ("{s} fractured a wrist while skiing.", "Who broke a bone on the slopes?", "{s}"),
    ("{s} won the regional chess tournament.", "Who took first prize at a board game competition?", "{s}"),
    ("{s} planted forty tulip bulbs in the allotment.", "Who put flowers into the ground?", "{s}"),
    ("{s} quit smoking after twenty years.", "Who gave up cigarettes?", "{s}"),
    ("{s} baked sourdough every Sunday morning.", "Who makes bread at weekends?", "{s}"),
    ("{s} adopted two kittens from a farm.", "Who took in some young cats?", "{s}"),
    ("{s} repainted the kitchen a pale green.", "Who redecorated a room of their home?", "{s}"),
    ("{s} lost a wallet at the stadium.", "Who misplaced money at a football match?", "{s}"),
    ("{s} joined a choir at the community centre.", "Who sings with a group?", "{s}"),
    ("{s} passed the driving test on the third attempt.", "Who finally earned a licence to operate a car?", "{s}"),
    ("{s} sprained an ankle hiking near the glacier.", "Who hurt a foot on a mountain trail?", "{s}"),
]
HELD_OUT_PARAPHRASES = [
    ("{s}'s laptop crashed the night before the deadline.", "Whose computer failed just before work was due?", "{s}"),
    ("{s} ran a marathon in under four hours.", "Who completed a long-distance race quickly?", "{s}"),
    ("{s} learned to knit scarves over the winter.", "Who picked up a yarn craft during the cold months?", "{s}"),
    ("{s} got stung by a wasp at the picnic.", "Which person was hurt by an insect while eating outdoors?", "{s}"),
    ("{s} volunteered at the food bank every Tuesday.", "Who gives free help handing out groceries weekly?", "{s}"),
    ("{s} bought a telescope to watch the planets.", "Who purchased equipment for stargazing?", "{s}"),
    ("{s} missed the flight because of traffic.", "Whose plane departed without them after a jam on the roads?",
     "{s}"),
    ("{s} renovated the bathroom with new tiles.", "Who remodelled a washroom?", "{s}"),
    ("{s} adopted a tortoise from a neighbour.", "Who took in a slow reptile?", "{s}"),
    ("{s} fainted during the summer heatwave.", "Who passed out when temperatures soared?", "{s}"),
    ("{s} started composting kitchen scraps.", "Who turns food waste into soil?", "{s}"),
    ("{s} lost a tooth playing hockey.", "Who had dental damage from an ice sport?", "{s}"),
]


class EvalMemory(BaseModel):
    id: str
    content: str
    occurred_at: datetime


class EvalQuestion(BaseModel):
    kind: str
    question: str
    answers: list[str]  # each must appear in the returned text
    evidence: list[str]  # memory ids


class RecallCorpus(BaseModel):
    seed: int
    memories: list[EvalMemory]
    questions: list[EvalQuestion]


def _facts(rng: random.Random, s: str) -> list[tuple[str, str, str, str]]:
    """(family, memory, question, answer) facts about `s`, one per family, values drawn by `rng`."""
    breed, pet, city, friend = rng.choice(BREEDS), rng.choice(PETS), rng.choice(CITIES), rng.choice(FIRST)
    book, author = rng.choice(BOOKS)
    company, job = rng.choice(COMPANIES), rng.choice(JOBS)
    color, vehicle = rng.choice(COLORS), rng.choice(VEHICLES)
    instrument, cause, dish, cafe = rng.choice(INSTRUMENTS), rng.choice(CAUSES), rng.choice(DISHES), rng.choice(CAFES)
    return [
        ("pet", f"{s} adopted a {breed} named {pet}.", f"What is the name of {s}'s {breed}?", pet),
        ("instrument", f"{s} started learning the {instrument}.", f"Which instrument is {s} learning?", instrument),
        ("trip", f"{s} visited {city} with {friend}.", f"Which city did {s} visit with {friend}?", city),
        ("vehicle", f"{s} bought a {color} {vehicle}.", f"What color is the {vehicle} {s} bought?", color),
        ("charity", f"{s} ran a charity race for {cause}.", f"What did {s}'s charity race raise money for?", cause),
        ("dish", f"{s} cooked {dish} for {friend}.", f"What did {s} cook for {friend}?", dish),
        ("book", f"{s} read {book} by {author}.", f"Which book by {author} did {s} read?", book),
        ("cafe", f"{s}'s favourite café is {cafe}.", f"What is {s}'s favourite café?", cafe),
        ("job", f"{s} got a job as a {job} at {company}.", f"What job did {s} get at {company}?", job),
    ]


def generate(seed: int, heavy: int = 3, light: int = 24, heavy_rounds: int = 12) -> RecallCorpus:
    """`heavy` subjects with `heavy_rounds` rounds of every fact family plus filler (hundreds of
    memories each), `light` subjects with a few facts each; then the questions."""
    rng = random.Random(seed)
    names = rng.sample([f"{f} {last}" for f in FIRST for last in LAST], heavy + light)
    drafts: list[tuple[str, str, str, str, str]] = []  # (subject, family, memory, question, answer)
    for index, name in enumerate(names):
        rounds = heavy_rounds if index < heavy else 1
        for _ in range(rounds):
            facts = _facts(rng, name)
            for family, memory, question, answer in (facts if index < heavy else rng.sample(facts, rng.randint(2, 4))):
                drafts.append((name, family, memory, question, answer))
            if index < heavy:
                drafts += [(name, "filler", line.format(s=name), "", "") for line in rng.sample(FILLER, 6)]
    for template, question, answer in (PARAPHRASES if seed == DEVELOPMENT_SEED else HELD_OUT_PARAPHRASES):
        name = rng.choice(names)
        drafts.append((name, "paraphrase", template.format(s=name), question, answer.format(s=name)))
    rng.shuffle(drafts)
    start = datetime(2023, 1, 1, 9, tzinfo=UTC)
    memories: list[EvalMemory] = []
    records = []
    for position, (subject, family, text, question, answer) in enumerate(drafts):
        when = start + timedelta(hours=position * 17 + rng.randrange(12))
        memory = EvalMemory(id=str(uuid.UUID(int=rng.getrandbits(128), version=4)), content=text, occurred_at=when)
        memories.append(memory)
        records.append((subject, family, memory, question, answer))
    return RecallCorpus(seed=seed, memories=memories, questions=_questions(rng, records))


def _unique(records: list, key) -> list:
    """Records whose question (by `key`) has exactly one memory behind it."""
    counts: dict = {}
    for record in records:
        counts[key(record)] = counts.get(key(record), 0) + 1
    return [r for r in records if counts[key(r)] == 1]


def _questions(rng: random.Random, records: list) -> list[EvalQuestion]:
    facts = [r for r in records if r[1] not in ("filler", "paraphrase")]
    single = _unique(facts, lambda r: r[3])  # a question with two memories behind it is ambiguous
    questions = [EvalQuestion(kind="single", question=r[3], answers=[r[4]], evidence=[r[2].id])
                 for r in rng.sample(single, min(40, len(single)))]
    for _ in range(15):
        a, b = rng.sample(single, 2)
        if a[0] != b[0]:
            questions.append(EvalQuestion(kind="two_pages", question=f"{a[3][:-1]}, and {b[3][0].lower()}{b[3][1:]}",
                                          answers=[a[4], b[4]], evidence=[a[2].id, b[2].id]))
    dated = _unique([r for r in facts if r[1] in ("pet", "trip", "instrument", "charity")], lambda r: r[2].content)
    for r in rng.sample(dated, min(15, len(dated))):
        when = r[2].occurred_at
        memory = r[2].content.rstrip(".")
        verb_phrase = memory[len(r[0]) + 1:]
        questions.append(EvalQuestion(kind="temporal", question=f"When did {r[0]} {_base(verb_phrase)}?",
                                      answers=[f"{when.day} {when:%B %Y}"], evidence=[r[2].id]))
    by_month = _unique([r for r in records if r[1] != "paraphrase"],
                       lambda r: (r[0], r[2].occurred_at.year, r[2].occurred_at.month))
    for r in rng.sample(by_month, min(10, len(by_month))):
        questions.append(EvalQuestion(kind="temporal", question=f"What did {r[0]} do in {r[2].occurred_at:%B %Y}?",
                                      answers=[r[2].content.split(" ", 2)[2].rstrip(".")[:30]], evidence=[r[2].id]))
    questions += [EvalQuestion(kind="paraphrase", question=r[3], answers=[r[4]], evidence=[r[2].id])
                  for r in records if r[1] == "paraphrase"]
    return questions


_PAST = {"adopted": "adopt", "visited": "visit", "started": "start", "ran": "run"}


def _base(verb_phrase: str) -> str:
    verb, _, rest = verb_phrase.partition(" ")
    return f"{_PAST.get(verb, verb)} {rest}"
