"""The resolution ladder: names that must merge, names that must not, and the offline judge."""

from __future__ import annotations

import pytest

from domain.merge_questions import MergeQuestion, MergeSide
from domain.names import infer_kind, parse_name
from domain.resolution import NameSet, Rung, compare, compare_names, is_informative, search_keys
from planners.scripted.judgement import scripted_judgement

RESTAURANT_IN_AUSTIN = "Restaurant in Austin, TX."


def side(title: str, page_type: str = "entity", summary: str | None = None, aliases: tuple[str, ...] = (),
         evidence: tuple[str, ...] = ()) -> MergeSide:
    return MergeSide(title=title, type=page_type, summary=summary, aliases=list(aliases), evidence=list(evidence))


def merges(proposal: MergeSide, candidate: MergeSide) -> bool:
    """What the resolver does with the pair offline: confident rungs merge, ambiguous ones ask the judge."""
    verdict = compare(proposal.names(), candidate.names())
    if verdict.confident:
        return True
    if verdict.ambiguous:
        question = MergeQuestion(key="q", rung=verdict.rung, detail=verdict.detail, proposal=proposal,
                                 candidate=candidate)
        return scripted_judgement(question).same
    return False


PARIS_FRANCE = side("Paris", "topic", "City: Paris.",
                    evidence=("Cafe de Flore, 172 Bd Saint-Germain, 75006 Paris, France",))
AUSTIN_CITY = side("Austin", "topic", "City: Austin.", evidence=("Uchi, 801 S Lamar Blvd, Austin, TX 78704",))

MUST_MERGE = {
    "city qualifier on a venue": (side("Uchi (Austin)", summary=RESTAURANT_IN_AUSTIN), side("Uchi", summary=RESTAURANT_IN_AUSTIN)),
    "comma qualifier on a venue": (side("Uchi, Austin", summary=RESTAURANT_IN_AUSTIN), side("Uchi", summary=RESTAURANT_IN_AUSTIN)),
    "the unqualified proposal of a qualified page": (side("Uchi", summary=RESTAURANT_IN_AUSTIN),
                                                     side("Uchi (Austin)", summary=RESTAURANT_IN_AUSTIN)),
    "country qualifier with evidence": (side("Paris, France", "topic", "City: Paris, France."), PARIS_FRANCE),
    "state code with evidence": (side("Austin, TX", "topic", "City: Austin, TX."), AUSTIN_CITY),
    "state name for the state code in the evidence": (side("Austin, Texas", "topic", "City."), AUSTIN_CITY),
    "leading article": (side("The Hotel San José", summary="Hotel in Austin, TX."),
                        side("Hotel San Jose", summary="Hotel in Austin, TX.")),
    "article dropped": (side("Driskill", summary="Hotel in Austin."), side("The Driskill", summary="Hotel in Austin.")),
    "appositive": (side("Biscuit the dog", summary="A dog."), side("Biscuit", summary="A dog.")),
    "comma appositive": (side("Biscuit, our dog"), side("Biscuit", summary="A dog.")),
    "leading appositive": (side("our dog Biscuit"), side("Biscuit the dog")),
    "relation appositive": (side("Marguerite, my sister", summary="A person."), side("Marguerite", summary="A person.")),
    "transposition typo": (side("Margeurite", summary="A person."), side("Marguerite", summary="A person.")),
    "transposition in a venue": (side("Olmaaie", summary=RESTAURANT_IN_AUSTIN), side("Olamaie", summary=RESTAURANT_IN_AUSTIN)),
    "typo and qualifier together": (side("Nixta Taqureia (Austin)", summary=RESTAURANT_IN_AUSTIN),
                                    side("Nixta Taqueria", summary=RESTAURANT_IN_AUSTIN)),
    "honorific": (side("Dr. Okafor", summary="A person."), side("Okafor", summary="A person.")),
    "plural of a long name": (side("Shinjuku Gyoen National Gardens", summary="Park in Tokyo."),
                              side("Shinjuku Gyoen National Garden", summary="Park in Tokyo.")),
    "words joined": (side("BirdBird Biscuit"), side("Bird Bird Biscuit")),
    "casing": (side("CONTRAMAR"), side("Contramar")),
    "same name across page types, kinds unknown": (side("Project Atlas", "topic"), side("Project Atlas", "entity")),
    "a longer name the memories use": (side("Driskill Bar", summary="Bar in Austin.",
                                            evidence=("Drinks at the Driskill Bar Lounge downtown.",)),
                                       side("The Driskill Bar Lounge", summary="Bar in Austin.")),
}

