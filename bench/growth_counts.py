"""What a plan is shown and why the writer is called, counted from the simulator's calls: the
figures behind the growth part's "why" (bench/cost_realistic.py `measure_growth`).

- Per leaf plan: candidate pages, their sections, open mentions and their sightings, as the prompt
  lists them (one `- p…` line a page, one `· slug=` line a section, one `- u…` line a mention, one
  `· sighting` line a sighting).
- Per writer call: whether it only condenses (an additive update past the section's budget; its
  prompt says the new lines are already appended) or rewrites (a line corrected or superseded, or two
  proposals for one new section merged), and the size of the body it was shown.
"""

from __future__ import annotations

from planners.prompts import ALREADY_APPENDED


def _user(call) -> str:
    content = [m.get("content") for m in call.body.get("messages", []) if m.get("role") == "user"]
    return "".join(part if isinstance(part, str) else "".join(
        block.get("text", "") for block in part or [] if isinstance(block, dict)) for part in content)


def _part(user: str, heading: str) -> list[str]:
    head = user.find(f"## {heading}\n")
    if head < 0:
        return []
    rest = user[head + len(heading) + 4:]
    tail = rest.find("\n\n## ")
    return (rest if tail < 0 else rest[:tail]).splitlines()


def plan_counts(calls) -> dict[str, float]:
    """Mean candidate pages, candidate sections, open mentions and sightings per leaf plan."""
    plans = [call for call in calls if call.kind == "planner" and call.usage is not None]
    totals = {"candidate_pages": 0, "candidate_sections": 0, "open_mentions": 0, "sightings": 0}
    for call in plans:
        user = _user(call)
        pages = _part(user, "Candidate pages already in this scope")
        mentions = _part(user, "Open unresolved mentions in this scope")
        totals["candidate_pages"] += sum(1 for line in pages if line.startswith("- p"))
        totals["candidate_sections"] += sum(1 for line in pages if line.strip().startswith("· slug="))
        totals["open_mentions"] += sum(1 for line in mentions if line.startswith("- u"))
        totals["sightings"] += sum(1 for line in mentions if line.strip().startswith("· sighting"))
    return {name: round(value / len(plans), 1) for name, value in totals.items()} if plans else {}


def writer_counts(calls) -> dict[str, float]:
    """Writer calls that only condense and that rewrite, and the mean body (characters) each was shown."""
    writes = [call for call in calls if call.kind == "writer" and call.usage is not None]
    condense = rewrite = shown_chars = 0
    for call in writes:
        user = _user(call)
        condense += ALREADY_APPENDED in user
        rewrite += ALREADY_APPENDED not in user
        body = user.split("## Existing body\n", 1)[-1].split("\n\n## Planner's proposed body", 1)[0]
        shown_chars += len(body)
    return {"condense_only": condense, "rewrite": rewrite,
            "body_chars_shown": round(shown_chars / len(writes)) if writes else 0}
