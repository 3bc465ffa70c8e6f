"""The mutation check: `make mutants` (or `python -m tests.mutants [NAME ...] [--list]`).

Each mutant breaks one rule the README promises, with a small edit to a temporary copy of the
repository, and runs only the tests that pin that rule. A mutant the tests let through has
"survived": the rule is no longer pinned by any test, and the check fails.

Edits are located by name, not by line: the dotted name of a function, method, class or module-level
constant (found with `ast`), and inside its source a regular expression that must match exactly as
often as stated. When a refactor renames the function or rewrites the anchored text, the check stops
with "anchor not found" and names the mutant, so its anchor can be moved to where the rule lives now.

Before any mutant, the same tests run once on the unchanged copy: a mutant only counts as killed by
tests that pass without it.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# A mutant whose tests hang (a debounce that never ends, a compile retried forever) is killed by the
# tests' own timeouts long before this; it only bounds a run gone wrong.
TIMEOUT_SECONDS = 600


class AnchorNotFound(Exception):
    """A mutant's anchor (name or pattern) is not in the code any more."""


@dataclass(frozen=True)
class Edit:
    """Inside the source of `name` in `path`: replace `pattern` by `replacement` (`count` matches expected),
    or, with `first_statement`, insert that statement before the first statement of the function."""

    path: str
    name: str
    pattern: str = ""
    replacement: str = ""
    count: int = 1
    first_statement: str = ""


@dataclass(frozen=True)
class Mutant:
    name: str
    rule: str
    edits: tuple[Edit, ...]
    tests: tuple[str, ...]


@dataclass
class Outcome:
    mutant: Mutant
    verdict: str  # "killed", "survived", "error"
    seconds: float
    detail: str = ""
    output: str = field(default="", repr=False)


def _r(text: str) -> str:
    return re.escape(text)


BATCH_STEPS = "tests/compile/test_batch_steps.py::test_an_apply_carrying_a_plan_after_the_cursor_moved_writes_nothing"
RESOLVER_PROMOTIONS = "tests/compile/test_resolver_rules.py::test_a_promotion_needs_three_sightings_the_last_within_thirty_days"
RESOLVER_FUZZY = ("tests/compile/test_resolver_rules.py::"
                  "test_near_miss_names_stay_apart_and_variants_merge_only_within_a_page_type")
DEBOUNCE_BURST = "tests/compile/test_debounce.py::test_a_burst_of_retains_is_compiled_in_one_pass"
DEBOUNCE_ADMIN = "tests/compile/test_debounce.py::test_admin_and_bootstrap_compiles_do_not_wait_for_the_debounce"
MODEL_LIMITS = "tests/compile/test_model_limits.py"
SHUTDOWN = "tests/compile/test_shutdown.py::test_sigterm_lets_a_worker_finish_its_model_call_and_exit_cleanly"
CLI_RETAIN = "tests/operators/test_cli_retain.py::test_wiki_retain_starts_the_scope_compile_on_temporal"
RESUME_REJECTED = "tests/compile/test_resume.py::test_a_compile_resumed_after_apply_rejected_equals_an_uninterrupted_one"
RECORDED_HISTORIES = "tests/test_replay.py::test_recorded_history_replays"
CLAIM_QUOTES = ("tests/domain/test_claim_status.py::"
                "test_a_line_is_quoted_only_when_it_is_whole_sentences_of_one_memory")
CLAIM_ONE_MEMORY = "tests/domain/test_claim_status.py::test_a_line_one_memory_says_has_the_confidence_of_one_memory"
LINT_CAP = "tests/operators/test_lint.py::test_lint_hands_a_scope_at_most_twenty_promotions_a_night_most_seen_first"

