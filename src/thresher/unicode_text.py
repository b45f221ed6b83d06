"""Text that is not valid Unicode: found, refused or replaced at every entrance.

A Python ``str`` can hold a lone surrogate (``"\\ud800"``): JSON lets any client
or model send one as an escape, and UTF-8 cannot encode it, so a trace, an
event stream or a JSON reply holding one fails to be written. Every way in
(a request, a model's reply, a config value) checks its strings with
:func:`invalid_path` (and refuses) or cleans them with :func:`scrub` (U+FFFD in
place of each lone surrogate); writers fall back on :func:`safe_json`.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["has_surrogate", "scrub", "scrub_value", "invalid_path", "safe_json", "REPLACEMENT"]

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
