"""Derived lines, led quotes and grouped links in the compact reply contract: the model writes "=count"
(and the other derivations' names) for a line the compiler can write from the section's citations,
"@m4:Contramar" for a memory's dated line led by a name, and one link entry for several pages
linking to one page; reading the reply gives the long form back exactly."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime, timedelta
from uuid import UUID

from claude_sim.leaf_planning import as_arrays
from claude_sim.leaf_reading import read_conventions
from domain.context import CandidatePage, CandidateSection, MemoryRecord, PlannerContext
from domain.plan import Plan
from domain.pricing import TokenUsage
from planners.claude_client import ModelReply
from planners.claude_planner import PlanCall, plan_reply
from planners.compact_plan import PLANNER_REPLY_SCHEMA, quote_line
from planners.derived_lines import DERIVATIONS, derive
from planners.leaf_prompt import PLANNER_SYSTEM, build_planner_prompt, planner_view
from planners.prompts import force_aggregation_arrays

EMPTY = {"pageUpdates": [], "newPages": [], "unresolvedMentions": [], "promotions": []}
ADDRESSES = ["801 S Lamar Blvd, Austin, TX 78704, USA", "Durango 200, Roma Nte., 06700 Ciudad de México, CDMX, Mexico"]


def a_context(rng: random.Random, size: int) -> PlannerContext:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    memories = []
    for n in range(size):
        when = start + timedelta(days=rng.randrange(120), seconds=rng.randrange(86_400))
        place = {"place": {"name": "Somewhere", "address": rng.choice(ADDRESSES)}} if rng.random() < 0.7 else {}
        memories.append(MemoryRecord(id=UUID(int=n + 1), content=f"Memory number {n} at a place.",
                                     metadata=place, created_at=when, updated_at=when))
    page = CandidatePage(id=UUID(int=500), type="entity", slug="somewhere", title="Somewhere",
                         sections=[CandidateSection(slug="notes", heading="Notes", body_md="- a line")])
    return PlannerContext(tenant_id="t", owner_id="o", memories=memories, candidate_pages=[page], open_mentions=[])


def read(prompt, reply: dict) -> tuple[Plan, int]:
    call = PlanCall(system=prompt.system, user=prompt.user, max_tokens=1000, handles=prompt.handles,
                    input_chars=prompt.chars)
    answer = plan_reply(call, ModelReply(text=json.dumps(reply), stop_reason="tool_use", usage=TokenUsage(),
                                         model="m"), "m")
    return answer.plan, answer.unknown_handles


def test_each_derivation_round_trips_through_the_reader_on_generated_batches() -> None:
    rng = random.Random(29)
    for _ in range(40):
        context = a_context(rng, rng.randrange(2, 12))
        prompt = build_planner_prompt(context)
        shown = planner_view(context).memories
        chosen = rng.sample(range(len(shown)), rng.randrange(1, len(shown) + 1))
        name = rng.choice(sorted(DERIVATIONS))
        expected = derive(name, [shown[i] for i in chosen])
        lead = rng.choice(["Contramar", "Café de Flore", "Uchi: the bar"])
        led = quote_line(shown[chosen[0]]).replace(": ", f": **{lead}**: ", 1)  # a quote led by a name
        body = "\n".join(["Prose before.", *expected, led, "Prose after."])
        handles = [f"m{i + 1}" for i in chosen]
        written = {"updates": [{"page": "p1", "sections": [{"slug": "notes", "lines": [
            "Prose before.", f"={name}", f"@{handles[0]}:{lead}", "Prose after."], "refs": handles[1:]}]}],
            "new_pages": [], "held": [], "promotions": []}

        back, unknown = read(prompt, written)
        section = back.pageUpdates[0].sections[0]
        assert section.proposed_body_md == body and unknown == (0 if expected else 1)
        assert sorted(section.source_refs) == sorted(str(context.memories[i].id) for i in chosen)


def test_a_derived_line_with_nothing_to_derive_from_is_left_out_and_counted() -> None:
    context = a_context(random.Random(3), 4)
    for memory in context.memories:
        memory.metadata = {}
    prompt = build_planner_prompt(context)
    plan, unknown = read(prompt, {
        "updates": [{"page": "p1", "sections": [
            {"slug": "notes", "lines": ["=count", "@m1", "=address", "=nonsense", "= count", "=)"], "refs": ["m2"]}]}],
        "new_pages": [], "held": [], "promotions": []})
    body = plan.pageUpdates[0].sections[0].proposed_body_md.splitlines()
    # No address among the memories, and no derivation called "nonsense": both left out, and counted.
    assert body[0] == "- 2 new memories." and body[-2:] == ["= count", "=)"]  # prose, as written
    assert unknown == 2
    # A citation that is no memory of the batch (an earlier record, a miscopy): nothing is derived.
    plan, unknown = read(prompt, {"updates": [{"page": "p1", "sections": [
        {"slug": "notes", "lines": ["=count"], "refs": ["m2", "m9"]}]}], "new_pages": [], "held": [], "promotions": []})
    assert plan.pageUpdates[0].sections[0].proposed_body_md == "" and unknown == 2  # m9, and the line


def test_a_link_entry_may_list_its_sources_and_the_brain_groups_links_to_one_page() -> None:
    context = a_context(random.Random(5), 3)
    prompt = build_planner_prompt(context)
    plan, unknown = read(prompt, {
        "updates": [], "held": [], "promotions": [],
        "new_pages": [{"type": "entity", "title": "Lena", "sections": [{"slug": "notes", "lines": ["@m1"]}]},
                      {"type": "entity", "title": "Uchi", "sections": [{"slug": "notes", "lines": ["@m2"]}]}],
        "links": [[["entity/lena", "entity/uchi", "p7"], "p1", "Located in Austin."], ["entity/lena", "entity/uchi"]]})
    assert [(link.fromSlug, link.toSlug, link.context) for link in plan.pageLinks] == [
        ("lena", "somewhere", "Located in Austin."), ("uchi", "somewhere", "Located in Austin."),
        ("lena", "uchi", None)]
    assert unknown == 1 and plan.dropped_links == 1  # p7 was never shown


def test_a_section_written_as_an_array_reads_as_its_object_and_the_simulator_writes_arrays_only_where_they_fit(
) -> None:
    context = a_context(random.Random(11), 4)
    prompt = build_planner_prompt(context)
    as_objects = {"updates": [{"page": "p1", "sections": [{"slug": "notes", "lines": ["=count", "@m1"], "refs": ["m2"]},
                                                          {"slug": "visits", "lines": ["=visited"]}]}],
                  "new_pages": [{"type": "entity", "title": "Uchi", "sections": [
                      {"slug": "overview", "heading": "About", "lines": ["A restaurant."], "refs": ["m3"]}]}],
                  "held": [], "promotions": []}
    as_arrays_ = as_arrays(json.loads(json.dumps(as_objects)), read_conventions(PLANNER_SYSTEM, PLANNER_REPLY_SCHEMA))
    assert as_arrays_["updates"][0]["sections"] == [["notes", ["=count", "@m1"], ["m2"]], ["visits", ["=visited"]]]
    assert as_arrays_["new_pages"][0]["sections"] == as_objects["new_pages"][0]["sections"]  # a heading: an object
    assert read(prompt, as_arrays_) == read(prompt, as_objects)


def test_an_aggregation_link_entry_links_each_page_of_one_end_to_each_of_the_other() -> None:
    raw = {"parentSectionUpdates": [], "sectionPromotions": [], "newPages": [], "pageLinks": [
        ["topic/austin", ["entity/uchi", "entity/loro"], "Part of Austin."],
        [["entity/uchi", "entity/loro"], "topic/austin"],
        {"fromType": "topic", "fromSlug": "austin", "toType": "entity", "toSlug": "epoch", "context": None},
        ["topic/austin", "nowhere", "x"], ["topic/austin"]]}
    plan = Plan.model_validate(force_aggregation_arrays(raw))
    assert [(link.fromSlug, link.toSlug, link.context) for link in plan.pageLinks] == [
        ("austin", "uchi", "Part of Austin."), ("austin", "loro", "Part of Austin."),
        ("uchi", "austin", None), ("loro", "austin", None), ("austin", "epoch", None)]
    assert plan.dropped_links == 2  # an end that is no type/slug, an entry with one end
