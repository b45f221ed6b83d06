"""The local policy spells no hand-set number and no word list of our generator's templates.

Every tunable number lives in the weights file's ``constants`` section (read by
the weights loader, :mod:`thresher.policies.local.constants` and
:mod:`~thresher.policies.local.models`); a number anywhere else in
``policies/local/`` must be structural (0, 1, -1, 2 for a pair or a half) or one
of the few listed below with the reason it is not a setting. Word lists must not
mirror the phrasing of our own world generator (``synth/world``: e-mail
greetings and closings, sentence openers) or of the clue questions
``tasks/generate/phrase.py`` writes; nor may the policy carry a hand-written map of
words to words (the born/died/spouse table fitted to 2Wiki's question templates).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import thresher.policies.local as local_pkg
import thresher.synth.world as world_pkg
import thresher.tasks.generate.phrase as phrase_mod

LOCAL = Path(local_pkg.__file__).resolve().parent
WORLD = Path(world_pkg.__file__).resolve().parent
PHRASE = Path(phrase_mod.__file__).resolve()

#: the weights loader: the only modules that may spell a constant's value
LOADER = {"constants.py", "models.py"}
#: which weights file runs on an index (``thresher adapt``'s, or the shipped one): its
#: numbers (the stale share, a hash's length) and records (``policy_info``) are about
#: files, not how the policy searches
WEIGHTS_FILES = {"adapted.py"}
#: structural values: none, one, a pair or a half, the last (-1)
STRUCTURAL = {0, 1, 2, -1}
#: (file, enclosing definition, value) -> why the number is not a setting
ALLOWED: dict[tuple[str, str, float], str] = {
    ("stop.py", "<module>", 5): "STOP_TOP: part of the stop features' definition (refit to change)",
    ("features.py", "_base_rows", -0.3): "a feature's fill value: the model learns its weight",
    ("features.py", "_base_rows", 3): "the hop feature's cap: the model learns its weight",
    ("entities.py", "entity_spans", 3): "a lexical guard: a name of fewer than 3 characters",
    ("text.py", "holds_folded", 3): "a lexical guard: a phrase of fewer than 3 characters",
    ("text.py", "_close", 3): "a lexical guard: a one-word name of fewer than 3 characters",
    ("text.py", "best_sentences", 400): "the justification's length in characters (presentation)",
}


def _numbers(tree: ast.AST) -> Iterator[tuple[str, float, int]]:
    """(enclosing function or ``<module>``, value, line) of every numeric literal
    (a negated literal counts as its negative value)."""

    def walk(node: ast.AST, where: str) -> Iterator[tuple[str, float, int]]:
        for child in ast.iter_child_nodes(node):
            name = where
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = child.name
            if (
                isinstance(child, ast.UnaryOp)
                and isinstance(child.op, ast.USub)
                and isinstance(child.operand, ast.Constant)
                and _is_number(child.operand.value)
            ):
                yield name, -child.operand.value, child.lineno
                continue
            if isinstance(child, ast.Constant) and _is_number(child.value):
                yield name, child.value, child.lineno
            yield from walk(child, name)

    yield from walk(tree, "<module>")


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _policy_files() -> list[Path]:
    """Every module of ``policies/local/``, its subpackages' (``sources/``) included."""
    files = sorted(LOCAL.rglob("*.py"))
    assert len(files) > 10, f"policies/local not found at {LOCAL}"
    return files


def _rel(path: Path) -> str:
    """A module's path under ``policies/local/`` (``stop.py``, ``sources/spans.py``)."""
    return path.relative_to(LOCAL).as_posix()


def test_no_hand_set_number_outside_the_weights_loader() -> None:
    found = []
    for path in _policy_files():
        if _rel(path) in LOADER | WEIGHTS_FILES:
            continue
        for where, value, line in _numbers(ast.parse(path.read_text(encoding="utf-8"))):
            if value in STRUCTURAL or (_rel(path), where, value) in ALLOWED:
                continue
            found.append(f"{_rel(path)}:{line} ({where}): {value!r}")
    assert not found, (
        "hand-set numbers in policies/local/ (move each into the weights file's constants, "
        "thresher/policies/local/constants.py, and read it from the Constants the policy "
        "hands its parts):\n" + "\n".join(found)
    )


def test_the_allow_list_names_numbers_that_exist() -> None:
    present = set()
    for path in _policy_files():
        for where, value, _ in _numbers(ast.parse(path.read_text(encoding="utf-8"))):
            present.add((_rel(path), where, value))
    stale = [key for key in ALLOWED if key not in present]
    assert not stale, f"allow-list entries no longer in the code (remove them): {stale}"