MUST_NOT_MERGE = {
    "a prefix of another restaurant": (side("Uchi", summary=RESTAURANT_IN_AUSTIN), side("Uchiko", summary=RESTAURANT_IN_AUSTIN)),
    "a short name one letter off": (side("Tori", summary=RESTAURANT_IN_AUSTIN), side("Tory", summary=RESTAURANT_IN_AUSTIN)),
    "the bar inside the hotel": (side("The Driskill Bar", summary="Bar in Austin."), side("The Driskill", summary="Hotel in Austin.")),
    "the hotel beside its bar": (side("Driskill", summary="Hotel in Austin."), side("Driskill Bar", summary="Bar in Austin.")),
    "a town of the same name elsewhere": (side("Paris, Texas", "topic", "City: Paris, Texas."), PARIS_FRANCE),
    "the city beside a town of its name": (side("Paris", "topic", "City: Paris.",
                                                evidence=("Le Comptoir, 9 Carrefour de l'Odeon, 75006 Paris, France",)),
                                           side("Paris, Texas", "topic", "City: Paris, Texas.")),
    "the city and a person of its name": (side("Austin", "entity", "A person."), AUSTIN_CITY),
    "a person and the city, both entities": (side("Austin", "entity", "Eric's friend from college."),
                                             side("Austin", "entity", "City in Texas.")),
    "two qualifiers": (side("Uchi (Houston)", summary="Restaurant in Houston."), side("Uchi (Austin)", summary=RESTAURANT_IN_AUSTIN)),
    "a qualifier the other page does not bear out": (side("Uchi (Houston)", summary="Restaurant in Houston."),
                                                     side("Uchi", summary=RESTAURANT_IN_AUSTIN)),
    "digits": (side("Pier 39", summary="Restaurant."), side("Pier 38", summary="Restaurant.")),
    "near names that are not a transposition": (side("Marian", summary="A person."), side("Marion", summary="A person.")),
    "a dog and a bakery": (side("Biscuit the dog"), side("Biscuit", summary="Bakery in Austin.")),
    "a dog and a cat": (side("Biscuit the dog"), side("Biscuit the cat")),
    "a sister and an aunt": (side("Joan, my sister"), side("Joan, my aunt")),
    "two titles": (side("Dr. Lowe"), side("Mr. Lowe")),
    "a trip and its city": (side("Athens, February 2026", "topic", "Trip: Athens, February 2026."),
                            side("Athens", "topic", "City: Athens.")),
    "a short name inside a longer one": (side("Lena", summary="A person."), side("Lena Park", summary="A person.")),
    "a longer name nothing bears out": (side("Driskill Bar", summary="Bar in Austin."),
                                        side("The Driskill Bar Lounge", summary="Bar in Austin.")),
    "a qualified city against a stored alias of another": (side("Athens, Greece", "topic", "City: Athens."),
                                                           side("Athens, Georgia", "topic", "City: Athens, Georgia.",
                                                                aliases=("athens georgia",))),
    "a qualified name against a longer unqualified one": (side("Uchi (Austin)", summary=RESTAURANT_IN_AUSTIN),
                                                          side("Uchi Sushi", summary=RESTAURANT_IN_AUSTIN)),
    "fuzzy across page types": (side("Project Atlass", "entity"), side("Project Atlas", "topic")),
}


@pytest.mark.parametrize("case", sorted(MUST_MERGE))
def test_variants_of_one_thing_merge(case: str) -> None:
    proposal, candidate = MUST_MERGE[case]
    assert merges(proposal, candidate), compare(proposal.names(), candidate.names())


@pytest.mark.parametrize("case", sorted(MUST_NOT_MERGE))
def test_different_things_do_not_merge(case: str) -> None:
    proposal, candidate = MUST_NOT_MERGE[case]
    assert not merges(proposal, candidate), compare(proposal.names(), candidate.names())


@pytest.mark.parametrize(("left", "right", "rung"), [
    ("Uchi (Austin)", "Uchi", Rung.QUALIFIER),
    ("The Hotel San José", "Hotel San José", Rung.CORE),
    ("Biscuit the dog", "Biscuit", Rung.CORE),
    ("Margeurite", "Marguerite", Rung.TYPO),
    ("The Driskill", "The Driskill Bar", Rung.SUBSET),
    ("Marian", "Marion", Rung.NEAR),
    ("Uchi", "Uchiko", Rung.DISTINCT),
    ("Paris, TX", "Paris, Texas", Rung.CORE),
    ("Hotel Vegas Patio", "Patio Hotel Vegas", Rung.REORDER),
    ("Uchi (Austin)", "Uchi (Houston)", Rung.DISTINCT),
])
def test_rungs(left: str, right: str, rung: Rung) -> None:
    assert compare_names(parse_name(left), parse_name(right)).rung is rung


