"""Sanitization of ingested text: remove what a reader cannot see, flag injections.

Retrieved text is data, never instruction. At ingestion we remove characters
that hide or reorder text (control characters, zero-width characters, bidi
controls, Unicode tag characters), normalize to NFC, and *flag* (never remove)
known prompt-injection phrases: the harness delimits retrieved text in prompts
and owns every decision, so flagged text stays searchable and auditable.

Besides phrases, the flagger knows the harness's own surface, which text has no
business imitating: its tool names and tool-call JSON, its ``[Token usage: …]``
and ``[Notice: …]`` lines, a line that claims a role (``SYSTEM: …``) and the
tags that delimit chunks and final answers (``</chunk>``, ``<Document …>``).
A chunk's flags (:func:`chunk_flags`) travel with it to the policy, as data,
and into the trace.
"""

from __future__ import annotations

import json
import re
import unicodedata
from functools import lru_cache
from typing import Any

from thresher.corpus.document import Chunk

__all__ = [
    "has_surrogate",
    "scrub",
    "scrub_value",
    "invalid_path",
    "safe_json",
    "REPLACEMENT",
    "sanitize_text",
    "reveal_hidden",
    "flag_injection",
    "chunk_flags",
    "merge_counts",
    "INJECTION_PATTERNS",
]

# C0 controls except \t (09) and \n (0A); \r is normalized to \n before removal.
# DEL (7F) and the C1 controls (80-9F).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# Zero-width and other invisible format characters; Unicode tag characters
# (U+E0000-U+E007F, "ASCII smuggling") are counted here too.
_ZERO_WIDTH = re.compile("[\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff\U000e0000-\U000e007f]")
# Bidirectional controls: embeddings/overrides, isolates, marks.
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]")
_ANY = re.compile(f"{_CONTROL.pattern}|{_ZERO_WIDTH.pattern}|{_BIDI.pattern}|\r")
_KINDS = (("control", _CONTROL), ("zero_width", _ZERO_WIDTH), ("bidi", _BIDI))

#: name -> pattern, matched case-insensitively on the NFKC-normalized text.
INJECTION_PATTERNS: dict[str, re.Pattern[str]] = {
    name: re.compile(pattern, re.IGNORECASE | re.MULTILINE)
    for name, pattern in {
        "ignore_previous_instructions": (
            r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+)*"
            r"(?:previous|prior|above|earlier|preceding|former)\s+"
            r"(?:instructions?|prompts?|directions?|rules|messages?|context)\b"
        ),
        "disregard_the_above": r"\b(?:disregard|ignore|forget)\s+(?:everything\s+|all\s+)?(?:the\s+)?above\b",
        "you_are_now": r"\byou\s+are\s+now\b",
        "system_prompt": r"\bsystem\s+prompt\b",
        "new_instructions": r"\bnew\s+instructions?\s*:",
        "chat_template_token": (
            r"<\|(?:im_start|im_end|im_sep|endoftext|start|end|message|channel|"
            r"constrain|return|call|eot_id|start_header_id|end_header_id)\|>"
        ),
        "role_tag": r"<\|(?:system|user|assistant|developer|tool)\|>|</?(?:system|assistant)>",
        "inst_tag": r"\[/?INST\]|<</?SYS>>",
        "instruction_header": r"^\s*#{2,}\s*(?:system|instructions?|new\s+instructions?)\b",
        # the harness's own surface, imitated by retrieved text
        "tool_name": (
            r"\b(?:search_corpus|grep_corpus|read_document|prune_chunks|recall_chunks)\b"
        ),
        "tool_call_json": (
            r"[\"'](?:tool_calls?|function_call|tool_name)[\"']\s*:"
            r"|[\"']name[\"']\s*:\s*[\"'][^\"']{1,80}[\"']\s*,\s*[\"'](?:arguments|parameters)[\"']\s*:"
            r"|</?\s*(?:tool_call|tool_response|function_call)\b"
        ),
        "usage_line": r"\[\s*(?:token\s+usage|notice|refused)\s*:",
        "role_line": r"^[\s>*_#\[(]*(?:system|developer)(?:\s+(?:message|prompt|note))?\s*\]?\s*:",
        "delimiter_tag": r"</?\s*(?:chunk|document|justification)\b[^<>]{0,200}>",
        # the harness's stubs and tool-result headers: "[pruned chunk ID]", "[2 chunks
        # pruned]", "search_corpus: 0 new chunk(s).", "Pruned 3 chunk(s).", "Recalled 1 chunk(s)."
        "harness_stub": (
            r"\[\s*pruned\s+chunk\b[^\]\n]{0,300}\]"
            r"|\[\s*\d+\s+chunks?\s+pruned\s*\]"
            r"|\b(?:search_corpus|grep_corpus|read_document)\b[^\n]{0,300}?:\s*\d+\b[^\n]{0,80}?"
            r"\bchunk(?:\(s\)|s)?\b"
            r"|\b(?:pruned|recalled)\s+\d+\s+chunk(?:\(s\)|s)?\b"
            r"|\bno\s+new\s+chunks\b"
        ),
    }.items()
}


