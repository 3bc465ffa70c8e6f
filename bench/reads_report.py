"""The reads part's figures in bench/results.json and its section of the page (figures from bench/reads.py)."""

from __future__ import annotations

from bench.formatting import SummaryRow


def headline(detail: dict) -> dict:
    return {"read_p95_ms": {endpoint: figures["p95_ms"] for endpoint, figures in detail["endpoints"].items()}}


def rows(detail: dict) -> list[SummaryRow]:
    targets = detail["targets_p95_ms"]
    pages = detail["scope"]["wiki_pages"]
    return [SummaryRow(f"p95 of `{endpoint}` over HTTP, {pages:,}-page scope", f"read_p95_ms.{endpoint}",
                       f"{figures['p95_ms']:.1f} ms", f"≤ {targets[endpoint]:.0f} ms",
                       figures["p95_ms"] <= targets[endpoint])
            for endpoint, figures in detail["endpoints"].items()]


def section(reads: dict) -> list[str]:
    scope = reads["scope"]
    lines = [
        "How fast an agent's reads are answered over HTTP on a large scope: p50 and p95 of `search`, `get_page` "
        "and `related`.",
        "",
        f"**How.** A generated scope (`bench/reads.py`, in SQL) of {scope['wiki_pages']:,} pages, "
        f"{scope['wiki_page_sections']:,} sections, {scope['wiki_page_aliases']:,} aliases, "
        f"{scope['wiki_page_links']:,} links (with reciprocal pairs and hub pages) and "
        f"{scope['wiki_section_sources']:,} citations, served by `wiki serve`. {reads['method']}.",
        "",
        "| endpoint | p50 | p95 | max | target p95 | mean results |",
        "|---|---|---|---|---|---|",
    ]
    for endpoint, figures in reads["endpoints"].items():
        unit = "chars" if endpoint == "get_page" else "hits"
        lines.append(f"| `{endpoint}` | {figures['p50_ms']:.1f} ms | {figures['p95_ms']:.1f} ms | "
                     f"{figures['max_ms']:.1f} ms | ≤ {reads['targets_p95_ms'][endpoint]:.0f} ms | "
                     f"{figures['mean_results']:.0f} {unit} |")
    lines += ["", "The client, the server and Postgres share the machine: with a load average above its CPU count "
              "(see the run above) the latencies include waiting for a CPU."]
    return lines
