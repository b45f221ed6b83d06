"""One typed configuration object, with defaults that follow the Context-1 report.

Each section is one validated model: a frozen pydantic dataclass, so a value is
converted to its field's type as it comes in (``--set budget.total=16384`` gives
the string ``"16384"``, the section holds ``16384``) and ``dataclasses.replace``
checks a copy as the constructor does. ``Config.load(path)`` reads a TOML or
JSON file whose tables mirror the sections; ``config.override({"budget.total":
16384})`` returns a copy with dotted keys replaced (the CLI and API use it).

Numbers are :data:`Count` or :data:`Amount`: finite and not negative (a boolean is
not a number, an integer setting takes no fraction); text is :data:`Text` (valid
Unicode); a choice is a ``Literal``; the budget's shares lie in (0, 1] with the
soft one not above the hard one. Each bad value is one ``ConfigError`` naming the
setting and what it takes (:func:`setting_error` words pydantic's findings).

A Config remembers which settings were given (:attr:`Config.given`: every dotted
name a file, ``--set`` or ``override`` set, whatever its value), so a default can
give way where an explicit choice must be honoured or refused: the LLM policy
fits a default ``budget.total`` to its server's context, never a given one.

The ``[policy]`` section (``--set policy.keep_docs=8``) holds the chosen policy's
own settings, which only the policy knows: they are kept as given here and
checked when the policy is built (:func:`thresher.policies.build_policy`), where
an unknown one is refused with the policy's known settings listed.
"""

from __future__ import annotations

import functools
import json
import re
import tomllib
from dataclasses import dataclass, field, fields, is_dataclass, replace
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin, get_type_hints

from pydantic import (
    AfterValidator,
    AllowInfNan,
    BeforeValidator,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    model_validator,
)
from pydantic import dataclasses as validated
from pydantic_core import ErrorDetails, PydanticCustomError

from thresher.errors import ConfigError

__all__ = [
    "RetrievalMode",
    "Tokenizer",
    "ReasoningEffort",
    "ToolChoice",
    "FirstResponseFormat",
    "ChunkingConfig",
    "RetrievalConfig",
    "GrepConfig",
    "BudgetConfig",
    "EpisodeConfig",
    "LLMConfig",
    "Config",
    "Count",
    "Amount",
    "Text",
    "coerce_setting",
    "config_error",
    "setting_error",
]


#: a surrogate code point: text UTF-8 cannot encode (JSON can still spell it ``"\ud800"``);
#: the same check as :func:`thresher.corpus.sanitize.has_surrogate`, one layer down
_SURROGATE = re.compile("[\ud800-\udfff]")
_REPLACEMENT = "\ufffd"

#: the largest number any setting takes (a bound that keeps the arithmetic finite)
MAX_NUMBER = 10**15

#: what ``search_corpus`` runs
RetrievalMode = Literal["hybrid", "bm25", "dense"]
#: token vocabularies counted offline (bpe-openai)
Tokenizer = Literal["o200k_base", "cl100k_base"]
#: gpt-oss reasoning effort; "" sends none
ReasoningEffort = Literal["", "low", "medium", "high"]
#: the ``tool_choice`` sent to a chat endpoint (OpenAI's values that need no tool name)
ToolChoice = Literal["auto", "required"]
#: how the first replies are constrained: a JSON Schema of the tool calls, or not at all
FirstResponseFormat = Literal["json_schema", "none"]


_URL_SCHEMES = ("http", "https")