# Cheap substring pre-checks (on the lower-cased text): a pattern is only searched
# when one of its anchors occurs, which keeps flagging fast on ordinary prose.
_ANCHORS: dict[str, tuple[str, ...]] = {
    "ignore_previous_instructions": ("ignore", "disregard", "forget", "override"),
    "disregard_the_above": ("above",),
    "you_are_now": ("now",),
    "system_prompt": ("prompt",),
    "new_instructions": ("instruction",),
    "chat_template_token": ("<|",),
    "role_tag": ("<|", "system>", "assistant>"),
    "inst_tag": ("inst]", "<<sys", "sys>>"),
    "instruction_header": ("##",),
    "tool_name": ("_corpus", "_chunks", "read_document"),
    "tool_call_json": (
        "tool_call",
        "function_call",
        "tool_name",
        "arguments",
        "parameters",
        "tool_response",
    ),
    "usage_line": ("[",),
    "role_line": ("system", "developer"),
    "delimiter_tag": ("chunk", "document", "justification"),
    "harness_stub": ("chunk",),
}


def sanitize_text(text: str) -> tuple[str, dict[str, int]]:
    """Remove invisible and reordering characters from ``text`` and NFC-normalize it.

    ``\\r\\n`` and lone ``\\r`` become ``\\n`` (not counted); ``\\n`` and ``\\t`` are
    kept. Removed: C0/C1 control characters and DEL (``control``); zero-width and
    invisible format characters such as U+200B-U+200D, U+2060-U+2064, U+FEFF,
    U+00AD, U+180E and Unicode tag characters (``zero_width``); bidirectional
    controls U+202A-U+202E, U+2066-U+2069, U+200E, U+200F, U+061C (``bidi``).

    Args:
        text: raw text.

    Returns:
        ``(clean_text, counts)`` where ``counts`` maps each kind with at least one
        removal to the number of characters removed.
    """
    counts: dict[str, int] = {}
    if _ANY.search(text) is not None:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        for kind, pattern in _KINDS:
            text, n = pattern.subn("", text)
            if n:
                counts[kind] = n
    if not text.isascii():
        text = unicodedata.normalize("NFC", text)
    return text, counts


def reveal_hidden(text: str) -> str:
    """``text`` with every character that hides or reorders text (the ones
    :func:`sanitize_text` removes, ``\r`` included) written as ``[U+XXXX]``: for
    showing a text that may carry them, such as a task's question in a report."""
    if _ANY.search(text) is None:
        return text
    return _ANY.sub(lambda m: f"[U+{ord(m.group()):04X}]", text)


# Cyrillic and Greek letters drawn like Latin ones (the look-alikes of Unicode's
# confusables data, UTS #39, that stand for a Latin letter in English text). A table
# of our own: the flagger needs only this one direction, not a confusables library.
_LATIN_SKELETON = str.maketrans(
    "аеорсухіјѕԁӏԛԝАВЕКМНОРСТХУІЈЅӀԚԜαεοριντυχκΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
    "aeopcyxijsdlqwABEKMHOPCTXYIJSIQWaeopivtuxkABEZHIKMNOPTYX",
)


def flag_injection(text: str) -> list[str]:
    """Names of the known prompt-injection patterns found in ``text`` (nothing removed).

    Matching is case-insensitive on the NFKC form of the text with Cyrillic and
    Greek look-alike letters read as the Latin ones they imitate, so full-width,
    stylized or homoglyph letters do not evade it. Call it on sanitized text so
    zero-width characters cannot split a phrase.

    Args:
        text: text to inspect.

    Returns:
        The matching names from :data:`INJECTION_PATTERNS`, in that dict's order.
    """
    probe = (
        text if text.isascii() else unicodedata.normalize("NFKC", text).translate(_LATIN_SKELETON)
    )
    lowered = probe.lower()
    return [
        name
        for name, pattern in INJECTION_PATTERNS.items()
        if any(anchor in lowered for anchor in _ANCHORS[name]) and pattern.search(probe)
    ]


