"""Token counting, offline: exact BPE counts and cuts from vocabularies bundled with ``bpe-openai``.

``bpe-openai`` ships OpenAI's vocabularies inside the package, so counting
needs no download. ``o200k_base`` is the vocabulary of gpt-oss and therefore of
Context-1; ``cl100k_base`` is available for older models.

Its Python package builds every vocabulary's rank table when imported, and
counting needs none of it: the vocabularies are compiled into its Rust
extension. So :class:`BpeTokenCounter` loads that extension alone
(:func:`_rust_backend`) and imports the package only to decode a cut that ends
inside a character (which the extension refuses). What that saves:
``docs/startup.md``.
"""

from __future__ import annotations

import importlib.util
import sys
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from thresher.errors import ConfigError

__all__ = [
    "TokenCounter",
    "SegmentedCounter",
    "BpeTokenCounter",
    "newline_segments",
    "get_counter",
    "PromptCost",
    "GENERIC_COST",
    "CHATML_TOOLS_COST",
]


@runtime_checkable
class TokenCounter(Protocol):
    """Counts tokens the way the policy's model will see them."""

    name: str

    def count(self, text: str) -> int:
        """Number of tokens in ``text``."""
        ...

    def truncate(self, text: str, max_tokens: int) -> str:
        """The longest prefix of ``text`` with at most ``max_tokens`` tokens."""
        ...


@runtime_checkable
class SegmentedCounter(TokenCounter, Protocol):
    """A counter whose count of a text is the sum of its counts of :meth:`segments`.

    A caller that counts many texts sharing lines (a transcript re-rendered every
    turn) can then count each segment once and add.
    """

    def segments(self, text: str) -> list[str]:
        """Consecutive pieces of ``text`` (joined, they give it back) whose counts add up
        to ``count(text)``."""
        ...


def newline_segments(text: str) -> list[str]:
    """``text`` cut after each newline that the next line does not continue.

    OpenAI's BPE vocabularies (cl100k, o200k) encode each pre-token separately, and
    their pre-tokenizer ends a pre-token at a newline unless the next character is
    whitespace (newline runs and indents are one pre-token) or, for o200k, ``/``
    (punctuation absorbs the ``[\r\n/]*`` after it). A cut after ``"\n"`` where the next
    line starts with any other character is therefore a pre-token boundary, and the
    count of the text is the sum of the counts of the pieces
    (tests/test_tokens.py checks this on generated text).
    """
    lines = text.split("\n")
    out: list[str] = []
    current = [lines[0]]
    for line in lines[1:]:
        if line and not line[0].isspace() and line[0] != "/":
            out.append("\n".join(current) + "\n")
            current = [line]
        else:
            current.append(line)
    out.append("\n".join(current))
    return out


_BACKEND = "bpe_openai._bindings"


def _rust_backend() -> Any:
    """``bpe_openai``'s Rust extension, loaded without running the package's
    ``__init__`` (which builds every vocabulary's rank table in Python)."""
    if _BACKEND in sys.modules:
        return sys.modules[_BACKEND]
    package = importlib.util.find_spec("bpe_openai")
    if package is None or package.origin is None:
        raise ConfigError("the bpe-openai package is missing; reinstall thresher")
    found = sorted(Path(package.origin).parent.glob("_bindings*"))
    spec = importlib.util.spec_from_file_location(_BACKEND, found[0]) if found else None
    if spec is None or spec.loader is None:
        import bpe_openai._bindings as backend  # an unusual install: the plain way

        return backend
    module = importlib.util.module_from_spec(spec)
    sys.modules[_BACKEND] = module  # the package, if imported later, uses this one
    spec.loader.exec_module(module)
    return module