def check_url(value: str, label: str) -> str:
    """``value`` when it is an ``http(s)://host[:port][/path]`` URL a client can open.

    Raises:
        ConfigError: one line naming ``label`` and what is wrong (a bracket left open,
            a port that is not a number, no host, another scheme, spaces).
    """
    from urllib.parse import urlsplit

    example = "e.g. http://localhost:8000/v1"
    if any(c.isspace() or not c.isprintable() for c in value):
        raise ConfigError(f"{label} must be a URL without spaces ({example}), got {value!r}")
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018  (parsing the port raises for one that is not a number)
    except ValueError as exc:
        raise ConfigError(f"{label} is not a valid URL ({exc}; {example}), got {value!r}") from exc
    if parts.scheme not in _URL_SCHEMES or not parts.hostname:
        raise ConfigError(
            f"{label} must be an http:// or https:// URL with a host ({example}), got {value!r}"
        )
    if not parts.hostname.isascii():  # the HTTP clients encode it by IDNA 2008, as here
        import idna

        try:
            idna.encode(parts.hostname)
        except idna.IDNAError as exc:
            raise ConfigError(
                f"{label} has a host name that is not valid ({exc}; {example}), got {value!r}"
            ) from exc
    return value


def _not_boolean(value: Any) -> Any:
    """A boolean is not a number (pydantic's lax mode would read ``True`` as 1)."""
    if isinstance(value, bool):
        raise PydanticCustomError("boolean_number", "a boolean is not a number")
    return value


def _valid_unicode(value: str) -> str:
    """Text UTF-8 can encode: no lone surrogate (a JSON ``"\\ud800"``)."""
    if _SURROGATE.search(value):
        raise PydanticCustomError("lone_surrogate", "a lone surrogate")
    return value


#: a whole number setting: not a boolean, from 0 to :data:`MAX_NUMBER`
Count = Annotated[int, BeforeValidator(_not_boolean), Field(ge=0, le=MAX_NUMBER)]
#: a real number setting: not a boolean, finite, from 0 to :data:`MAX_NUMBER`
Amount = Annotated[
    float, AllowInfNan(False), BeforeValidator(_not_boolean), Field(ge=0, le=MAX_NUMBER)
]
#: a text setting: valid Unicode
Text = Annotated[str, AfterValidator(_valid_unicode)]

#: the checked type of a plain setting type (what a policy's option is converted to)
_PLAIN: dict[type, Any] = {bool: bool, int: Count, float: Amount, str: Text}


def _shown(value: Any) -> str:
    """``repr(value)``, printable and at most 200 characters."""
    return _SURROGATE.sub(_REPLACEMENT, repr(value))[:200]


def setting_error(
    name: str, error: ErrorDetails, kind: Any, *, label: str = "setting"
) -> ConfigError:
    """The :class:`ConfigError` for one pydantic finding on the setting ``name``.

    ``kind`` is the setting's type (``int``, a ``Literal``...); ``label`` what the
    message calls the setting (``setting 'budget.total'``, ``serve setting max_traces``).
    Each message says what the setting takes.
    """
    value, ctx = error.get("input"), error.get("ctx") or {}
    shown = _shown(value)
    said = f"{label} '{name}'" if label == "setting" else f"{label} {name}"
    choice = get_origin(kind) is Literal
    if isinstance(value, str) and _SURROGATE.search(value) and (kind is str or choice):
        return ConfigError(
            f"{said} holds text that is not valid Unicode (a lone surrogate); give UTF-8 text"
        )
    if choice:
        choices = ", ".join(map(repr, get_args(kind)))
        return ConfigError(f"{label} {name} must be one of {choices}, got {shown}")
    match error["type"]:
        case "boolean_number":
            return ConfigError(f"{said} expects a number, got the boolean {shown}")
        case "less_than_equal" | "int_parsing_size" | "float_type" | "finite_number" if _long(
            value
        ):
            return ConfigError(
                f"{said} must be at most {MAX_NUMBER:.0e}, got a number longer than that"
            )
        case "finite_number" if kind is not int:
            return ConfigError(f"{said} must be a finite number, got {shown}")
        case "int_from_float":
            return ConfigError(f"{said} expects a whole number, got {shown}")
        case "greater_than_equal" if ctx.get("ge") == 0:
            return ConfigError(f"{said} must not be negative, got {shown}")
        case "greater_than_equal":
            return ConfigError(f"{said} must be at least {ctx.get('ge')}, got {shown}")
        case "greater_than":
            return ConfigError(f"{said} must be positive, got {shown}")
        case "less_than_equal":
            bound = ctx.get("le")
            most = f"{bound:.0e}" if bound == MAX_NUMBER else bound
            return ConfigError(f"{said} must be at most {most}, got {shown}")
    return ConfigError(f"{said} expects {getattr(kind, '__name__', kind)}, got {shown}")