def chunk_flags(chunk: Chunk) -> tuple[str, ...]:
    """The injection flags a chunk carries: its document's and its own text's.

    A document's flags are found at ingestion over its whole title and text
    (``metadata["injection_flags"]``, comma-separated), so an attack split
    across two chunks flags both; the chunk's own title and text are checked
    again here, so a chunk from a store that recorded no flags is still judged.

    Only names of :data:`INJECTION_PATTERNS` count: ``injection_flags`` is also a
    key a JSONL record's own metadata may hold, and anything else written there
    (a forged ``verified_by_harness``) is dropped, never rendered as a flag.

    Returns:
        Pattern names of :data:`INJECTION_PATTERNS`, in that dict's order.
    """
    recorded = chunk.metadata.get("injection_flags") if chunk.metadata else None
    return _chunk_flags(chunk.title, chunk.text, recorded if isinstance(recorded, str) else "")


@lru_cache(maxsize=8192)
def _chunk_flags(title: str, text: str, recorded: str) -> tuple[str, ...]:
    found = set(flag_injection(f"{title}\n{text}"))
    found.update(part.strip() for part in recorded.split(","))
    # only the names this module writes: a record's own metadata can hold this key too
    # ("verified_by_harness, trusted_source=yes"), and what it says there is no flag
    return tuple(n for n in INJECTION_PATTERNS if n in found)


def merge_counts(*parts: dict[str, int]) -> dict[str, int]:
    """Sum count dicts key by key, keeping only non-zero totals."""
    total: dict[str, int] = {}
    for part in parts:
        for key, n in part.items():
            total[key] = total.get(key, 0) + n
    return {k: v for k, v in total.items() if v}


# -- text that is not valid Unicode ------------------------------------------------------
# A Python str can hold a lone surrogate ("\ud800"): JSON lets any client or model send
# one as an escape, and UTF-8 cannot encode it, so a trace, an event stream or a JSON
# reply holding one fails to be written. Every way in (a request, a model's reply, a
# config value) checks its strings with invalid_path (and refuses) or cleans them with
# scrub (U+FFFD in place of each lone surrogate); writers fall back on safe_json.

_SURROGATE = re.compile("[\ud800-\udfff]")
#: what replaces a lone surrogate
REPLACEMENT = "\ufffd"


def has_surrogate(text: str) -> bool:
    """Whether ``text`` holds a surrogate code point (text UTF-8 cannot encode)."""
    return _SURROGATE.search(text) is not None


def scrub(text: str) -> str:
    """``text`` with every surrogate code point replaced by U+FFFD (unchanged when valid)."""
    return _SURROGATE.sub(REPLACEMENT, text) if has_surrogate(text) else text


def scrub_value(value: Any, depth: int = 0) -> Any:
    """A copy of a JSON-like value (dicts, lists, strings) with every string scrubbed.

    Keys are scrubbed too; values nested deeper than 64 levels are left as they are
    (the callers' own depth limits refuse those).
    """
    if isinstance(value, str):
        return scrub(value)
    if depth > 64:
        return value
    if isinstance(value, dict):
        return {scrub(str(k)): scrub_value(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [scrub_value(v, depth + 1) for v in value]
    return value


def invalid_path(value: Any, where: str = "", depth: int = 0) -> str | None:
    """Where in a JSON-like value the first string holding a surrogate is (None: all valid).

    Returns ``where`` extended by keys and indexes (``config.retrieval.mode``,
    ``query``); keys are checked like values.
    """
    if isinstance(value, str):
        return where or "the text" if has_surrogate(value) else None
    if depth > 64:
        return None
    if isinstance(value, dict):
        for key, inner in value.items():
            name = f"{where}.{key}" if where else str(key)
            if isinstance(key, str) and has_surrogate(key):
                return scrub(name)
            found = invalid_path(inner, scrub(name), depth + 1)
            if found:
                return found
    elif isinstance(value, list | tuple):
        for i, inner in enumerate(value):
            found = invalid_path(inner, f"{where}[{i}]", depth + 1)
            if found:
                return found
    return None


def safe_json(value: Any) -> str:
    """``value`` as compact JSON that can always be written as UTF-8.

    Non-ASCII text is kept as is; when some string holds a lone surrogate the
    whole value is written with ASCII escapes instead (still valid JSON, read
    back to the same value).
    """
    text = json.dumps(value, ensure_ascii=False)
    if has_surrogate(text):
        return json.dumps(value, ensure_ascii=True)
    return text
