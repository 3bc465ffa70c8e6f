"""The prompt-size part's figures in bench/results.json and its section of the page."""

from __future__ import annotations

from bench.formatting import SummaryRow

PROMPT_GROWTH_TARGET = 1.5
METHOD = (
    "**How.** Each scope is seeded by bulk INSERT (`bench/prompt_size.py`): the names of the sample's pages "
    "first, then generated names of the same shapes, each page with a summary, a body, its aliases and a "
    "compile time spread over a year, and open mentions in proportion. One batch of 50 sample memories then "
    "goes through the planner's context path as `llm.plan_batch` does: `names_in_batch`, `candidate_pages`, "
    "`open_mentions`, `build_planner_prompt`. Tokens are characters / 4; the context read is the median of "
    "three."
)


def headline(detail: dict) -> dict:
    scopes = sorted(detail["scopes"], key=lambda scope: scope["scope_pages"])
    return {"prompt_growth_ratio": round(scopes[-1]["input_chars"] / scopes[0]["input_chars"], 3)}


def rows(detail: dict) -> list[SummaryRow]:
    ratio = headline(detail)["prompt_growth_ratio"]
    scopes = sorted(detail["scopes"], key=lambda scope: scope["scope_pages"])
    return [SummaryRow(f"planner input, {scopes[-1]['scope_pages']:,}-page / {scopes[0]['scope_pages']:,}-page scope",
                       "prompt_growth_ratio", f"{ratio:.2f}", f"≤ {PROMPT_GROWTH_TARGET}",
                       ratio <= PROMPT_GROWTH_TARGET)]


def section(detail: dict) -> list[str]:
    scopes = sorted(detail["scopes"], key=lambda scope: scope["scope_pages"])
    smallest, middle, largest = scopes[0], scopes[len(scopes) // 2], scopes[-1]
    lines = [
        "Whether the planner's prompt stays bounded as a scope grows: one batch planned in scopes of "
        + ", ".join(f"{scope['scope_pages']:,}" for scope in scopes) + " pages "
        f"({smallest['open_mentions_in_scope'] / smallest['scope_pages']:.1f} open mentions per page).",
        "",
        METHOD,
        "",
        "| scope pages | candidate pages sent (named by the batch) | open mentions sent | input chars "
        "(system / pages + mentions / batch) | est. tokens | context read |",
        "|---|---|---|---|---|---|",
    ]
    for scope in scopes:
        parts = scope["input_chars_by_part"]
        lines.append(
            f"| {scope['scope_pages']:,} | {scope['candidate_pages']} ({scope['candidate_pages_named_by_batch']} of "
            f"{scope['pages_named_by_batch']}) | {scope['open_mentions']} | {scope['input_chars']:,} "
            f"({parts['system']:,} / {parts['candidates_and_mentions']:,} / {parts['batch']:,}) | "
            f"{scope['estimated_input_tokens']:,} | {scope['context_read_ms_median']:.0f} ms |")
    ratio = headline(detail)["prompt_growth_ratio"]
    verdict = "met" if ratio <= PROMPT_GROWTH_TARGET else f"missed by {ratio / PROMPT_GROWTH_TARGET - 1:.0%}"
    bounds = detail["bounds"]
    all_named = all(scope["candidate_pages_named_by_batch"] == scope["pages_named_by_batch"] for scope in scopes)
    lines += ["", (
        f"**Why ({verdict}: ratio {ratio:.2f}).** From {middle['scope_pages']:,} to {largest['scope_pages']:,} pages "
        f"the prompt grows {largest['input_chars'] / middle['input_chars'] - 1:.1%}"
        + (", and every page the batch names is in it at every size. " if all_named else
           "; not every page the batch names is in it at every size (see the table). ")
        + "What bounds it: `candidate_pages` (`store/scope_reads.py`) sends the pages the batch's names find, "
        f"then pads them with up to `MAX_RECENT_PADDING` ({bounds['max_recent_padding']}) recently compiled pages, "
        f"at most `max_candidate_pages` ({bounds['max_candidate_pages']}) in all; `open_mentions` sends the "
        f"mentions the batch names, then up to `MAX_MENTION_PADDING` ({bounds['max_mention_padding']}) of the most "
        f"seen, at most `MAX_OPEN_MENTIONS` ({bounds['max_open_mentions']}, `activities/planning.py`) in all. "
        "Reading that context took "
        f"{smallest['context_read_ms_median']:.0f} ms at {smallest['scope_pages']:,} pages and "
        f"{largest['context_read_ms_median']:.0f} ms at {largest['scope_pages']:,}: each of the batch's names costs "
        "a trigram and a full-text index scan, bounded per name in what it returns (LATERAL ... LIMIT) but not in "
        "what the scans touch. That is a database read per batch, not prompt size."
    )]
    return lines
