"""Sanitization of ingested text: remove what a reader cannot see, flag injections.

Retrieved text is data, never instruction. At ingestion we remove characters
that hide or reorder text (control characters, zero-width characters, bidi
controls, Unicode tag characters), normalize to NFC, and *flag* (never remove)
known prompt-injection phrases: the harness delimits retrieved text in prompts
and owns every decision, so flagged text stays searchable and auditable.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["sanitize_text", "flag_injection", "merge_counts", "INJECTION_PATTERNS"]

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


def flag_injection(text: str) -> list[str]:
    """Names of the known prompt-injection patterns found in ``text`` (nothing removed).

    Matching is case-insensitive on the NFKC form of the text, so full-width or
    stylized letters do not evade it. Call it on sanitized text so zero-width
    characters cannot split a phrase.

    Args:
        text: text to inspect.

    Returns:
        The matching names from :data:`INJECTION_PATTERNS`, in that dict's order.
    """
    probe = text if text.isascii() else unicodedata.normalize("NFKC", text)
    lowered = probe.lower()
    return [
        name
        for name, pattern in INJECTION_PATTERNS.items()
        if any(anchor in lowered for anchor in _ANCHORS[name]) and pattern.search(probe)
    ]


def merge_counts(*parts: dict[str, int]) -> dict[str, int]:
    """Sum count dicts key by key, keeping only non-zero totals."""
    total: dict[str, int] = {}
    for part in parts:
        for key, n in part.items():
            total[key] = total.get(key, 0) + n
    return {k: v for k, v in total.items() if v}
