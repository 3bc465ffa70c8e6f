"""The bookkeeping of the workflow versioning rule (docs/ARCHITECTURE.md, "Rolling out a workflow change"):
releases from CHANGELOG.md, the version in pyproject.toml, the recordings folders, the patch calls in
workflows/ and their registry (workflows/patches.py).

Pure reading and checking, so tests/test_release_rule.py can hold the repository to the rule and try
the checks on made-up repositories.
"""

from __future__ import annotations

import ast
import base64
import json
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HISTORIES = ROOT / "tests" / "histories"
# "## 0.1.0 — 2026-11-27" for a release, "## 0.2.0 — unreleased" for the version being developed.
RELEASE_HEADING = re.compile(r"^## (?P<version>\d+\.\d+\.\d+) — (?P<date>\d{4}-\d{2}-\d{2}|unreleased)\s*$")
PATCH_CALLS = ("patched", "deprecate_patch")


class BadChangelog(Exception):
    """CHANGELOG.md does not list its versions as the rule reads them."""


@dataclass(frozen=True)
class Release:
    version: str
    released: bool  # dated in CHANGELOG.md; False for the version being developed


@dataclass(frozen=True)
class PatchCall:
    patch_id: str | None  # None when the argument is not a string literal
    kind: str  # "patched" or "deprecate_patch"
    where: str  # file:line


def project_version(root: Path = ROOT) -> str:
    return tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]


def changelog_releases(text: str) -> list[Release]:
    """Every version CHANGELOG.md lists, newest first; at most the newest may be unreleased."""
    releases: list[Release] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.startswith("## "):
            continue
        match = RELEASE_HEADING.match(line)
        if match is None:
            raise BadChangelog(f"CHANGELOG.md:{number}: {line!r} is not '## X.Y.Z — YYYY-MM-DD' or "
                               "'## X.Y.Z — unreleased'")
        releases.append(Release(match["version"], match["date"] != "unreleased"))
    if not releases:
        raise BadChangelog("CHANGELOG.md lists no version ('## X.Y.Z — YYYY-MM-DD')")
    versions = [tuple(int(part) for part in release.version.split(".")) for release in releases]
    if versions != sorted(set(versions), reverse=True):
        raise BadChangelog("CHANGELOG.md must list each version once, newest first")
    if any(not release.released for release in releases[1:]):
        raise BadChangelog("only the newest version in CHANGELOG.md may be unreleased")
    return releases


def recordings_folders(histories: Path = HISTORIES) -> list[str]:
    return sorted(path.name for path in histories.iterdir() if path.is_dir() and path.name != "__pycache__")


def patch_calls(source: str, filename: str) -> list[PatchCall]:
    """Every `workflow.patched(...)` and `workflow.deprecate_patch(...)` call in a workflow module."""
    calls = []
    nodes = [node for node in ast.walk(ast.parse(source, filename)) if isinstance(node, ast.Call)]
    for node in sorted(nodes, key=lambda node: (node.lineno, node.col_offset)):
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        if name not in PATCH_CALLS:
            continue
        argument = node.args[0] if node.args else None
        literal = argument.value if isinstance(argument, ast.Constant) and isinstance(argument.value, str) else None
        calls.append(PatchCall(literal, name, f"{filename}:{node.lineno}"))
    return calls


def workflow_patch_calls(root: Path = ROOT) -> list[PatchCall]:
    return [call for path in sorted((root / "workflows").glob("*.py"))
            for call in patch_calls(path.read_text(), str(path.relative_to(root)))]


def recorded_patches(history: dict) -> set[str]:
    """The patch ids whose markers a recorded history (its JSON) carries."""
    found = set()
    for event in history["events"]:
        marker = event.get("markerRecordedEventAttributes")
        if not marker or marker.get("markerName") != "core_patch":
            continue
        for payload in marker["details"]["patch-data"]["payloads"]:
            found.add(json.loads(base64.b64decode(payload["data"]))["id"])
    return found


def rule_violations(*, version: str, releases: list[Release], folders: list[str], calls: list[PatchCall],
                    registry: dict[str, str], markers_by_folder: dict[str, set[str]]) -> list[str]:
    """What breaks the rule, one line each (empty when the bookkeeping is in order).

    `registry`: patch id -> the release it came in; `markers_by_folder`: recordings folder -> the patch
    ids its recordings carry.
    """
    problems: list[str] = []
    order = [release.version for release in releases]
    if order[0] != version:
        problems.append(f"pyproject.toml says {version} but the newest version in CHANGELOG.md is {order[0]}")
        return problems
    previous = order[1] if len(order) > 1 else None
    kept = {version, previous} - {None}
    newest_released = next((release.version for release in releases if release.released), None)
    for folder in folders:
        if folder not in order:
            problems.append(f"tests/histories/{folder}/ is not a version in CHANGELOG.md")
        elif folder not in kept:
            problems.append(f"tests/histories/{folder}/ is older than the release before {version}: delete it")
    if newest_released is not None and newest_released not in folders:
        problems.append(f"{newest_released} is released but tests/histories/{newest_released}/ is missing "
                        "(`make histories` while it was the version being developed)")

    called: dict[str, set[str]] = {}
    for call in calls:
        if call.patch_id is None:
            problems.append(f"{call.where}: workflow.{call.kind} needs a string literal id (the rule's "
                            "bookkeeping reads it)")
            continue
        called.setdefault(call.patch_id, set()).add(call.kind)
        release = registry.get(call.patch_id)
        if release is None:
            problems.append(f"{call.where}: patch {call.patch_id!r} is not in workflows/patches.py: register it "
                            f"with the release it comes in ({version})")
        elif release == version and call.kind != "patched":
            problems.append(f"{call.where}: patch {call.patch_id!r} came in {version}, so it keeps both branches "
                            "(workflow.patched) until the next version")
        elif release == previous and call.kind != "deprecate_patch":
            problems.append(f"{call.where}: patch {call.patch_id!r} came in {previous}: in {version} its old branch "
                            "goes and workflow.deprecate_patch stays")
    for patch_id, release in registry.items():
        if release not in order:
            problems.append(f"patch {patch_id!r}: release {release} is not a version in CHANGELOG.md")
        elif release not in kept:
            problems.append(f"patch {patch_id!r} came in {release}, before {previous or version}: remove its "
                            "deprecate_patch call and its entry in workflows/patches.py")
        elif patch_id not in called:
            problems.append(f"patch {patch_id!r} is registered in workflows/patches.py but no workflow calls it")
        elif release == version and patch_id not in markers_by_folder.get(version, set()):
            problems.append(f"patch {patch_id!r} came in {version} but no recording in tests/histories/{version}/ "
                            "takes its new branch (`make histories`)")
    return problems
