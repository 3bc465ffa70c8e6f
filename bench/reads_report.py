"""The read-latency part of docs/BENCHMARKS.md (figures from bench/reads.py)."""

from __future__ import annotations

LABELS = {"search": "search", "get_page": "get_page", "related": "related"}


def target_rows(results: dict) -> list[tuple[str, str, str, str, bool]]:
    """Rows of the summary table: (metric, figure, value, target, met)."""
    reads = results.get("detail", {}).get("reads")
    if not reads:
        return []
    targets = reads["targets_p95_ms"]
    return [("5", f"p95 of `{endpoint}` over HTTP, 10,000-page scope (`read_p95_ms.{endpoint}`)",
             f"{value:.1f} ms", f"≤ {targets[endpoint]:.0f} ms", value <= targets[endpoint])
            for endpoint, value in results["read_p95_ms"].items()]


def section(results: dict) -> str:
    reads = results.get("detail", {}).get("reads")
    if not reads:
        return ""
    scope = reads["scope"]
    lines = [
        "## Reads over HTTP (target 5)",
        "",
        f"A generated scope of {scope['wiki_pages']:,} pages, {scope['wiki_page_sections']:,} sections, "
        f"{scope['wiki_page_aliases']:,} aliases, {scope['wiki_page_links']:,} links (with reciprocal pairs and "
        f"100 hub pages) and {scope['wiki_section_sources']:,} citations, served by `wiki serve`. "
        f"{reads['method']}. Measured at commit `{reads.get('commit', '?')}` (this section can be newer than the "
        "rest of the page: `python -m bench.reads` refreshes it alone).",
        "",
        "| endpoint | p50 | p95 | max | target p95 | mean results |",
        "|---|---|---|---|---|---|",
    ]
    for endpoint, figures in reads["endpoints"].items():
        unit = "chars" if endpoint == "get_page" else "hits"
        lines.append(f"| `{LABELS.get(endpoint, endpoint)}` | {figures['p50_ms']:.1f} ms | {figures['p95_ms']:.1f} ms | "
                     f"{figures['max_ms']:.1f} ms | ≤ {reads['targets_p95_ms'][endpoint]:.0f} ms | "
                     f"{figures['mean_results']:.0f} {unit} |")
    if "load_average" in reads:
        lines += ["", f"Load average (1/5/15 min) during the run: {' / '.join(f'{v:.2f}' for v in reads['load_average'])} "
                      "on 2 CPUs shared with other work: the latencies include waiting for a CPU."]
    return "\n".join(lines)
