"""Typed errors. Every message says what went wrong and what to do next.

Each error class carries how every surface reports it: ``exit_code`` (the CLI
prints one line on stderr and exits with it), ``http_status`` and ``code`` (the
HTTP API answers ``{"error": code, "message": ...}`` with that status, plus
:meth:`ThresherError.http_headers`), and :meth:`ThresherError.tool_message` (the
MCP server's tool error). Library callers can catch the specific subclass.
"""

from __future__ import annotations

__all__ = [
    "ThresherError",
    "InputError",
    "IdRefusedError",
    "IndexNotFoundError",
    "IndexVersionError",
    "IndexDamagedError",
    "PatternRejectedError",
    "UnknownIdError",
    "BackendUnavailableError",
    "ModelMissingError",
    "ConfigError",
]


class ThresherError(Exception):
    """Base class of every error thresher raises on purpose.

    Attributes:
        exit_code: the CLI's exit code.
        http_status: the HTTP API's status for a request this error refuses (503: the
            server cannot serve it now).
        code: the ``error`` field of that response.
    """

    exit_code: int = 1
    http_status: int = 503
    code: str = "unavailable"

    def http_headers(self) -> dict[str, str]:
        """Headers the HTTP response carries besides the body (none by default)."""
        return {}

    def tool_message(self) -> str:
        """What an MCP client is told (the message itself by default)."""
        return str(self)


class InputError(ThresherError):
    """Input that cannot be ingested or used: names the file, line or value."""

    exit_code = 2
    http_status = 400
    code = "bad_request"


class IdRefusedError(InputError):
    """A document id an ingest refuses (chunk form, another file's id, an escaped twin).

    ``doc_id`` names it, so a caller can set that document aside and ingest the rest.
    """

    def __init__(self, message: str, doc_id: str) -> None:
        super().__init__(message)
        self.doc_id = doc_id


class NoSearchableWordsError(InputError):
    """A question with no letter or digit ("?", "..."): there is nothing to search for.

    Refused before any episode (CLI exit 2, HTTP 400, MCP tool error; an episode of it
    ends ``invalid_input``), never answered with arbitrary documents.
    """


class ConfigError(ThresherError):
    """A configuration value is invalid."""

    exit_code = 2
    http_status = 400
    code = "bad_request"


class IndexNotFoundError(ThresherError):
    """No index at the given location."""

    exit_code = 3


class IndexDamagedError(IndexNotFoundError):
    """A file of the index is missing or not the one that was written: rebuild it."""

    exit_code = 3


class IndexVersionError(ThresherError):
    """The index was written by a newer (or incompatible) thresher."""

    exit_code = 3


class PatternRejectedError(ThresherError):
    """A grep pattern that is invalid, too large, or uses a refused construct."""

    exit_code = 2


class UnknownIdError(ThresherError):
    """A chunk or document id that the index does not hold."""

    exit_code = 4

    def __init__(self, message: str, ids: list[str] | None = None) -> None:
        super().__init__(message)
        self.ids = list(ids or [])


class BackendUnavailableError(ThresherError):
    """A store backend (for example a Chroma server) cannot be reached."""

    exit_code = 5


class ModelMissingError(ThresherError):
    """Model files that must come from a registry package are not installed."""

    exit_code = 6
