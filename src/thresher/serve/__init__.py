"""Serving: the HTTP API (streamed episodes), the MCP server, the trace viewer, adapters.

Main names, imported lazily (the ``serve`` extra brings FastAPI, uvicorn,
sse-starlette and the ``mcp`` SDK)::

    from thresher.serve import ServeSettings, create_app, build_mcp_server, render_viewer
"""

from __future__ import annotations

from thresher._lazy import lazy_dir, lazy_getattr

__all__ = [
    "ServeSettings",
    "SearchService",
    "create_app",
    "run_http",
    "build_mcp_server",
    "run_mcp",
    "render_viewer",
    "EventMapper",
    "ThresherClient",
]

_WHERE = {
    "ServeSettings": ".settings",
    "SearchService": ".service",
    "create_app": ".app",
    "run_http": ".app",
    "build_mcp_server": ".mcp_server",
    "run_mcp": ".mcp_server",
    "render_viewer": ".viewer",
    "EventMapper": ".events",
    "ThresherClient": ".client",
}

__getattr__ = lazy_getattr(__name__, _WHERE)
__dir__ = lazy_dir(__all__)
