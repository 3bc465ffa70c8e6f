"""The web part's figures in bench/results.json and its section of the page (figures from bench/web.py)."""

from __future__ import annotations

from bench.formatting import SummaryRow


def headline(detail: dict) -> dict:
    sample = detail["sample"]
    return {"web_page_p95_ms": detail["views"]["page"]["p95_ms"],
            "web_sample_pages_rendered": f"{sample['rendered']}/{sample['active_pages']}"}


def rows(detail: dict) -> list[SummaryRow]:
    page = detail["views"]["page"]
    target = detail["targets_p95_ms"]["page"]
    sample = detail["sample"]
    pages = detail["scope"]["wiki_pages"]
    return [
        SummaryRow(f"p95 of a page in the web view, {pages:,}-page scope", "web_page_p95_ms",
                   f"{page['p95_ms']:.1f} ms", f"≤ {target:.0f} ms", page["p95_ms"] <= target),
        SummaryRow(f"pages of the {sample['memories']}-memory sample the web view renders (title and every claim)",
                   "web_sample_pages_rendered", f"{sample['rendered']}/{sample['active_pages']}", "all",
                   sample["rendered"] == sample["active_pages"] and sample["graph_lists_every_page"]),
    ]


def section(detail: dict) -> list[str]:
    scope = detail["scope"]
    sample = detail["sample"]
    lines = [
        "How fast `wiki serve`'s web view renders for a person, and whether it renders every page of a compiled wiki.",
        "",
        f"**How.** The reads part's generated scope of {scope['wiki_pages']:,} pages with "
        f"{scope['wiki_section_claims']:,} claims (three per section, each citing one or two memories); "
        f"{detail['method']}. A page view reads the page, its claims, the memories they cite, its backlinks and "
        "its related pages, and renders them through the markup sanitiser.",
        "",
        "| view | p50 | p95 | max | target p95 |",
        "|---|---|---|---|---|",
    ]
    for view, figures in detail["views"].items():
        target = detail["targets_p95_ms"].get(view)
        lines.append(f"| `{view}` | {figures['p50_ms']:.1f} ms | {figures['p95_ms']:.1f} ms | "
                     f"{figures['max_ms']:.1f} ms | {f'≤ {target:.0f} ms' if target else '—'} |")
    lines += ["", f"On the compiled {sample['memories']}-memory sample: {sample['rendered']} of "
                  f"{sample['active_pages']} active pages rendered with their title and all their claims "
                  f"({sample['claims']:,} claims); the graph lists every active page: "
                  f"{'yes' if sample['graph_lists_every_page'] else 'no'}."
                  + (f" Failures: {', '.join(sample['failures'])}." if sample["failures"] else ""),
              "", "The client, the server and Postgres share the machine: with a load average above its CPU count "
                  "(see the run above) the latencies include waiting for a CPU."]
    return lines