def _well_formed(text: str) -> str:
    """``text`` with lone surrogates replaced (as ``bpe_openai``'s ``Encoding`` does)."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


class BpeTokenCounter:
    """Exact BPE counts from a vocabulary bundled with ``bpe-openai``."""

    def __init__(self, encoding: str = "o200k_base") -> None:
        backend = _rust_backend()
        try:
            self._tokenizer = backend.tokenizer_for_encoding(encoding)
        except Exception as exc:  # the library raises its own error types
            raise ConfigError(
                f"unknown tokenizer '{encoding}'; use one of "
                + ", ".join(sorted(backend.supported_encodings()))
            ) from exc
        self.name = encoding
        self._encoding: Any = None  # the package's Encoding, loaded for a rare decode

    def _encode(self, text: str) -> list[int]:
        return list(self._tokenizer.encode(_well_formed(text)))

    def _decode(self, ids: list[int]) -> str:
        try:
            return str(self._tokenizer.decode(ids))
        except ValueError:  # a cut inside a character: decoded with a replacement char
            if self._encoding is None:
                import bpe_openai

                self._encoding = bpe_openai.get_encoding(self.name)
            return str(self._encoding.decode(ids))

    def count(self, text: str) -> int:
        if not text:
            return 0
        return sum(len(self._encode(piece)) for piece in _pieces(text))

    def segments(self, text: str) -> list[str]:
        return newline_segments(text)

    def truncate(self, text: str, max_tokens: int) -> str:
        if max_tokens <= 0:
            return ""
        kept: list[str] = []
        left = max_tokens
        for piece in _pieces(text):
            ids = self._encode(piece)
            if len(ids) <= left:
                kept.append(piece)
                left -= len(ids)
                continue
            kept.append(self._decode(ids[:left]))
            break
        return "".join(kept)


#: the BPE library refuses inputs of 1M characters or more; longer text is
#: counted in pieces cut at whitespace, which changes a count by at most a
#: token per cut.
_PIECE_CHARS = 100_000


def _pieces(text: str) -> list[str]:
    if len(text) <= _PIECE_CHARS:
        return [text]
    out: list[str] = []
    start = 0
    while start < len(text):
        end = min(start + _PIECE_CHARS, len(text))
        if end < len(text):
            cut = text.rfind(" ", start + _PIECE_CHARS // 2, end)
            end = cut if cut > start else end
        out.append(text[start:end])
        start = end
    return out


_counters_lock = threading.Lock()


def get_counter(encoding: str = "o200k_base") -> BpeTokenCounter:
    """A shared counter per vocabulary, loaded on first use; a thread asking while
    another loads it waits for that one instead of loading it again."""
    with _counters_lock:
        return _counter(encoding)


@lru_cache(maxsize=4)
def _counter(encoding: str) -> BpeTokenCounter:
    return BpeTokenCounter(encoding)


@dataclass(frozen=True, slots=True)
class PromptCost:
    """The tokens a chat template adds around a transcript's text, in the model's tokens.

    A server renders the messages through its chat template before counting
    ``usage.prompt_tokens``: role markers around each message, a frame around each
    tool call and tool result, a preamble before the tool schemas. The harness counts
    the texts with its own vocabulary and adds these costs; the ratio of the model's
    vocabulary to ours on the episode's text is not known in advance (digits, names),
    so it is calibrated from the server's reported usage (``text_scale`` is only its
    value before the first report).

    Attributes:
        name: what the costs were measured on.
        per_message: role markers of one message.
        per_tool_call: the frame of one tool call (tags, name and arguments keys).
        per_tool_result: the frame of one tool result, beyond ``per_message``.
        tools_block: the preamble and closing text around the tool schemas, plus
            the generation prompt (counted once when tools are declared).
        text_scale: tokens of the model per token of ours, before calibration.
        split_digits: the model's vocabulary reads each digit as a token (Qwen2,
            Llama 2, Mistral), where ours reads up to three: its ids and numbers are
            counted so before any report (retrieved text is full of them).
    """

    name: str = "generic"
    per_message: int = 4
    per_tool_call: int = 3
    per_tool_result: int = 0
    tools_block: int = 0
    text_scale: float = 1.0
    split_digits: bool = False


#: the harness's historical flat costs (4 per message, 3 per tool call), no calibration prior
GENERIC_COST = PromptCost()

#: ChatML with Hermes tool tags (Qwen2.5's own template, as llama.cpp --jinja renders it),
#: measured with llama-server's /apply-template and /tokenize: ``<|im_start|>role\n …
#: <|im_end|>\n`` is 5 tokens; ``<tool_call>\n{"name": …, "arguments": …}\n</tool_call>``
#: 13 around the name and arguments; ``<tool_response>\n…\n</tool_response>`` 7; the
#: "# Tools … <tools></tools> … <tool_call>" preamble 54, and ``<|im_start|>assistant\n`` 3;
#: Qwen2.5's vocabulary reads each digit as a token.
CHATML_TOOLS_COST = PromptCost(
    name="chatml-hermes",
    per_message=5,
    per_tool_call=13,
    per_tool_result=7,
    tools_block=57,
    split_digits=True,
)