MUTANTS: tuple[Mutant, ...] = (
    Mutant(
        "apply-ignores-cursor-with-a-plan",
        "an apply carrying a plan, run after the cursor moved, writes nothing",
        (Edit("activities/compile_steps.py", "CompileSteps._apply_batch",
              r"(if not await advance_cursor\([^)]*\))(:)", r"\1 and request.plan_id is None\2"),),
        (BATCH_STEPS,),
    ),
    Mutant(
        "cursor-cas-compares-time-only",
        "the cursor moves only from exactly where the batch started (time and id)",
        (Edit("store/compile_runs.py", "advance_cursor",
              r"\n\s*AND last_record_id IS NOT DISTINCT FROM CAST\(:expected_id AS uuid\)", ""),),
        (BATCH_STEPS,),
    ),
    Mutant(
        "promotion-after-two-sightings",
        "a mention becomes a page only after at least 3 sightings",
        (Edit("domain/promotion.py", "PROMOTION_MIN_SIGHTINGS", r"=\s*3\b", "= 2"),),
        (RESOLVER_PROMOTIONS,),
    ),
    Mutant(
        "promotion-window-unbounded",
        "a mention becomes a page only when last seen within 30 days",
        (Edit("domain/promotion.py", "PROMOTION_WINDOW_DAYS", r"=\s*30\b", "= 36500"),),
        (RESOLVER_PROMOTIONS,),
    ),
    Mutant(
        "resolver-trusts-proposed-promotions",
        "the resolver enforces the promotion rule on every plan, not only the prompt",
        (Edit("store/plan_resolution.py", "_resolve_promotions", _r("if not promotion_allowed("),
              "if False and not promotion_allowed("),),
        (RESOLVER_PROMOTIONS,),
    ),
    Mutant(
        "fuzzy-threshold-0.6",
        "fuzzy merges need trigram similarity >= 0.85: near-miss names stay apart",
        (Edit("domain/resolution.py", "SIMILAR_THRESHOLD", r"=\s*0\.85\b", "= 0.6"),),
        (RESOLVER_FUZZY,),
    ),
    Mutant(
        "fuzzy-lookup-ignores-type",
        # New pages and promotions, against stored pages and within a plan, all compare through this.
        "a merge that is not on the exact same name needs the same page type",
        (Edit("domain/resolution.py", "compare", _r("if a.type != b.type and best.rung"), "if False and best.rung"),),
        (RESOLVER_FUZZY,),
    ),
    Mutant(
        "promotion-skips-merge-lookup",
        "a promoted name goes through the same merge lookup as a new page (a variant of a page merges into it)",
        (Edit("store/plan_resolution.py", "_resolve_promotions", _r("entry = await _target_entry(conn, res, Proposal("),
              "entry = await _target_entry(conn, res, merge=False, proposal=Proposal("),
         Edit("store/plan_resolution.py", "_target_entry", _r("proposal: Proposal) -> ResolvedPage:"),
              "proposal: Proposal, merge: bool = True) -> ResolvedPage:"),
         Edit("store/plan_resolution.py", "_target_entry", _r("hit = await _merge_target(conn, res, proposal)"),
              "hit = await _merge_target(conn, res, proposal) if merge else None"),
         Edit("store/plan_resolution.py", "_target_entry", _r("if hit is None:"), "if hit is None and merge:")),
        (RESOLVER_FUZZY,),
    ),
    Mutant(
        "in-plan-merge-ignores-type",
        "two proposals of one plan merge only when their page types agree",
        (Edit("store/plan_resolution.py", "_planned_merge_target", _r("e.type == proposal.type and "), ""),),
        (RESOLVER_FUZZY,),
    ),
    Mutant(
        "debounce-off",
        "a burst of retains collapses into one pass",
        (Edit("workflows/compile.py", "CompileWorkflow._debounce", first_statement="return"),),
        (DEBOUNCE_BURST,),
    ),
    Mutant(
        "admin-and-bootstrap-wait",
        "admin and bootstrap compiles do not wait for the debounce",
        # Three guards keep them from waiting, all broken here: their options carry no quiet period, the
        # debounce is only for a retain-started run, and the urgent wake-up that starts them ends it.
        (Edit("workflows/compile.py", "CompileWorkflow._debounce",
              _r(' or self._inp.trigger != "memory_retain" or self._urgent_wake:'), ":"),
         Edit("runtime/temporal_client.py", "signal_compile", _r('debounce=trigger == "memory_retain"'),
              "debounce=True")),
        (DEBOUNCE_ADMIN,),
    ),
    Mutant(
        "retry-budget-ignored",
        "WIKI_LLM_RETRY_BUDGET_SECONDS ends a compile whose model calls keep failing",
        (Edit("workflows/compile.py", "CompileWorkflow._llm",
              r"\n\s*schedule_to_close_timeout=timedelta\(seconds=self\._inp\.options\.llm_retry_budget_seconds\),", ""),),
        (f"{MODEL_LIMITS}::test_the_retry_budget_reaches_every_model_call",
         f"{MODEL_LIMITS}::test_a_model_throttled_past_the_retry_budget_fails_the_compile"),
    ),
    Mutant(
        "model-queue-rate-unlimited",
        "WIKI_LLM_MAX_PER_SECOND caps the dispatch rate of WIKI_LLM_TASK_QUEUE",
        (Edit("app/worker.py", "build_llm_worker",
              r"\n\s*max_task_queue_activities_per_second=settings\.llm_max_per_second,", ""),),
        (f"{MODEL_LIMITS}::test_the_model_rate_limit_is_set_on_the_model_task_queue",),
    ),
    Mutant(
        "lint-promotions-uncapped",
        "the lint hands a scope's compile at most 20 promotion candidates a night",
        (Edit("domain/lint.py", "MAX_PROMOTIONS_PER_SCOPE", r"=\s*20\b", "= 1000"),),
        (LINT_CAP,),
    ),
    Mutant(
        "sigterm-ignored",
        "a worker shuts down gracefully on SIGTERM",
        (Edit("app/worker.py", "run_worker", _r("(signal.SIGTERM, signal.SIGINT)"), "(signal.SIGINT,)"),),
        (SHUTDOWN,),
    ),
    Mutant(
        "shutdown-abandons-activities",
        "a stopping worker finishes the activities it is running",
        (Edit("app/worker.py", "build_worker", r"graceful_shutdown_timeout=timedelta\(seconds=\d+\)",
              "graceful_shutdown_timeout=timedelta(0)"),),
        (SHUTDOWN,),
    ),
    Mutant(
        "retain-starts-without-waking",
        "`wiki retain` wakes the scope's compile with a signal-with-start",
        (Edit("runtime/temporal_client.py", "_signal_with_start",
              r'\n\s*start_signal="wake",\n\s*start_signal_args=\[(?s:.*?)\],', ""),),
        (CLI_RETAIN,),
    ),
    Mutant(
        "local-step-failure-unhandled",
        "a database step that fails for good ends the run like any failure (ledger row closed, CompileFailed)",
        (Edit("workflows/compile.py", "CompileWorkflow.run", _r("except (ActivityError, ApplicationError) as error:"),
              "except ActivityError as error:"),),
        (RESUME_REJECTED, RECORDED_HISTORIES),
    ),
    Mutant(
        "workflow-change-unpatched",
        "a workflow change that breaks a recorded history fails the tests until the versioning rule handles it",
        (Edit("workflows/compile.py", "CompileWorkflow._aggregate", first_statement="return"),),
        (RECORDED_HISTORIES,),
    ),
    Mutant(
        "a-quote-may-be-any-span",
        "a line is quoted only when it is whole sentences of a memory it cites, word for word",
        (Edit("domain/claim_checks.py", "quoted_in", _r("words in e.runs"), "f' {words} ' in e.text"),),
        (CLAIM_QUOTES,),
    ),
    Mutant(
        "confidence-counts-every-citation",
        "a line one memory says has the confidence of one memory, however many it cites",
        (Edit("domain/attribution.py", "attribute_body", _r("Support(quoted=frozenset(quoted)"),
              "Support(quoted=frozenset([*quoted, *refs])"),),
        (CLAIM_ONE_MEMORY,),
    ),
)