# -- word lists -----------------------------------------------------------------------

_WORD = re.compile(r"[a-z]+")
#: English question words: a closed class every question and every Q&A page opens with
_QUESTION_WORDS = frozenset(
    {"what", "which", "who", "whom", "whose", "where", "when", "why", "how"}
)
_ALTERNATION = re.compile(r"\((?:\?:)?([a-z]+(?:\|[a-z]+){2,})\)")


def _template_strings(tree: ast.AST) -> Iterator[str]:
    """The literal text of every string and f-string of a module (f-string parts joined)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            yield "".join(
                v.value
                for v in node.values
                if isinstance(v, ast.Constant) and isinstance(v.value, str)
            )
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.value


def generator_openers() -> set[str]:
    """Words that open a sentence or line of the world generator's text templates (a
    template is a string with a space or ending in punctuation: "Hi {name},",
    "Best regards,", "Since {since}, {s} has worked ...")."""
    out: set[str] = set()
    for path in sorted(WORLD.rglob("*.py")):
        for text in _template_strings(ast.parse(path.read_text(encoding="utf-8"))):
            if not re.search(r"\s|[,.!?:]$", text):
                continue
            for piece in re.split(r"(?<=[.!?])\s+|\n", text):
                first = _WORD.match(piece.strip().lower())
                if first:
                    out.add(first.group(0))
    return out


def phrase_template_words() -> set[str]:
    """Every word of the clue-question templates ``tasks/generate/phrase.py`` writes."""
    tree = ast.parse(PHRASE.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "_TEMPLATES" for t in node.targets
        ):
            for text in _template_strings(node.value):
                out |= set(_WORD.findall(re.sub(r"\{[^}]*\}", " ", text.lower())))
    assert out, "phrase.py's _TEMPLATES not found: update this test"
    return out


def _split_strings(tree: ast.AST) -> Iterator[tuple[int, str]]:
    """(line, text) of every string split into words: ``"a b c".split()``, or a name
    bound to a string and split."""
    bound = {
        t.id: node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
        for t in node.targets
        if isinstance(t, ast.Name)
    }
    for node in ast.walk(tree):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "split"
        ):
            continue
        target = node.func.value
        if isinstance(target, ast.Name):
            target = bound.get(target.id, target)
        if isinstance(target, ast.Constant) and isinstance(target.value, str):
            yield target.lineno, target.value


def _word_lists(tree: ast.AST) -> Iterator[tuple[int, list[str]]]:
    """(line, words) of every literal word list: a set, tuple or list of three or more
    one-word strings, a string split into words, and a regex alternation of three or
    more words."""
    for line, text in _split_strings(tree):
        yield line, text.lower().split()
    for node in ast.walk(tree):
        if isinstance(node, ast.Set | ast.Tuple | ast.List):
            items = [
                e.value
                for e in node.elts
                if isinstance(e, ast.Constant) and isinstance(e.value, str)
            ]
            words = [w.lower() for w in items if re.fullmatch(r"[A-Za-z]+", w)]
            if len(words) >= 3:
                yield node.lineno, words
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            for group in _ALTERNATION.findall(node.value.lower()):
                yield node.lineno, group.split("|")


def _word_maps(tree: ast.AST) -> Iterator[int]:
    """Lines of dict literals (or ``dict.fromkeys`` of a word tuple to a word) mapping words
    to words: a hand-written lexicon."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            keys = [
                k for k in node.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)
            ]
            values = [
                v for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str)
            ]
            if len(keys) >= 2 and len(values) >= 2:
                yield node.lineno
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "fromkeys"
            and len(node.args) == 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            yield node.lineno


def test_no_word_list_mirrors_the_generators_templates() -> None:
    openers = generator_openers()
    phrasing = phrase_template_words()
    assert {"hi", "best", "thanks"} <= openers, "the generator's e-mail templates moved: update"
    found = []
    for path in _policy_files():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for line, words in _word_lists(tree):
            unique = set(words) - _QUESTION_WORDS
            for name, vocabulary in (("world generator openers", openers), ("phrase.py", phrasing)):
                shared = unique & vocabulary
                # function words open sentences everywhere: a list is a copy when most
                # of it is the templates' words
                if len(shared) >= 3 and 2 * len(shared) >= len(unique):
                    found.append(f"{path.name}:{line}: {sorted(shared)} (from {name})")
        if _rel(path) not in WEIGHTS_FILES:
            found += [f"{path.name}:{line}: a word-to-word map" for line in _word_maps(tree)]
    assert not found, "word lists copied from templates in policies/local/:\n" + "\n".join(found)