def config_error(
    exc: ValidationError, model: type, prefix: str = "", *, label: str = "setting"
) -> ConfigError:
    """The :class:`ConfigError` for the first finding of ``exc``, raised validating ``model``
    (a section, or the server's settings): its setting is ``prefix`` + the field's name, an
    unknown one is refused with the model's settings listed (see :func:`setting_error`)."""
    error = exc.errors(include_url=False)[0]
    key = str(error["loc"][0]) if error["loc"] else ""
    if error["type"] == "unexpected_keyword_argument":
        known = ", ".join(f.name for f in fields(model))
        where = prefix.removesuffix(".") or "it"
        return ConfigError(f"unknown {label} '{prefix}{key}'; {where} has: {known}")
    kind = get_type_hints(model).get(key)  # Count -> int, a Literal as it is
    return setting_error(f"{prefix}{key}", error, kind, label=label)


def _long(value: Any) -> bool:
    """Whether ``value`` spells a number past :data:`MAX_NUMBER` by its length alone (an
    integer above it, or more than 40 characters)."""
    if isinstance(value, int):
        return abs(value) > MAX_NUMBER
    return isinstance(value, str) and len(value.strip()) > 40


#: how every section validates: unknown keys refused, values converted as read
_SECTION = ConfigDict(extra="forbid")


@validated.dataclass(frozen=True, slots=True, config=_SECTION)
class _Section:
    """A validated settings section: a bad value is a :class:`ConfigError` naming it
    (``setting 'budget.total' ...``), whether the section is built, replaced or overridden."""

    @model_validator(mode="wrap")
    @classmethod
    def _as_config_error(cls, data: Any, handler: Any) -> Any:
        try:
            return handler(data)
        except ValidationError as exc:
            section = cls.__name__.removesuffix("Config").lower()
            raise config_error(exc, cls, f"{section}.") from None


@validated.dataclass(frozen=True, slots=True, config=_SECTION)
class ChunkingConfig(_Section):
    """How documents are cut into chunks.

    max_tokens: upper bound per chunk, counted with ``tokenizer``.
    tokenizer: ``o200k_base`` (gpt-oss / Context-1) or ``cl100k_base``.
    """

    max_tokens: Count = 512
    tokenizer: Tokenizer = "o200k_base"


@validated.dataclass(frozen=True, slots=True, config=_SECTION)
class RetrievalConfig(_Section):
    """Hybrid retrieval.

    rrf_k: the constant of reciprocal rank fusion, score = Σ 1/(rrf_k + rank).
    candidates: how many fused candidates ``hybrid_search`` returns by default.
    per_retriever: how many results each of BM25 and dense contributes before fusion.
    embedder: ``minilm-int8-dq-w128`` (default: MiniLM on onnxruntime, int8, the first
        128 word pieces of each chunk; docs/embedding.md) or a registered embedder name.
        Updating an index built with another MiniLM variant keeps that variant.
    mode: what ``search_corpus`` runs: ``hybrid`` (default), ``bm25`` or ``dense`` alone
        (the single-retriever baselines).
    exact_dense_max_chunks: up to this many chunks, dense search is an exact scan of
        every vector (deterministic from one open to the next, and as fast there);
        above, an HNSW graph (the embedded index's ``ann.faiss``; a server's own).
    where: a Chroma-style ``where`` on document metadata, as JSON text
        (``{"lang": "en"}``); every search, grep and read of the episode sees only
        the documents it admits (:mod:`thresher.index.filters`). Empty: no filter.
    path: a glob on document ids (``filings/*``), applied the same way. Empty: none.
    fitted_fusion: use the fusion weights fitted to the index (``thresher fit-fusion``:
        an embedded index's ``fusion.json``, with its own ``rrf_k``) when it has them and
        they still fit it; ``false``: plain RRF with ``rrf_k`` always.
    """

    rrf_k: Count = 60
    candidates: Count = 50
    per_retriever: Count = 100
    embedder: Text = "minilm-int8-dq-w128"
    mode: RetrievalMode = "hybrid"
    exact_dense_max_chunks: Count = 20_000
    where: Text = ""
    path: Text = ""
    fitted_fusion: bool = True

    def __post_init__(self) -> None:
        if self.where.strip():  # its operators are checked where it is used
            try:
                parsed = json.loads(self.where)
            except ValueError as exc:
                raise ConfigError(
                    f"setting retrieval.where must be a JSON object like Chroma's where, "
                    f'e.g. {{"lang": "en"}}; got {self.where!r}'
                ) from exc
            if not isinstance(parsed, dict):
                raise ConfigError(f"setting retrieval.where must be a JSON object, got {parsed!r}")