# ------------------------------------------------------------------------------------------ editing


def _named_node(tree: ast.Module, dotted: str) -> ast.AST:
    """The function, class or assignment that `dotted` names (`Class.method`, `function`, `CONSTANT`)."""
    body: list[ast.stmt] = tree.body
    node: ast.AST | None = None
    for part in dotted.split("."):
        node = next((n for n in body if _defines(n, part)), None)
        if node is None:
            raise AnchorNotFound(f"no definition named {part!r} (looking for {dotted!r})")
        body = getattr(node, "body", [])
    return node


def _defines(node: ast.stmt, name: str) -> bool:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name == name
    if isinstance(node, ast.Assign):
        return any(isinstance(t, ast.Name) and t.id == name for t in node.targets)
    if isinstance(node, ast.AnnAssign):
        return isinstance(node.target, ast.Name) and node.target.id == name
    return False


def apply_edit(source: str, edit: Edit) -> str:
    """`source` with `edit` applied; AnchorNotFound when its name or pattern is not there as expected."""
    tree = ast.parse(source)
    where = f"{edit.path}: {edit.name}"
    try:
        node = _named_node(tree, edit.name)
    except AnchorNotFound as missing:
        raise AnchorNotFound(f"{where}: {missing}") from None
    lines = source.splitlines(keepends=True)
    start = (node.decorator_list[0].lineno if getattr(node, "decorator_list", None) else node.lineno) - 1
    end = node.end_lineno
    if edit.first_statement:
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            raise AnchorNotFound(f"{where}: is not a function")
        first = node.body[0]
        lines.insert(first.lineno - 1, " " * first.col_offset + edit.first_statement + "\n")
        return "".join(lines)
    span = "".join(lines[start:end])
    found = len(re.findall(edit.pattern, span))
    if found != edit.count:
        raise AnchorNotFound(f"{where}: pattern {edit.pattern!r} matched {found} time(s), expected {edit.count}")
    mutated = re.sub(edit.pattern, edit.replacement, span)
    return "".join(lines[:start]) + mutated + "".join(lines[end:])


