"""The bookkeeping of the workflow versioning rule (docs/ARCHITECTURE.md, "Rolling out a workflow change").

The repository keeps it: the version in pyproject.toml is the newest in CHANGELOG.md, recordings sit
in folders of the current version and the release before it, every patch id in workflows/ is in
workflows/patches.py with the release it came in, and is at the step of its life that release asks.
The checks themselves are tried on generated repositories: any state built by the rule passes, and
each kind of breakage added to one is named.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field, replace
from pathlib import Path

import pytest

from tests.histories.record import RecordingRefused, recordings_folder
from tests.histories.releases import (
    HISTORIES,
    ROOT,
    BadChangelog,
    PatchCall,
    Release,
    changelog_releases,
    patch_calls,
    project_version,
    recorded_patches,
    recordings_folders,
    rule_violations,
    workflow_patch_calls,
)
from workflows.patches import PATCHES


def _markers(folder: Path) -> set[str]:
    return {patch for path in folder.glob("*.json") for patch in recorded_patches(json.loads(path.read_text()))}


def test_the_repository_keeps_the_rule():
    folders = recordings_folders()
    problems = rule_violations(
        version=project_version(), releases=changelog_releases((ROOT / "CHANGELOG.md").read_text()),
        folders=folders, calls=workflow_patch_calls(),
        registry={patch_id: patch.release for patch_id, patch in PATCHES.items()},
        markers_by_folder={folder: _markers(HISTORIES / folder) for folder in folders})
    assert not problems, "\n".join(problems)


# ------------------------------------------------------------------------------------- reading the files


def test_patch_calls_are_found_wherever_they_sit_and_a_computed_id_is_flagged():
    source = '''
from temporalio import workflow
from temporalio.workflow import patched

PATCH = "computed"

class W:
    async def run(self):
        if workflow.patched("alpha"):
            pass
        workflow.deprecate_patch("beta")
        if patched("gamma") and workflow.patched(PATCH):
            pass
        workflow.now()
'''
    calls = patch_calls(source, "workflows/x.py")
    assert [(call.patch_id, call.kind) for call in calls] == [
        ("alpha", "patched"), ("beta", "deprecate_patch"), ("gamma", "patched"), (None, "patched")]
    assert calls[0].where == "workflows/x.py:9"


@pytest.mark.parametrize("text, reason", [
    ("# Changelog\n", "lists no version"),
    ("## 0.1.0 - 2026-11-27\n", "is not '## X.Y.Z"),
    ("## 0.1.0 — yesterday\n", "is not '## X.Y.Z"),
    ("## 0.1.0 — 2026-11-27\n## 0.2.0 — 2026-12-01\n", "newest first"),
    ("## 0.2.0 — 2026-12-01\n## 0.2.0 — 2026-11-27\n", "each version once"),
    ("## 0.2.0 — 2026-12-01\n## 0.1.0 — unreleased\n", "only the newest"),
])
def test_a_changelog_the_rule_cannot_read_is_refused(text, reason):
    with pytest.raises(BadChangelog, match=reason):
        changelog_releases(text)


def test_the_changelog_headings_are_read_newest_first():
    text = "# Changelog\n\n## 0.10.0 — unreleased\n\n- x\n\n## 0.9.1 — 2026-12-01\n\n## 0.1.0 — 2026-11-27\n"
    assert changelog_releases(text) == [Release("0.10.0", False), Release("0.9.1", True), Release("0.1.0", True)]


def test_make_histories_writes_the_current_version_and_never_a_recorded_release(tmp_path: Path):
    histories = tmp_path / "histories"
    (histories / "0.1.0").mkdir(parents=True)
    (histories / "0.1.0" / "small_compile_run_1.json").write_text("{}")
    (tmp_path / "CHANGELOG.md").write_text("## 0.2.0 — unreleased\n\n## 0.1.0 — 2026-11-27\n")
    assert recordings_folder("0.2.0", histories, tmp_path) == histories / "0.2.0"
    with pytest.raises(RecordingRefused, match="0.1.0 is released and recorded"):
        recordings_folder("0.1.0", histories, tmp_path)
    with pytest.raises(RecordingRefused, match="not in CHANGELOG.md"):
        recordings_folder("0.3.0", histories, tmp_path)
    # A release being declared is recorded once, while its folder is still empty.
    (tmp_path / "CHANGELOG.md").write_text("## 0.2.0 — 2026-12-01\n\n## 0.1.0 — 2026-11-27\n")
    assert recordings_folder("0.2.0", histories, tmp_path) == histories / "0.2.0"


# ------------------------------------------------------------------------ generated repositories


@dataclass
class Repository:
    """What the rule reads of a repository."""

    version: str
    releases: list[Release]
    folders: list[str]
    calls: list[PatchCall]
    registry: dict[str, str]
    markers: dict[str, set[str]] = field(default_factory=dict)

    def violations(self) -> list[str]:
        return rule_violations(version=self.version, releases=self.releases, folders=self.folders,
                               calls=self.calls, registry=self.registry, markers_by_folder=self.markers)


def kept_by_the_rule(rng: random.Random) -> Repository:
    """A repository in order: a few releases, the newest perhaps still being developed, recordings of
    the kept versions, patches of the current version (both branches, recorded) and of the release
    before it (deprecated)."""
    major, minor = 0, rng.randint(1, 3)
    versions = []
    for _ in range(rng.randint(1, 5)):
        versions.append(f"{major}.{minor}.{rng.randint(0, 2)}")
        minor += rng.randint(1, 2)
    versions.reverse()
    developing = rng.random() < 0.5 and len(versions) > 1
    releases = [Release(version, not (index == 0 and developing)) for index, version in enumerate(versions)]
    current, previous = versions[0], versions[1] if len(versions) > 1 else None
    newest_released = next(release.version for release in releases if release.released)
    folders = {newest_released}
    if previous and rng.random() < 0.5:
        folders.add(previous)
    registry, calls, markers = {}, [], {}
    for index in range(rng.randint(0, 4)):
        release = rng.choice([v for v in (current, previous) if v])
        patch_id = f"patch-{index}-{rng.randint(0, 999)}"
        registry[patch_id] = release
        kind = "patched" if release == current else "deprecate_patch"
        calls += [PatchCall(patch_id, kind, f"workflows/compile.py:{rng.randint(1, 500)}")
                  for _ in range(rng.randint(1, 2))]
        if release == current:
            folders.add(current)
            markers.setdefault(current, set()).add(patch_id)
    rng.shuffle(calls)
    return Repository(current, releases, sorted(folders), calls, registry, markers)


def _ids(repo: Repository, release: str | None) -> list[str]:
    return [patch_id for patch_id, came_in in repo.registry.items() if came_in == release]


def break_it(repo: Repository, rng: random.Random) -> tuple[Repository, str] | None:
    """One breakage of the rule, if this repository allows it, and a word the violation must name."""
    versions = [release.version for release in repo.releases]
    kind = rng.choice(["unregistered", "wrong step", "stale patch", "uncalled", "unknown folder", "old folder",
                       "release unrecorded", "version", "unrecorded patch", "computed id", "unknown release"])
    if kind == "unregistered":
        return replace(repo, calls=[*repo.calls, PatchCall("brand-new", "patched", "workflows/lint.py:7")]), "brand-new"
    if kind == "wrong step" and repo.registry:
        patch_id = rng.choice(list(repo.registry))
        flipped = [replace(call, kind="deprecate_patch" if call.kind == "patched" else "patched")
                   if call.patch_id == patch_id else call for call in repo.calls]
        return replace(repo, calls=flipped), patch_id
    if kind == "stale patch" and len(versions) > 2:
        return (replace(repo, registry=repo.registry | {"ancient": versions[2]},
                        calls=[*repo.calls, PatchCall("ancient", "deprecate_patch", "workflows/compile.py:3")]),
                "ancient")
    if kind == "uncalled" and repo.registry:
        patch_id = rng.choice(list(repo.registry))
        return replace(repo, calls=[call for call in repo.calls if call.patch_id != patch_id]), patch_id
    if kind == "unknown folder":
        return replace(repo, folders=sorted([*repo.folders, "9.9.9"])), "9.9.9"
    if kind == "old folder" and len(versions) > 2:
        return replace(repo, folders=sorted({*repo.folders, versions[-1]})), versions[-1]
    if kind == "release unrecorded":
        newest_released = next(release.version for release in repo.releases if release.released)
        return replace(repo, folders=[f for f in repo.folders if f != newest_released]), newest_released
    if kind == "version":
        return replace(repo, version="99.0.0"), "99.0.0"
    if kind == "unrecorded patch" and _ids(repo, repo.version):
        patch_id = rng.choice(_ids(repo, repo.version))
        return replace(repo, markers={repo.version: repo.markers[repo.version] - {patch_id}}), patch_id
    if kind == "computed id":
        return replace(repo, calls=[*repo.calls, PatchCall(None, "patched", "workflows/compile.py:42")]), "string literal"
    if kind == "unknown release":
        return replace(repo, registry=repo.registry | {"orphan": "7.7.7"},
                       calls=[*repo.calls, PatchCall("orphan", "patched", "workflows/compile.py:9")]), "orphan"
    return None


@pytest.mark.parametrize("seed", range(40))
def test_a_repository_kept_by_the_rule_passes_and_each_breakage_is_named(seed):
    rng = random.Random(seed)
    repo = kept_by_the_rule(rng)
    assert repo.violations() == [], repo
    broken = 0
    for _ in range(30):
        breakage = break_it(repo, rng)
        if breakage is None:
            continue
        broken_repo, named = breakage
        problems = broken_repo.violations()
        assert any(named in problem for problem in problems), (named, problems, broken_repo)
        broken += 1
    assert broken >= 10
