"""The layering rules of docs/ARCHITECTURE.md, checked on the source text.

Pure Python: every file is read and parsed with `ast`; no project module is imported, so a broken
import elsewhere cannot hide a violation here. Every import statement counts wherever it sits: at
module level, inside a function, under `with workflow.unsafe.imports_passed_through():`, in a
`try`. Relative imports are made absolute, and `from package import name` points at the submodule
`package.name` when that file exists. Each test gathers all violations of its rule and fails once,
listing every one as `file:line: import — why`.

Layers, bottom to top (a module may import from its own layer or lower ones):

    0 domain, sample    1 store, planners    2 activities    3 workflows
    4 runtime, migrations    5 app    6 cli, servers

Outside the layering: tests/, bench/, chaos/, evals/, claude_sim/ (the Claude simulator) and the root
scripts (worker.py). Layer code never imports them.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

LAYERS: dict[str, int] = {
    "domain": 0,
    "messages": 0,
    "sample": 0,
    "store": 1,
    "planners": 1,
    "activities": 2,
    "workflows": 3,
    "runtime": 4,
    "migrations": 4,
    "app": 5,
    "cli": 6,
    "servers": 6,
}
# Stricter than the rank rule: the only project folders these may import from.
ONLY_FROM: dict[str, frozenset[str]] = {
    "domain": frozenset({"domain"}),
    "messages": frozenset({"messages", "domain"}),
    "store": frozenset({"store", "messages", "domain"}),
    "planners": frozenset({"planners", "messages", "domain"}),
}
# Layers these may not import although the rank rule allows it: the commands and the servers reach the
# database only through app/ use cases, so a store/ change has one caller to keep right.
NEVER_FROM: dict[str, frozenset[str]] = {
    "cli": frozenset({"store"}),
    "servers": frozenset({"store"}),
}
# claude_sim: the Claude simulator (a test and benchmark tool the product reaches only over HTTP).
OUTSIDE_LAYERS = ("tests", "bench", "chaos", "evals", "claude_sim", "openai_sim")
FORBIDDEN_LIBRARIES: dict[str, frozenset[str]] = {
    "domain": frozenset({"temporalio", "sqlalchemy", "asyncpg", "anthropic", "httpx"}),
    "messages": frozenset({"temporalio", "sqlalchemy", "asyncpg", "anthropic", "httpx"}),
    "store": frozenset({"temporalio"}),
    "planners": frozenset({"temporalio"}),
}
# (file, name) of private names imported from another project module, each with its reason.
PRIVATE_IMPORTS_ALLOWED: frozenset[tuple[str, str]] = frozenset()
MAX_LINES = 600


@dataclass(frozen=True)
class Import:
    file: str  # relative to the root, with forward slashes
    line: int
    statement: str  # a one-line rendering of the import
    target: str  # absolute dotted name of what is imported (a project module when one matches)


# ---------------------------------------------------------------------------------- reading the tree


def _module_name(relative: Path) -> str:
    parts = list(relative.with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def discover(root: Path) -> dict[str, Path]:
    """Every project module (layer folders, tests/bench/chaos/evals, root scripts) -> its path under root."""
    modules: dict[str, Path] = {}
    for path in sorted(root.glob("*.py")):
        modules[_module_name(path.relative_to(root))] = path.relative_to(root)
    for folder in (*LAYERS, *OUTSIDE_LAYERS):
        for path in sorted((root / folder).rglob("*.py")):
            relative = path.relative_to(root)
            if any(part.startswith(".") or part == "__pycache__" for part in relative.parts):
                continue
            modules[_module_name(relative)] = relative
    return modules


def _render(node: ast.Import | ast.ImportFrom, names: list[str]) -> str:
    shown = ", ".join(names[:3]) + (", …" if len(names) > 3 else "")
    if isinstance(node, ast.Import):
        return f"import {shown}"
    return f"from {'.' * node.level}{node.module or ''} import {shown}"


def imports_of(root: Path, module: str, relative: Path, modules: dict[str, Path]) -> list[Import]:
    source = (root / relative).read_text(encoding="utf-8")
    tree = ast.parse(source, filename=str(relative))
    package = module if relative.name == "__init__.py" else module.rpartition(".")[0]
    file = relative.as_posix()
    found: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                found.append(Import(file, node.lineno, _render(node, [alias.name]), alias.name))
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = package.split(".") if package else []
                anchor = anchor[: len(anchor) - (node.level - 1)] if node.level > 1 else anchor
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            by_target: dict[str, list[str]] = defaultdict(list)
            for alias in node.names:
                submodule = f"{base}.{alias.name}" if base else alias.name
                by_target[submodule if submodule in modules else base].append(alias.name)
            for target, names in by_target.items():
                found.append(Import(file, node.lineno, _render(node, names), target))
    return sorted(found, key=lambda item: (item.line, item.target))


def all_imports(root: Path) -> tuple[dict[str, Path], dict[str, list[Import]]]:
    modules = discover(root)
    return modules, {module: imports_of(root, module, path, modules) for module, path in modules.items()}


def _top(name: str) -> str:
    return name.partition(".")[0]


def _report(rule: str, violations: list[str]) -> str:
    return f"{len(violations)} violation(s) of: {rule}\n  " + "\n  ".join(violations)


# ---------------------------------------------------------------------------------- the rules


def layer_violations(root: Path) -> list[str]:
    modules, imports = all_imports(root)
    project_tops = {_top(module) for module in modules}
    violations = []
    for module, found in imports.items():
        layer = _top(module)
        if layer not in LAYERS:
            continue
        rank = LAYERS[layer]
        for item in found:
            target_top = _top(item.target)
            if target_top not in project_tops or target_top == layer:
                continue
            where = f"{item.file}:{item.line}: `{item.statement}` — {layer}/ (rank {rank})"
            if target_top not in LAYERS:
                violations.append(f"{where} imports {item.target}, which is outside the layering")
            elif LAYERS[target_top] > rank:
                violations.append(f"{where} imports {item.target} from the higher layer "
                                  f"{target_top}/ (rank {LAYERS[target_top]})")
            elif layer in ONLY_FROM and target_top not in ONLY_FROM[layer]:
                allowed = ", ".join(f"{name}/" for name in sorted(ONLY_FROM[layer]))
                violations.append(f"{where} imports {item.target}; {layer}/ may import only from {allowed}")
            elif target_top in NEVER_FROM.get(layer, frozenset()):
                violations.append(f"{where} imports {item.target}; {layer}/ reaches {target_top}/ only through app/")
    return violations


def library_violations(root: Path) -> list[str]:
    _, imports = all_imports(root)
    violations = []
    for module, found in imports.items():
        forbidden = FORBIDDEN_LIBRARIES.get(_top(module), frozenset())
        for item in found:
            if _top(item.target) in forbidden:
                violations.append(f"{item.file}:{item.line}: `{item.statement}` — {_top(module)}/ must not "
                                  f"import {_top(item.target)}")
    return violations


def private_import_violations(root: Path) -> list[str]:
    """Private names (`_name`) imported from another project module: a name used outside its module is
    not private, and a refactor of its module would break a caller it cannot see."""
    root_modules = discover(root)
    project_tops = {_top(module) for module in root_modules}
    violations = []
    for relative in root_modules.values():
        tree = ast.parse((root / relative).read_text(encoding="utf-8"), filename=str(relative))
        for node in ast.walk(tree):
            if not isinstance(node, ast.ImportFrom) or (node.level == 0 and _top(node.module or "") not in project_tops):
                continue
            for alias in node.names:
                private = alias.name.startswith("_") and not alias.name.startswith("__")
                if private and (relative.as_posix(), alias.name) not in PRIVATE_IMPORTS_ALLOWED:
                    violations.append(f"{relative.as_posix()}:{node.lineno}: "
                                      f"`{_render(node, [alias.name])}` — {alias.name} is private to its module")
    return violations


def _strongly_connected(graph: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's algorithm, iterative; components in a stable order."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            advanced = False
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = counter
                    counter += 1
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    advanced = True
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def _shortest_cycle(graph: dict[str, list[str]], start: str, within: set[str]) -> list[str]:
    """The shortest path start -> ... -> start inside one strongly connected component."""
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for successor in sorted(graph[node]):
                if successor not in within:
                    continue
                if successor == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if successor not in previous:
                    previous[successor] = node
                    following.append(successor)
        frontier = following
    return [start]


def cycle_violations(root: Path) -> list[str]:
    modules, imports = all_imports(root)
    graph: dict[str, list[str]] = {module: [] for module in modules}
    first_edge: dict[tuple[str, str], Import] = {}
    for module, found in imports.items():
        for item in found:
            if item.target in modules and (module, item.target) not in first_edge:
                first_edge[(module, item.target)] = item
                graph[module].append(item.target)
    violations = []
    for component in _strongly_connected(graph):
        if len(component) == 1 and component[0] not in graph[component[0]]:
            continue
        cycle = _shortest_cycle(graph, component[0], set(component))
        steps = [f"{a} -> {b} ({first_edge[(a, b)].file}:{first_edge[(a, b)].line} "
                 f"`{first_edge[(a, b)].statement}`)" for a, b in zip(cycle, cycle[1:], strict=False)]
        others = sorted(set(component) - set(cycle))
        tail = f"; the same cycle also runs through {', '.join(others)}" if others else ""
        violations.append(" ; ".join(steps) + tail)
    return violations


def long_file_violations(root: Path) -> list[str]:
    violations = []
    for relative in discover(root).values():
        lines = len((root / relative).read_text(encoding="utf-8").splitlines())
        if lines > MAX_LINES:
            violations.append(f"{relative.as_posix()}:{MAX_LINES + 1}: {lines} lines (at most {MAX_LINES})")
    return sorted(violations)


def unplaced_folders(root: Path) -> list[str]:
    known = {*LAYERS, *OUTSIDE_LAYERS}
    return [f"{folder.name}/ holds Python files but is neither a layer nor outside the layering"
            for folder in sorted(root.iterdir())
            if folder.is_dir() and folder.name not in known and not folder.name.startswith(".")
            and not folder.name.endswith(".egg-info") and any(folder.rglob("*.py"))]


# ---------------------------------------------------------------------------------- the tests


def test_every_folder_with_python_code_has_a_place():
    violations = unplaced_folders(ROOT)
    assert not violations, _report("every code folder is a layer or tests/bench/chaos/evals", violations)


def test_layers_import_only_their_own_or_lower_layers():
    violations = layer_violations(ROOT)
    assert not violations, _report("a module imports only from its own layer or lower ones", violations)


def test_inner_layers_stay_free_of_temporal_and_io_libraries():
    violations = library_violations(ROOT)
    assert not violations, _report(
        "store/, planners/, messages/ and domain/ never import temporalio; domain/ and messages/ never import "
        "sqlalchemy, asyncpg, anthropic or httpx", violations)


def test_no_import_cycles():
    violations = cycle_violations(ROOT)
    assert not violations, _report("no import cycle among project modules", violations)


def test_no_private_name_is_imported_from_another_module():
    violations = private_import_violations(ROOT)
    assert not violations, _report("a private name (`_x`) stays in its module: give it a public name to "
                                   "share it", violations)


def test_no_source_file_over_700_lines():
    violations = long_file_violations(ROOT)
    assert not violations, _report(f"no project source file over {MAX_LINES} lines", violations)


# ---------------------------------------------------------------------------------- the checker itself


def _tree(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_checker_finds_hidden_relative_and_submodule_imports(tmp_path):
    root = _tree(tmp_path, {
        "domain/__init__.py": "",
        "domain/rules.py": "def f():\n    from runtime import settings\n",
        "store/__init__.py": "",
        "store/repo.py": "from ..planners import claude\nimport temporalio\n",
        "planners/__init__.py": "",
        "planners/claude.py": "",
        "runtime/__init__.py": "",
        "runtime/settings.py": "",
        "workflows/__init__.py": "",
        "workflows/flow.py": ("from temporalio import workflow\n"
                              "with workflow.unsafe.imports_passed_through():\n"
                              "    from app import use_case\n"),
        "app/__init__.py": "",
        "app/use_case.py": "",
        "activities/__init__.py": "",
        "activities/steps.py": "from . import helpers\nfrom tests import fixtures\n",
        "activities/helpers.py": "from activities import steps\n",
        "tests/__init__.py": "",
        "tests/fixtures.py": "",
        "cli/__init__.py": "",
        "cli/command.py": "from app import use_case\ndef f():\n    from store.repo import x\n",
    })
    layers = layer_violations(root)
    assert any(v.startswith("domain/rules.py:2: `from runtime import settings`") and "runtime.settings" in v
               for v in layers), layers
    assert any(v.startswith("store/repo.py:1: `from ..planners import claude`") and "may import only" in v
               for v in layers), layers
    assert any(v.startswith("workflows/flow.py:3: `from app import use_case`") and "higher layer" in v
               for v in layers), layers
    assert any(v.startswith("activities/steps.py:2:") and "outside the layering" in v for v in layers), layers
    assert any(v.startswith("cli/command.py:3: `from store.repo import x`") and "only through app/" in v
               for v in layers), layers
    assert len(layers) == 5, layers
    assert library_violations(root) == ["store/repo.py:2: `import temporalio` — store/ must not import temporalio"]
    cycles = cycle_violations(root)
    assert len(cycles) == 1 and cycles[0].startswith("activities.helpers -> activities.steps"), cycles
    assert "activities/steps.py:1 `from . import helpers`" in cycles[0], cycles


def test_checker_finds_private_names_imported_from_project_modules(tmp_path):
    root = _tree(tmp_path, {
        "store/__init__.py": "",
        "store/repo.py": "def _helper(): ...\n__all__ = []\n",
        "app/__init__.py": "",
        "app/use_case.py": ("from store.repo import _helper\n"
                            "from . import __all__ as exported\n"
                            "from json import _default_decoder\n"
                            "def f():\n    from ..store import _repo\n"),
    })
    assert private_import_violations(root) == [
        "app/use_case.py:1: `from store.repo import _helper` — _helper is private to its module",
        "app/use_case.py:5: `from ..store import _repo` — _repo is private to its module",
    ]


def test_checker_counts_lines_of_source_files_only(tmp_path):
    body = "x = 1\n" * (MAX_LINES + 1)
    root = _tree(tmp_path, {"bench/big.py": body, "sample/catalogue.yaml": body, "store/ok.py": "x = 1\n" * MAX_LINES,
                            "docs/data.json": body, "newfolder/thing.py": ""})
    assert long_file_violations(root) == [f"bench/big.py:{MAX_LINES + 1}: {MAX_LINES + 1} lines (at most {MAX_LINES})"]
    assert unplaced_folders(root) == ["newfolder/ holds Python files but is neither a layer nor outside the layering"]
