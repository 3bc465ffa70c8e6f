"""The web part's figures in bench/results.json and its section of the page (figures from bench/web.py)."""

from __future__ import annotations

from bench.formatting import SummaryRow, load


def headline(detail: dict) -> dict:
    sample = detail["sample"]
    figures = {f"web_{view}_p95_ms": figures["p95_ms"] for view, figures in detail["views"].items()}
    figures |= {f"web_{view}_after_write_p95_ms": figures["p95_ms"]
                for view, figures in detail.get("after_write", {}).items()}
    return {**figures, "web_sample_pages_rendered": f"{sample['rendered']}/{sample['active_pages']}"}


def rows(detail: dict) -> list[SummaryRow]:
    sample = detail["sample"]
    pages = detail["scope"]["wiki_pages"]
    found = []
    for view, figures in detail["views"].items():
        target = detail["targets_p95_ms"].get(view)
        found.append(SummaryRow(f"p95 of the web view's {view}, {pages:,}-page scope", f"web_{view}_p95_ms",
                                f"{figures['p95_ms']:.1f} ms", f"≤ {target:.0f} ms" if target else "–",
                                figures["p95_ms"] <= target if target else None))
    for view, figures in detail.get("after_write", {}).items():
        target = detail["targets_p95_ms"].get(view)
        found.append(SummaryRow(f"p95 of the web view's {view} right after a write, {pages:,}-page scope",
                                f"web_{view}_after_write_p95_ms", f"{figures['p95_ms']:.1f} ms",
                                f"≤ {target:.0f} ms" if target else "–",
                                figures["p95_ms"] <= target if target else None))
    found.append(SummaryRow(
        f"pages of the {sample['memories']}-memory sample the web view renders (title and every claim)",
        "web_sample_pages_rendered", f"{sample['rendered']}/{sample['active_pages']}", "all",
        sample["rendered"] == sample["active_pages"] and sample["graph_lists_every_page"]))
    return found


def _load_during(figures: dict) -> str:
    loads = figures.get("load_average")
    return f"{load(loads[:3])} → {load(loads[3:])}" if loads else "–"


def _table(detail: dict, measured: dict) -> list[str]:
    lines = ["| view | p50 | p95 | max | load average during it | target p95 |", "|---|---|---|---|---|---|"]
    for view, figures in measured.items():
        target = detail["targets_p95_ms"].get(view)
        lines.append(f"| `{view}` | {figures['p50_ms']:.1f} ms | {figures['p95_ms']:.1f} ms | "
                     f"{figures['max_ms']:.1f} ms | {_load_during(figures)} | {f'≤ {target:.0f} ms' if target else '—'} |")
    return lines


def section(detail: dict) -> list[str]:
    scope = detail["scope"]
    sample = detail["sample"]
    lines = [
        "How fast `wiki serve`'s web view renders for a person, and whether it renders every page of a compiled wiki.",
        "",
        f"**How.** The reads part's generated scope of {scope['wiki_pages']:,} pages with "
        f"{scope['wiki_section_claims']:,} claims (three per section, each citing one or two memories)"
        + (f" and {scope['wiki_compile_jobs']:,} compile runs" if "wiki_compile_jobs" in scope else "")
        + f"; {detail['method']}. A page view reads the page, its claims, the memories they cite, its backlinks and "
        "its related pages, and renders them through the markup sanitiser. The home, the graph and each page are "
        "kept by the server per scope revision (`app/view_cache.py`), so a view asked again is served from what "
        "was read at the same revision; a page asked for the first time is read whole.",
        "",
        *_table(detail, detail["views"]),
    ]
    if detail.get("after_write"):
        lines += ["", f"**Right after a write.** {detail['after_write_method']}: every request reads the view "
                      "afresh (the home's counts, changes and hubs; the graph's pages, the links among them, its "
                      "drawing and list).", "", *_table(detail, detail["after_write"])]
    lines += ["", f"On the compiled {sample['memories']}-memory sample: {sample['rendered']} of "
                  f"{sample['active_pages']} active pages rendered with their title and all their claims "
                  f"({sample['claims']:,} claims); the graph lists every active page: "
                  f"{'yes' if sample['graph_lists_every_page'] else 'no'}."
                  + (f" Failures: {', '.join(sample['failures'])}." if sample["failures"] else ""),
              "", "The client, the server and Postgres share the machine: with a load average above its CPU count "
                  "(the column above) the latencies include waiting for a CPU."]
    return lines