@validated.dataclass(frozen=True, slots=True, config=_SECTION)
class GrepConfig(_Section):
    """Bounds on ``grep_corpus``: a hostile pattern cannot hang the process.

    timeout_s: the CPU seconds one search may use (its wall time is held to
        :data:`thresher.index.grep.guard.WALL_FACTOR` times that).
    count_cap: where an index with a grep side index stops counting matches
        (``GrepResult.capped``); a full count would read every matching chunk.
    """

    limit: Count = 5
    max_pattern_chars: Count = 256
    max_repeat: Count = 1000
    timeout_s: Amount = 2.0
    count_cap: Count = 1000


@validated.dataclass(frozen=True, slots=True, config=_SECTION)
class BudgetConfig(_Section):
    """Token budget of an episode (what the policy is sent).

    total: the context budget in tokens.
    soft_fraction: above this share of ``total`` the policy is told to prune or conclude.
    hard_fraction: above this share every tool but prune, recall and the final
        answer is refused.
    per_call_tokens: the most tokens one ``search_corpus``/``grep_corpus`` result may add.
    reply_reserve: tokens always kept free for the policy's next reply.
    """

    total: Count = 32_768
    soft_fraction: Amount = 0.5
    hard_fraction: Amount = 0.85
    per_call_tokens: Count = 4_096
    reply_reserve: Count = 1_024

    def __post_init__(self) -> None:
        for name in ("soft_fraction", "hard_fraction"):
            value = getattr(self, name)
            if not 0 < value <= 1:
                raise ConfigError(
                    f"setting 'budget.{name}' must be a share of the budget in (0, 1], "
                    f"got {value!r}"
                )
        if self.soft_fraction > self.hard_fraction:
            raise ConfigError(
                f"setting 'budget.soft_fraction' ({self.soft_fraction}) must not exceed "
                f"'budget.hard_fraction' ({self.hard_fraction}): the prune-or-conclude notice "
                "comes before the hard limit"
            )
        if self.total <= 0:
            raise ConfigError(f"setting 'budget.total' must be a positive number, got {self.total}")


@validated.dataclass(frozen=True, slots=True, config=_SECTION)
class EpisodeConfig(_Section):
    """Caps that end an episode with a typed exit reason.

    max_refused_in_a_row: refused proposals in a row before ``policy_error``.
    max_hard_refused_turns: turns in a row whose calls were all refused by the
        hard cutoff before ``budget``.
    k: how many documents the episode returns (``thresher search --k``,
        ``thresher.search(k=...)``, ``"k"`` over HTTP and MCP); 0: the policy's own
        number. At most ``max_final_documents``; a policy built by name is told
        (:func:`thresher.policies.build_policy`).
    """

    max_turns: Count = 24
    max_calls_per_turn: Count = 8
    max_calls: Count = 96
    wall_time_s: Amount = 300.0
    tool_timeout_s: Amount = 30.0
    search_results: Count = 10
    max_final_documents: Count = 10
    max_refused_in_a_row: Count = 3
    max_hard_refused_turns: Count = 3
    k: Count = 0

    def __post_init__(self) -> None:
        if self.k > self.max_final_documents:
            raise ConfigError(
                f"episode.k={self.k} is over episode.max_final_documents="
                f"{self.max_final_documents}; ask for fewer documents or raise that cap"
            )

    @property
    def final_documents(self) -> int:
        """How many documents a final answer keeps: ``k`` when set, else the cap."""
        return self.k or self.max_final_documents


