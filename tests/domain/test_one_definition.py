"""One definition per concept: what a name is, which words are closed-class, which words say a kind.

Each rule lives in one module (domain/name_words.py, domain/closed_class.py, domain/kinds.py) and every
part of the product that needs it imports it from there. These tests parse every source file of the
layers with `ast` (nothing is imported) and fail when a second definition appears: a module of its own
reading wordfreq or defining a Zipf threshold, a literal list of closed-class words, a literal table of
kind words; and when a known caller stops going through the one module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from domain.closed_class import FUNCTION_WORDS, INTERJECTIONS
from domain.kinds import VOCABULARY

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("domain", "messages", "sample", "store", "planners", "activities", "workflows", "runtime", "app", "cli",
          "servers")
NAME_RULE = "domain/name_words.py"
CLOSED_CLASS = "domain/closed_class.py"
KINDS = "domain/kinds.py"
# Literal word lists that share words with a concept and are something else, by (file, variable).
NOT_A_SECOND_DEFINITION: dict[tuple[str, str], str] = {
    ("domain/name_key.py", "_LEGAL_ENGLISH"): "legal forms a name key drops, checked against cleanco's terms",
    ("planners/scripted/aggregation.py", "_ROLLUP_GROUPS"): "which kinds each rollup hub gathers",
    ("domain/closed_class.py", "HONORIFICS"): "titles: closed-class words the kinds vocabulary reads as people",
    ("domain/fact_rules.py", "ATTRIBUTES"): "an attribute's phrasings: the nouns that state whom someone is "
                                            "partnered with, read as a fact's wording, not as a page's kind",
}
# A literal is a second definition when it holds at least this many of a concept's words, making up
# at least this share of it (a table of US states holds "in", "me", "oh" and "or" among fifty others).
SHARED_WORDS = 4
SHARED_SHARE = 0.4


def _sources() -> list[tuple[str, ast.Module]]:
    found = []
    for layer in LAYERS:
        for path in sorted((ROOT / layer).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            found.append((relative, ast.parse(path.read_text(encoding="utf-8"), filename=relative)))
    return found


SOURCES = _sources()


def _string_elements(node: ast.AST) -> list[str]:
    """The string literals of a set, list or tuple literal, or of the iterable a frozenset/set/tuple call
    is built from, or a dict literal's keys."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("frozenset", "set", "tuple"):
        return _string_elements(node.args[0]) if node.args else []
    if isinstance(node, (ast.Set, ast.List, ast.Tuple)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if isinstance(node, ast.Dict):
        return [k.value for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
    return []


def _literals(tree: ast.Module) -> list[tuple[int, str, list[str]]]:
    """Every literal list of strings with its line and the variable it is assigned to (or "")."""
    owner: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            name = next((t.id for t in targets if isinstance(t, ast.Name)), "")
            for child in ast.walk(node.value) if node.value is not None else ():
                owner.setdefault(id(child), name)
    return [(node.lineno, owner.get(id(node), ""), words) for node in ast.walk(tree)
            if isinstance(node, (ast.Set, ast.List, ast.Tuple, ast.Dict, ast.Call))
            and (words := _string_elements(node))]


def test_only_the_name_rule_reads_word_frequencies_or_defines_a_zipf_threshold() -> None:
    offenders = []
    for path, tree in SOURCES:
        if path == NAME_RULE:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                modules = [node.module or ""] if isinstance(node, ast.ImportFrom) else [a.name for a in node.names]
                if any(m.split(".")[0] in ("wordfreq", "gender_guesser", "nicknames") for m in modules):
                    offenders.append(f"{path}:{node.lineno}: imports {modules[0]}")
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    if isinstance(target, ast.Name) and "ZIPF" in target.id.upper():
                        offenders.append(f"{path}:{node.lineno}: defines {target.id}")
            if isinstance(node, ast.Name) and node.id == "zipf_frequency":
                offenders.append(f"{path}:{node.lineno}: calls zipf_frequency")
    assert offenders == [], "\n".join(offenders)


@pytest.mark.parametrize(("home", "vocabulary", "what"), [
    (CLOSED_CLASS, FUNCTION_WORDS | INTERJECTIONS, "closed-class words"),
    (KINDS, frozenset(VOCABULARY), "kind words"),
])
def test_no_second_literal_list_of_the_words_of_one_concept(home: str, vocabulary: frozenset[str], what: str) -> None:
    offenders = []
    for path, tree in SOURCES:
        if path == home:
            continue
        for line, name, words in _literals(tree):
            distinct = {w.lower() for w in words}
            shared = sorted(distinct & vocabulary)
            if (len(shared) >= SHARED_WORDS and len(shared) >= SHARED_SHARE * len(distinct)
                    and (path, name) not in NOT_A_SECOND_DEFINITION):
                offenders.append(f"{path}:{line}: a literal list of {what} ({', '.join(shared[:6])})")
    assert offenders == [], "\n".join(offenders)


# Each concept's known callers, and the module they must import it from.
CALLERS = {
    "domain/claim_terms.py": ("domain.name_words", "domain.closed_class"),
    "domain/recall.py": (),
    "app/recall_retrieve.py": ("domain.name_words",),
    "domain/name_key.py": ("domain.name_words", "domain.closed_class"),
    "domain/names.py": ("domain.kinds", "domain.closed_class"),
    "domain/facts.py": ("domain.closed_class",),
    "domain/resolution.py": ("domain.kinds", "domain.closed_class"),
    "planners/text_entities.py": ("domain.name_words", "domain.closed_class", "domain.kinds"),
    # the gate and the writer's gate ask it through the one grounding rule (domain/claim_terms.py)
    "activities/claim_gate.py": ("domain.grounding",),
    "domain/writer_grounding.py": ("domain.grounding",),
}


@pytest.mark.parametrize("path", sorted(CALLERS))
def test_the_known_callers_go_through_the_one_module(path: str) -> None:
    tree = dict(SOURCES)[path]
    imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    missing = [module for module in CALLERS[path] if module not in imported]
    assert missing == [], f"{path} no longer imports {missing}"
    defined = {target.id for node in ast.walk(tree) if isinstance(node, ast.FunctionDef | ast.Assign)
               for target in ([ast.Name(id=node.name)] if isinstance(node, ast.FunctionDef) else node.targets)
               if isinstance(target, ast.Name)}
    # The old private rules may not come back under their old names.
    assert not defined & {"capitalised_words", "is_rare_word", "_is_ordinary_word", "_acts_like_someone",
                          "_zipf", "PRONOUNS", "ARTICLES", "CONNECTORS", "NEVER_NAMES", "TITLES",
                          "_KIND_CLASSES", "_OWN_WORD_KINDS", "_NEAR_WORD_KINDS"}, path


def test_the_scan_finds_a_second_definition_when_there_is_one() -> None:
    planted = ast.parse('STOP = frozenset({"the", "a", "of", "and"})\nKINDS = {"cafe": 1, "bar": 2, "hotel": 3, "pub": 4}')
    found = [words for _, _, words in _literals(planted)]
    assert any(len(set(w) & FUNCTION_WORDS) >= SHARED_WORDS for w in found)
    assert any(len(set(w) & set(VOCABULARY)) >= SHARED_WORDS for w in found)
