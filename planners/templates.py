"""Page templates: the default sections of each page type and what belongs in each.

Templates only steer the models: the planners see the type descriptions, and the section writer
sees a section's purpose. The compiler never creates default sections from them; a new page gets
exactly the sections its plan names: the planner is not locked into these defaults.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from domain.plan import PageType

UNKNOWN_SECTION_PURPOSE = "A named section on the page; respect its existing role."


class SectionTemplate(BaseModel):
    model_config = ConfigDict(frozen=True)

    slug: str
    heading: str
    purpose: str


class PageTemplate(BaseModel):
    model_config = ConfigDict(frozen=True)

    type: PageType
    purpose: str
    sections: tuple[SectionTemplate, ...]


PAGE_TEMPLATES: dict[str, PageTemplate] = {
    "entity": PageTemplate(
        type="entity",
        purpose=(
            "A real-world thing the user refers to by name: a person, place, organisation, product or pet. "
            "Choose it when the subject has a stable identity and recurs across records."
        ),
        sections=(
            SectionTemplate(
                slug="overview",
                heading="Overview",
                purpose="Two to four sentences on what this entity is, grounded in the cited records.",
            ),
            SectionTemplate(
                slug="notes",
                heading="Notes",
                purpose="Impressions, opinions and observations about the entity, taken from the records.",
            ),
            SectionTemplate(
                slug="visits",
                heading="Visits & Interactions",
                purpose="Meaningful visits or interactions, newest first, one short entry each, dated when known.",
            ),
            SectionTemplate(
                slug="related",
                heading="Related",
                purpose="Prose only where a relationship to another page needs explaining; links are stored apart.",
            ),
        ),
    ),
    "topic": PageTemplate(
        type="topic",
        purpose=(
            "A recurring subject or theme spanning several records: a trip, a city, a hobby, a kind of place. "
            "Choose it when the subject is a theme rather than one thing."
        ),
        sections=(
            SectionTemplate(
                slug="summary",
                heading="Summary",
                purpose="Two to four sentences on what this topic covers.",
            ),
            SectionTemplate(
                slug="highlights",
                heading="Highlights",
                purpose="Short bullets: standout moments, patterns or takeaways.",
            ),
            SectionTemplate(
                slug="related_entities",
                heading="Related Entities",
                purpose="The places, people and things that recur within this topic.",
            ),
            SectionTemplate(
                slug="recent",
                heading="Recent",
                purpose="A few of the newest records that contribute to this topic.",
            ),
        ),
    ),
    "decision": PageTemplate(
        type="decision",
        purpose=(
            "A choice or stance the user reached: a switch, a rule, a 'never again'. "
            "Choose it when the subject is a conclusion rather than a thing or a theme."
        ),
        sections=(
            SectionTemplate(
                slug="context",
                heading="Context",
                purpose="The situation that prompted the decision, as far as the records show.",
            ),
            SectionTemplate(
                slug="decision",
                heading="Decision",
                purpose="The decision itself, in one or two plain sentences.",
            ),
            SectionTemplate(
                slug="rationale",
                heading="Rationale",
                purpose="The reasons given in, or evident from, the records.",
            ),
            SectionTemplate(
                slug="consequences",
                heading="Consequences",
                purpose="What followed: what changed, what was revisited, what to revisit next.",
            ),
        ),
    ),
}


def section_template(page_type: str, section_slug: str) -> SectionTemplate | None:
    template = PAGE_TEMPLATES.get(page_type)
    if template is None:
        return None
    return next((section for section in template.sections if section.slug == section_slug), None)


def section_purpose(page_type: str, section_slug: str) -> str:
    template = section_template(page_type, section_slug)
    return template.purpose if template else UNKNOWN_SECTION_PURPOSE


def describe_page_types() -> str:
    """Markdown describing each page type and its default sections (slug, heading, purpose).

    Planners see these exact definitions, so they pick types and section slugs the way the code
    and the section writer understand them.
    """
    lines: list[str] = []
    for template in PAGE_TEMPLATES.values():
        lines.append(f"- **{template.type}**: {template.purpose} Default sections:")
        lines.extend(
            f'  - `{section.slug}` "{section.heading}": {section.purpose}' for section in template.sections
        )
    return "\n".join(lines)