@validated.dataclass(frozen=True, slots=True, config=_SECTION)
class LLMConfig(_Section):
    """The LLM policy's OpenAI-compatible endpoint (see ``docs/serving.md``).

    base_url: e.g. ``http://localhost:8000/v1``; empty: ``THRESHER_LLM_BASE_URL``,
        then ``OPENAI_BASE_URL``, then ``http://localhost:8000/v1``.
    model: the served model name; empty: ``THRESHER_LLM_MODEL``, then the
        endpoint's first ``/v1/models`` entry.
    api_key_env: the environment variable holding the key (never the key itself;
        ``OPENAI_API_KEY`` is the fallback, then a placeholder for keyless servers).
    temperature, max_tokens: sampling settings sent with every request.
    timeout_s: per-request timeout. max_retries, backoff_s: retries on 429, 5xx,
        timeouts and dropped connections, with exponential backoff and jitter.
    max_malformed: refused replies per episode before it ends with ``policy_error``.
    reasoning_effort: ``low``/``medium``/``high`` for gpt-oss models; empty: not sent.
    first_tool_choice: the ``tool_choice`` sent while no chunk has been shown (a final
        answer can only name shown documents, so the model must call a tool):
        ``required`` (servers that honour it constrain the reply to tool calls: llama.cpp
        ``--jinja``, vLLM, OpenAI) or ``auto`` (for a server that rejects ``required``).
        Later turns send ``auto``.
    first_response_format: how replies are constrained while no chunk has been shown:
        ``json_schema`` (default) sends ``response_format`` with a JSON Schema whose
        ``oneOf`` are calls of the tools that need nothing shown (search_corpus,
        grep_corpus), so a server that honours it (llama.cpp, vLLM,
        Ollama) can only write a tool call, as a JSON object in the reply's text, and
        ``tool_choice`` is then ``auto`` (the schema already admits only calls; llama.cpp's
        grammar for ``required`` lets any text come before the call); ``none`` sends no
        ``response_format`` (then ``first_tool_choice`` applies).
    return_tokens: ask the server for each reply's token ids and log-probabilities
        (vLLM's ``return_token_ids`` and ``logprobs``), kept in the trace as ``sample``
        events for training; off: not asked (a server that reports them anyway still
        has them recorded).
    """

    base_url: Text = ""
    model: Text = ""
    api_key_env: Text = "THRESHER_LLM_API_KEY"
    temperature: Amount = 1.0
    max_tokens: Count = 4_096
    timeout_s: Amount = 120.0
    max_retries: Count = 4
    backoff_s: Amount = 1.0
    max_malformed: Count = 6
    reasoning_effort: ReasoningEffort = ""
    first_tool_choice: ToolChoice = "required"
    first_response_format: FirstResponseFormat = "json_schema"
    return_tokens: bool = False

    def __post_init__(self) -> None:
        if self.base_url:
            check_url(self.base_url, "setting llm.base_url")