def mutated_files(root: Path, mutant: Mutant) -> dict[str, str]:
    """path -> mutated text for every file the mutant edits (several edits of one file compose)."""
    texts: dict[str, str] = {}
    for edit in mutant.edits:
        source = texts.get(edit.path)
        if source is None:
            source = (root / edit.path).read_text(encoding="utf-8")
        texts[edit.path] = apply_edit(source, edit)
        try:
            ast.parse(texts[edit.path])
        except SyntaxError as error:
            raise AnchorNotFound(f"{edit.path}: the mutant {mutant.name} does not parse ({error})") from None
    return texts


# ------------------------------------------------------------------------------------------ running


def copy_repository(destination: Path) -> None:
    """The files git knows or would add (tracked and untracked, not ignored), as they are on disk."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                            cwd=ROOT, check=True, capture_output=True).stdout.decode().split("\0")
    for relative in filter(None, listed):
        source = ROOT / relative
        if source.is_file():
            target = destination / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def _environment(copy: Path) -> dict[str, str]:
    # The copy's modules must win over the editable install of the original checkout; no bytecode
    # is written, so a restored file is never served from a mutant's cache.
    # A wide terminal, so pytest's short summary keeps each failure's reason on its line.
    return {**os.environ, "PYTHONPATH": str(copy), "PYTHONDONTWRITEBYTECODE": "1", "COLUMNS": "400"}


def check_imports_from(copy: Path) -> None:
    probe = "import store.plan_resolution as m; print(m.__file__)"
    where = subprocess.run([sys.executable, "-c", probe], cwd=copy, env=_environment(copy), check=True,
                           capture_output=True, text=True).stdout.strip()
    if not Path(where).resolve().is_relative_to(copy.resolve()):
        raise SystemExit(f"error: the copy imports the project from {where}, not from {copy}")


def run_tests(copy: Path, tests: tuple[str, ...]) -> tuple[int | None, str, float]:
    """pytest's exit code (None after a timeout), its output, and the seconds it took."""
    # A private base temp directory: under the shared default, every new pytest session deletes all but
    # the three newest sessions' directories, another session's running Postgres data included.
    command = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
               f"--basetemp={copy.parent / 'pytest'}", *tests]
    started = time.monotonic()
    process = subprocess.Popen(command, cwd=copy, env=_environment(copy), stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        output, _ = process.communicate(timeout=TIMEOUT_SECONDS)
        code: int | None = process.returncode
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            output, _ = process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
        code = None
    return code, output, time.monotonic() - started


def _first_failure(output: str) -> str:
    """The first failing test and pytest's one-line reason (from its short summary), to see that it
    failed on the rule and not on something else."""
    match = re.search(r"^(?:FAILED|ERROR) (\S+)(?: - (.*))?$", output, re.MULTILINE)
    if match is None:
        return "a failing test"
    test, reason = match.group(1).split("::")[-1], (match.group(2) or "").strip()
    return f"{test}: {reason[:160]}" if reason else test


def run_mutant(copy: Path, mutant: Mutant) -> Outcome:
    originals = {edit.path: (copy / edit.path).read_text(encoding="utf-8") for edit in mutant.edits}
    try:
        texts = mutated_files(copy, mutant)
    except AnchorNotFound as missing:
        return Outcome(mutant, "error", 0.0, f"anchor not found: {missing}")
    try:
        for path, text in texts.items():
            (copy / path).write_text(text, encoding="utf-8")
        code, output, seconds = run_tests(copy, mutant.tests)
    finally:
        for path, text in originals.items():
            (copy / path).write_text(text, encoding="utf-8")
    if code is None:
        return Outcome(mutant, "killed", seconds, f"tests timed out after {TIMEOUT_SECONDS} s", output)
    if code == 0:
        return Outcome(mutant, "survived", seconds, "every test passed", output)
    if code == 1:
        return Outcome(mutant, "killed", seconds, f"by {_first_failure(output)}", output)
    # 2 interrupted, 3 internal error, 4 usage error (a test id that does not exist), 5 no tests.
    return Outcome(mutant, "error", seconds, f"pytest exited with {code}", output)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.mutants", description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="mutants to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("--no-baseline", action="store_true", help="skip the run of the tests without mutants")
    args = parser.parse_args(argv)
    if args.list:
        for mutant in MUTANTS:
            print(f"{mutant.name}: {mutant.rule}")
        return 0
    unknown = set(args.names) - {m.name for m in MUTANTS}
    if unknown:
        print(f"error: unknown mutant(s): {', '.join(sorted(unknown))} (see --list)", file=sys.stderr)
        return 2
    chosen = [m for m in MUTANTS if not args.names or m.name in args.names]
    # Every anchor is checked before anything runs, so a stale one fails in seconds.
    stale = []
    for mutant in chosen:
        try:
            mutated_files(ROOT, mutant)
        except AnchorNotFound as missing:
            stale.append(f"{mutant.name}: {missing}")
    if stale:
        for line in stale:
            print(f"error: anchor not found: {line}", file=sys.stderr)
        return 2

    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="wiki-mutants-") as tmp:
        copy = Path(tmp) / "repo"
        copy_repository(copy)
        check_imports_from(copy)
        if not args.no_baseline:
            tests = tuple(dict.fromkeys(t for m in chosen for t in m.tests))
            code, output, seconds = run_tests(copy, tests)
            print(f"baseline: {len(tests)} test(s) without mutants, {seconds:.0f} s: "
                  f"{'pass' if code == 0 else 'FAIL'}", flush=True)
            if code != 0:
                print(output[-4000:], file=sys.stderr)
                print("error: the tests fail without any mutant; fix them first", file=sys.stderr)
                return 1
        outcomes = []
        for mutant in chosen:
            outcome = run_mutant(copy, mutant)
            outcomes.append(outcome)
            print(f"{outcome.verdict:>8}  {mutant.name:<36} {outcome.seconds:5.0f} s  {outcome.detail}", flush=True)
            if outcome.verdict == "error" and outcome.output:
                print(outcome.output[-3000:], file=sys.stderr)
    survived = [o.mutant.name for o in outcomes if o.verdict == "survived"]
    errors = [o.mutant.name for o in outcomes if o.verdict == "error"]
    killed = len(outcomes) - len(survived) - len(errors)
    print(f"\n{killed} of {len(outcomes)} mutants killed in {time.monotonic() - started:.0f} s"
          + (f"; survived: {', '.join(survived)}" if survived else "")
          + (f"; could not run: {', '.join(errors)}" if errors else ""))
    return 1 if survived or errors else 0


if __name__ == "__main__":
    sys.exit(main())