def test_parsing_separates_core_qualifier_and_descriptors() -> None:
    assert parse_name("Uchi (Austin)").model_dump() == {
        "normalized": "uchi austin", "core": "uchi", "qualifier": "austin", "descriptors": (), "key": "uchi"}
    assert parse_name("Paris, TX").qualifier == "texas"
    assert parse_name("Biscuit, our dog").descriptors == ("our dog",)
    assert parse_name("our dog Biscuit").core == "biscuit"
    assert parse_name("The Hotel San José").core == "hotel san jose"
    # A capitalised word after "the" is part of the name; "The" alone is a name too.
    assert parse_name("Jack the Ripper").core == "jack the ripper"
    assert parse_name("The").core == "the"
    # Stored aliases are normalised: their qualifier is part of the core.
    assert parse_name("uchi austin").core == "uchi austin"


def test_information_gates() -> None:
    assert not is_informative("uchi")
    assert not is_informative("aaaaaaa")
    assert is_informative("biscuit")
    assert is_informative("odd duck")
    # An adjacent transposition is one edit, like a deletion; two edits need a word of ten letters or more.
    assert compare_names(parse_name("Margeurite"), parse_name("Marguerite")).rung is Rung.TYPO
    assert compare_names(parse_name("Margeurite Lowe"), parse_name("Marguerite Lowe")).rung is Rung.TYPO
    assert compare_names(parse_name("Marguerte Lowe"), parse_name("Marguerite Lowe")).rung is Rung.TYPO
    assert compare_names(parse_name("Margaerte Lowe"), parse_name("Marguerite Lowe")).rung is not Rung.TYPO


def test_kinds_are_read_from_summaries_and_descriptors() -> None:
    assert infer_kind("topic", "City: Austin.").cls == "region"
    assert infer_kind("entity", "Restaurant in Austin, TX.").word == "restaurant"
    assert infer_kind("entity", "Eric's sister, who lives in Lyon.").cls == "person"
    assert infer_kind("entity", None, ("our dog",)).cls == "pet"
    assert infer_kind("decision", None).cls == "decision"
    assert infer_kind("entity", "Mentioned in the agent's memories.") is None
    assert NameSet(type="entity", names=["Biscuit the dog"]).kind().word == "dog"


def test_search_keys_hold_the_core() -> None:
    assert search_keys(["Uchi (Austin)", "The Hotel San José"]) == [
        "uchi austin", "uchi", "the hotel san jose", "hotel san jose"]


def test_the_judge_cites_shared_memories_when_evidence_is_silent() -> None:
    question = MergeQuestion(key="k", rung=Rung.QUALIFIER, detail="france", shared_sources=2,
                             proposal=side("Paris, France", "topic"), candidate=side("Paris", "topic"))
    assert scripted_judgement(question).same
    assert not scripted_judgement(question.model_copy(update={"shared_sources": 0})).same


@pytest.mark.parametrize("seed", range(4))
def test_a_swap_with_a_replaced_letter_is_no_slip(seed: int) -> None:
    """Generated long words: two neighbouring letters swapped is a slip (typo), and stays one with a
    letter added; a letter replaced beside the swap makes another name (near, the judge's)."""
    import random
    rng = random.Random(seed)
    for _ in range(25):
        word = "".join(rng.choice("bdfgklmnprstvz") + rng.choice("aeiou") for _ in range(6))
        i = rng.randrange(1, len(word) - 2)
        while word[i] == word[i + 1]:
            i = rng.randrange(1, len(word) - 2)
        swapped = word[:i] + word[i + 1] + word[i] + word[i + 2:]
        j = rng.choice([k for k in range(len(word)) if abs(k - i) > 2])
        replaced = swapped[:j] + ("x" if swapped[j] != "x" else "q") + swapped[j + 1:]
        added = swapped[:j] + "x" + swapped[j:]
        name = f"{word.title()} Hall"
        assert compare_names(parse_name(name), parse_name(f"{swapped.title()} Hall")).rung is Rung.TYPO
        assert compare_names(parse_name(name), parse_name(f"{added.title()} Hall")).rung is Rung.TYPO
        assert compare_names(parse_name(name), parse_name(f"{replaced.title()} Hall")).rung is Rung.NEAR