@dataclass(frozen=True, slots=True)
class Config:
    """Every setting, grouped by concern.

    ``given``: the dotted names of the settings given through :meth:`load` or
    :meth:`override` (not a setting itself: never in :meth:`to_dict`); a Config
    built from section objects gives none unless told.
    """

    chunking: ChunkingConfig = field(default_factory=ChunkingConfig)
    retrieval: RetrievalConfig = field(default_factory=RetrievalConfig)
    grep: GrepConfig = field(default_factory=GrepConfig)
    budget: BudgetConfig = field(default_factory=BudgetConfig)
    episode: EpisodeConfig = field(default_factory=EpisodeConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    #: the policy's own settings, ``(name, value)`` pairs (see the module docstring)
    policy: tuple[tuple[str, Any], ...] = ()
    given: frozenset[str] = field(default=frozenset(), compare=False)

    @property
    def policy_options(self) -> dict[str, Any]:
        """The ``[policy]`` section as keyword arguments for the policy's factory."""
        return dict(self.policy)

    @classmethod
    def load(cls, path: str | Path) -> Config:
        """Read a ``.toml`` or ``.json`` file whose tables name the sections.

        Raises ``ConfigError`` for an unreadable file, an unknown section or key,
        or a value of the wrong type.
        """
        p = Path(path)
        try:
            raw = p.read_bytes()
        except OSError as exc:
            raise ConfigError(f"cannot read config file {p}: {exc.strerror}") from exc
        try:
            data = tomllib.loads(raw.decode()) if p.suffix == ".toml" else json.loads(raw)
        except RecursionError as exc:
            raise ConfigError(
                f"config file {p} nests too deeply to read; a config file holds tables of "
                'settings ({"budget": {"total": 16384}})'
            ) from exc
        except (ValueError, UnicodeDecodeError) as exc:
            raise ConfigError(
                f"config file {p} is not valid {p.suffix[1:] or 'JSON'}: {exc}"
            ) from exc
        if not isinstance(data, dict):
            raise ConfigError(
                f'{p}: a config file holds tables of settings ({{"budget": {{"total": '
                f"16384}}}}), not a {type(data).__name__}"
            )
        flat: dict[str, Any] = {}
        for section, values in data.items():
            if not isinstance(values, dict):
                raise ConfigError(f"{p}: '{section}' must be a table of settings")
            for key, value in values.items():
                flat[f"{section}.{key}"] = value
        return cls().override(flat)

    def is_given(self, dotted: str) -> bool:
        """Whether the setting ``dotted`` (``"budget.total"``) was given, not left at its default."""
        return dotted in self.given

    def fitted(self, values: dict[str, Any]) -> Config:
        """A copy with dotted keys replaced as :meth:`override` does, the given ones unchanged:
        for what the library adjusts itself (a default fitted to a server)."""
        return replace(self.override(values), given=self.given)

    def override(self, values: dict[str, Any]) -> Config:
        """A copy with dotted keys (``"budget.total"``) replaced, and marked given; values
        are type-checked."""
        changes: dict[str, dict[str, Any]] = {}
        policy = dict(self.policy)
        for dotted, value in values.items():
            section_name, _, key = dotted.partition(".")
            if section_name == "policy" and key:
                policy[key] = value  # checked by the policy's factory, when it is built
                continue
            section = getattr(self, section_name, None)
            if not is_dataclass(section) or not key:
                raise ConfigError(
                    f"unknown config section in '{dotted}'; sections: "
                    + ", ".join(f.name for f in fields(self) if f.name != "given")
                )
            known = {f.name: f for f in fields(section)}
            if key not in known:
                raise ConfigError(
                    f"unknown setting '{dotted}'; {section_name} has: " + ", ".join(known)
                )
            changes.setdefault(section_name, {})[key] = value  # converted by the section
        config = replace(self, policy=tuple(policy.items())) if policy else self
        config = replace(config, given=config.given | set(values))
        for section_name, updates in changes.items():  # one section at a time, checked whole
            updated: Any = replace(getattr(config, section_name), **updates)
            config = replace(config, **{section_name: updated})
        return config

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """Nested plain dict (for traces and reports)."""
        return {
            f.name: {
                g.name: getattr(getattr(self, f.name), g.name)
                for g in fields(getattr(self, f.name))
            }
            if f.name != "policy"
            else self.policy_options
            for f in fields(self)
            if f.name != "given"
        }


def coerce_setting(name: str, value: Any, kind: type) -> Any:
    """``value`` as a ``kind`` setting (bool, int, float or str: a ``--set`` string, or a
    file's value), converted and checked as a section's field of that type is.

    Raises ``ConfigError`` naming ``name`` when it is not one.
    """
    try:
        return _adapter(kind).validate_python(value)
    except ValidationError as exc:
        raise setting_error(name, exc.errors(include_url=False)[0], kind) from None


@functools.cache
def _adapter(kind: type) -> TypeAdapter[Any]:
    return TypeAdapter(_PLAIN.get(kind, kind))
