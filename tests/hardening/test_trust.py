"""What the harness does not take on trust: an endpoint's usage, an index's files,
a client's JSON-RPC, a request's filter, a configured URL (issue 38, items 3-5).

Each case is an attack of the third outside trial, kept as a regression.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from harness.small_corpus import corpus, corpus_config
from thresher.config import Config
from thresher.harness.trace import QueryState, UsageReport
from thresher.testing.replay_server import ReplayServer, reply, tool_call

QUESTION = "Who founded the Halvard Glassworks?"
BUDGET = 3000


@pytest.fixture(scope="module")
def config() -> Config:
    return corpus_config()


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from thresher.index.backends import ingest

    path = tmp_path_factory.mktemp("trust-index")
    ingest(corpus(), path, corpus_config(), progress=False)
    return path


@pytest.fixture(scope="module")
def store(index_dir: Path):
    from thresher.index.embedded.store import EmbeddedStore

    s = EmbeddedStore(index_dir, corpus_config())
    yield s
    s.close()


# -- item 3: an endpoint that under-reports its usage -----------------------------------
def _lying_episode(tmp_path: Path, store, config, prompt_tokens: int | None):
    from thresher.harness.episode import run_episode
    from thresher.policies.llm.policy import LLMPolicy

    usage = {"prompt_tokens": prompt_tokens, "completion_tokens": 5} if prompt_tokens else None
    docs = ["glassworks", "marrowick", "kestrin", "tessaly-history"]
    docs += [f"town-{i:02d}" for i in range(20)]
    script = [reply(tool_call("read_document", {"doc_id": doc}), usage=usage) for doc in docs]
    budget = config.override({"budget.total": BUDGET, "budget.reply_reserve": 256})
    with ReplayServer(script, tmp_path / "replay") as server:
        policy = LLMPolicy(budget, env={}, base_url=server.base_url, backoff_s=0.01, timeout_s=5.0)
        result = run_episode(QUESTION, store, policy, budget)
        sent = [len(str(r["body"]["messages"])) for r in server.requests() if r["method"] == "POST"]
    return result, sent


@pytest.mark.server
@pytest.mark.slow
def test_an_endpoint_reporting_one_prompt_token_does_not_lift_the_budget(
    tmp_path, store, config
) -> None:
    honest, honest_sent = _lying_episode(tmp_path / "honest", store, config, None)
    lying, lying_sent = _lying_episode(tmp_path / "lying", store, config, 1)
    queries = [e for e in lying.trace if isinstance(e, QueryState)]
    reports = [e for e in lying.trace if isinstance(e, UsageReport)]
    # the own count is kept: a prompt never counts far below what the harness counted
    assert reports and all(r.discrepancy for r in reports)
    assert all(q.used >= q.counted for q in queries)
    assert max(q.used for q in queries) <= BUDGET
    # and what was sent grew no further than without any reported usage
    assert max(lying_sent) <= max(honest_sent) * 1.1
    assert lying.exit_reason == honest.exit_reason


def test_trace_show_says_a_report_was_not_used() -> None:
    from thresher.cli.trace_cmd import format_event

    report = UsageReport(turn=1, counted=2400, prompt_tokens=1, discrepancy=True)
    (line,) = format_event(report)
    assert "discrepancy" in line and "not used" in line
    assert "discrepancy" not in format_event(UsageReport(turn=1, counted=9, prompt_tokens=9))[0]


# -- item 5: malformed JSON-RPC over MCP stdio -------------------------------------------
DEEP = "[" * 20_000 + "]" * 20_000  # past the parser, within the line cap


def _call(rid: object, params: str) -> str:
    return '{"jsonrpc":"2.0","id":' + str(rid) + ',"method":"tools/call","params":' + params + "}"


def _search(arguments: str) -> str:
    return '{"name":"search","arguments":' + arguments + "}"


#: (line sent, the error code and id the reply must carry)
MALFORMED = [
    ("{not json", -32700, None),
    ('[{"jsonrpc":"2.0","id":5,"method":"ping"}]', -32600, None),
    ('{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}', -32600, None),
    ('{"jsonrpc":"2.0","id":[1],"method":"ping"}', -32600, None),
    ('{"id":7,"method":"ping"}', -32600, 7),
    ('{"jsonrpc":"1.0","id":7,"method":"ping"}', -32600, 7),
    ('"just a string"', -32600, None),
    ('{"jsonrpc":"2.0","id":12,"method":7}', -32600, 12),
    (_call(8, '"x"'), -32602, 8),
    (_call(9, _search('{"question":' + DEEP + "}")), -32700, None),
    (_call(19, _search('{"q":' + "[" * 200 + "]" * 200 + "}")), -32600, 19),
    (_call(10, _search('{"question":"a\\ud800b"}')), -32602, 10),
    (_call(11, _search('{"\\udc00":"x"}')), -32602, 11),
    (_call('"s\\ud800"', '{"name":"search"}'), -32600, None),
    (
        _call(14, _search('{"question":"' + "a" * 100_000 + '"}')),
        -32600,
        None,
    ),
]


def _mcp_exchange(index: Path, lines: list[bytes], tmp_path: Path) -> list[list[dict]]:
    """Start ``thresher mcp`` over stdio, initialize, then send each line followed by a
    ``ping``; returns, per line, the replies that came before its ping's."""
    import json
    import os
    import select
    import subprocess
    import sys

    cmd = [sys.executable, "-m", "thresher.cli.main", "mcp", "--index", str(index)]
    cmd += ["--trace-dir", str(tmp_path / "traces")]
    with (tmp_path / "mcp-stderr.log").open("wb") as err:
        proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err, env=dict(os.environ)
        )
    assert proc.stdin is not None and proc.stdout is not None
    buffered = b""

    def read_until(ping_id: str) -> list[dict]:
        nonlocal buffered
        got: list[dict] = []
        while True:
            while b"\n" not in buffered:
                ready, _, _ = select.select([proc.stdout], [], [], 120)  # a hang guard only
                assert ready, f"no reply before ping {ping_id}; got {got}"
                chunk = os.read(proc.stdout.fileno(), 65536)
                assert chunk, f"server closed stdout; got {got}"
                buffered += chunk
            line, buffered = buffered.split(b"\n", 1)
            message = json.loads(line)
            if message.get("id") == ping_id:
                return got
            got.append(message)

    def send(raw: bytes) -> None:
        proc.stdin.write(raw + b"\n")
        proc.stdin.flush()

    try:
        init = {"protocolVersion": "2025-06-18", "capabilities": {}}
        init["clientInfo"] = {"name": "t", "version": "0"}
        send(
            json.dumps(
                {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": init}
            ).encode()
        )
        read_until("init")
        send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        out = []
        for i, raw in enumerate(lines):
            send(raw)
            send(json.dumps({"jsonrpc": "2.0", "id": f"ping{i}", "method": "ping"}).encode())
            out.append(read_until(f"ping{i}"))
        return out
    finally:
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@pytest.mark.server
@pytest.mark.slow
def test_mcp_stdio_answers_malformed_json_rpc_with_errors(index_dir, tmp_path) -> None:
    lines = [text.encode("utf-8") for text, _, _ in MALFORMED]
    lines.append(b'{"jsonrpc":"2.0","id":13,"method":"ping","x":"\xff\xfe"}')  # not UTF-8
    lines.append(b'{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{}}')  # the SDK's
    lines.append(b'{"jsonrpc":"2.0","id":21,"method":"no/such/method"}')
    expected: list[tuple[int, int | None] | None] = [(c, r) for _, c, r in MALFORMED]
    expected.append((-32700, None))
    expected += [(-32602, 20), (-32601, 21)]
    # notifications are never answered, malformed or not; the server goes on
    lines.append(b'{"jsonrpc":"2.0","method":"notifications/x","params":{"a":"\\ud800"}}')
    lines.append(b'{"jsonrpc":"2.0","method":"notifications/x","params":"s"}')
    expected += [None, None]
    replies = _mcp_exchange(index_dir, lines, tmp_path)
    for text, want, got in zip(lines, expected, replies, strict=True):
        if want is None:
            assert got == [], (text[:80], got)
            continue
        code, rid = want
        assert len(got) == 1, (text[:80], got)
        (reply_,) = got
        assert reply_["jsonrpc"] == "2.0" and reply_["id"] == rid, (text[:80], reply_)
        assert reply_["error"]["code"] == code and reply_["error"]["message"], (text[:80], reply_)


@given(
    st.binary(max_size=512)
    | st.text(max_size=256).map(lambda t: t.encode("utf-8", "surrogatepass"))
)
@settings(max_examples=300, deadline=None)
def test_screening_a_line_never_raises(line: bytes) -> None:
    from thresher.serve.mcp_stdio import screen

    reply_ = screen(line)
    assert reply_ is None or reply_["error"]["code"] in (-32700, -32600, -32602)


def test_a_well_formed_request_passes_the_screen() -> None:
    from thresher.serve.mcp_stdio import screen

    call = _call(1, _search('{"question":"who?","where":{"a":1}}'))
    assert screen(call.encode()) is None
    assert screen(b'{"jsonrpc":"2.0","method":"notifications/initialized"}') is None
    assert screen(b'{"jsonrpc":"2.0","id":"x","result":{}}') is None


# -- item 5: a `where` chromadb would refuse is refused at the door ---------------------
#: wheres chromadb's own validate_where refuses (a search would end ``tools_failed``)
BAD_WHERES = [
    {"$and": [{"lang": "en"}]},
    {"$or": []},
    {"$and": [{"lang": "en"}, {}]},
    {"lang": {"$in": []}},
    {"lang": {"$in": "en"}},
    {"lang": {"$in": ["en", 1]}},
    {"year": {"$gt": "2019"}},
    {"lang": {"$eq": None}},
    {"lang": {"$ne": []}},
]
#: wheres chromadb takes and then fails on (text it cannot encode), or reads oddly
REFUSED_HERE = [
    {"\ud800": "x"},
    {"lang": "a\udc00"},
    {"lang": {"$in": ["\ud800"]}},
    {"year": {"$gte": True}},
]
GOOD_WHERES = [
    {"lang": "en"},
    {"lang": "en", "year": 2020},
    {"$and": [{"lang": "en"}, {"year": {"$gte": 2019}}]},
    {"$or": [{"lang": "en"}, {"$and": [{"a": 1}, {"b": {"$nin": ["x", "y"]}}]}]},
    {"lang": {"$in": ["en", "fr"]}},
    {"ok": {"$ne": True}},
    {"year": {"$lt": 2.5}},
]


@pytest.mark.parametrize("where", BAD_WHERES, ids=range(len(BAD_WHERES)))
def test_a_where_chromadb_refuses_is_an_input_error(where) -> None:
    from chromadb.api.types import validate_where

    from thresher.errors import InputError
    from thresher.index.filters import DocFilter

    with pytest.raises(ValueError):  # chromadb's own check agrees
        validate_where(where)
    with pytest.raises(InputError, match="where"):
        DocFilter.parse(where, None)


@pytest.mark.parametrize("where", REFUSED_HERE, ids=range(len(REFUSED_HERE)))
def test_a_where_with_text_chromadb_cannot_encode_is_an_input_error(where) -> None:
    from thresher.errors import InputError
    from thresher.index.filters import DocFilter

    with pytest.raises(InputError, match="where"):
        DocFilter.parse(where, None)


@pytest.mark.parametrize("where", GOOD_WHERES, ids=range(len(GOOD_WHERES)))
def test_a_where_we_admit_chromadb_reads(where) -> None:
    from chromadb.api.types import validate_where

    from thresher.index.filters import DocFilter

    checked = DocFilter.parse(where, None)
    assert checked is not None
    validate_where(checked.chroma_where())


@pytest.mark.server
@pytest.mark.slow
def test_http_search_with_a_where_chromadb_refuses_is_a_400(index_dir, tmp_path) -> None:
    from serve.helpers import running_server

    bodies = [
        b'{"query": "glassworks", "where": {"\\ud800": "x"}}',
        b'{"query": "glassworks", "where": {"$and": [{"lang": "en"}]}}',
        b'{"query": "glassworks", "config": {"retrieval.where": "{\\"$or\\": []}"}}',
    ]
    with running_server(index_dir, tmp_path) as server, server.client() as client:
        replies = [
            client.post("/search", content=b, headers={"Content-Type": "application/json"})
            for b in bodies
        ]
    for body, r in zip(bodies, replies, strict=True):
        assert r.status_code == 400 and "where" in r.text, (body, r.status_code, r.text[:300])


# -- item 5: a configured URL a client cannot open is one line -------------------------
@pytest.mark.parametrize(
    "url",
    [
        "http://[::1",
        "http://host:port/v1",
        "localhost:8000",
        "ftp://h/v1",
        "http:///v1",
        "http://h /v1",
    ],
)
def test_a_malformed_llm_base_url_is_one_error_line(url, tmp_path, capsys) -> None:
    from thresher.cli.main import main

    code = main(
        ["search", "who?", "--index", str(tmp_path / "none"), "--policy", "llm",
         "--set", f"llm.base_url={url}"]
    )  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1 and "llm.base_url" in err, err


def test_a_malformed_base_url_in_the_environment_names_the_variable() -> None:
    from thresher.config import LLMConfig
    from thresher.endpoint.settings import EndpointSettings
    from thresher.errors import ConfigError

    with pytest.raises(ConfigError, match="THRESHER_LLM_BASE_URL"):
        EndpointSettings.resolve(LLMConfig(), {"THRESHER_LLM_BASE_URL": "http://[::1"})
    with pytest.raises(ConfigError, match="OPENAI_BASE_URL"):
        EndpointSettings.openai_env("m", env={"OPENAI_BASE_URL": "http://h:99999999"})


@given(
    st.lists(
        st.sampled_from(
            [
                "http://",
                "https://",
                "[",
                "]",
                "::1",
                ":",
                "80",
                "h",
                "/v1",
                "@",
                "%",
                "?",
                "#",
                "x.y",
                " ",
            ]
        )
        | st.text(max_size=3),
        max_size=7,
    ).map("".join)
)
@example("http://-\u00a1")  # hosts the HTTP clients' IDNA 2008 refuses (found by this test)
@example("http://.\u00a1")
@example("https://\u00a1/v1")
@settings(max_examples=400, deadline=None)
def test_a_base_url_we_admit_the_openai_client_opens(url: str) -> None:
    import openai

    from thresher.config import check_url
    from thresher.errors import ConfigError

    try:
        check_url(url, "url")
    except ConfigError:
        return
    openai.OpenAI(base_url=url, api_key="k")


# -- item 4: a tampered index fails with one line naming the file and the fix ----------
def _rotate_id_map(generation: Path) -> None:
    """Rotate the BM25 id map by one, consistently across its files (sizes unchanged
    when the ids have one length): every position now names another chunk."""
    import json

    from thresher.index.id_table import save_ids

    folder = generation / "bm25"
    ids = json.loads((folder / "ids.json").read_text(encoding="utf-8"))
    save_ids(folder, ids[1:] + ids[:1])


def _truncate_npy(generation: Path) -> None:
    target = generation / "bm25" / "bm25s" / "data.csc.index.npy"
    target.write_bytes(target.read_bytes()[:100])


def _delete_records(generation: Path) -> None:
    (generation / "records.sqlite3").unlink()


def _garbage_in_vectors(generation: Path) -> None:
    target = generation / "vectors.npy"
    target.write_bytes(b"\xa5" * target.stat().st_size)  # same size: past the size check


def _garbage_in_sqlite(generation: Path) -> None:
    target = generation / "records.sqlite3"
    size = target.stat().st_size
    with target.open("r+b") as fh:  # same size, over the database's header
        fh.write(b"\xa5" * min(size, 4096))


TAMPERING = {
    "rotated-id-map": (_rotate_id_map, "bm25/ids"),
    "truncated-npy": (_truncate_npy, "data.csc.index.npy"),
    "deleted-records": (_delete_records, "records.sqlite3"),
    "garbage-in-sqlite": (_garbage_in_sqlite, "records.sqlite3"),
    "garbage-in-vectors": (_garbage_in_vectors, "vectors.npy"),
    "no-listing": (lambda g: (g / "files.json").unlink(), "files.json"),
}


@pytest.fixture
def index_copy(index_dir: Path, tmp_path: Path, monkeypatch) -> Path:
    import shutil

    target = tmp_path / "index"
    shutil.copytree(index_dir, target)
    return target


@pytest.mark.parametrize("case", list(TAMPERING))
def test_a_tampered_index_is_one_line_naming_the_file_and_the_fix(
    case: str, index_copy: Path, capsys
) -> None:
    from thresher.cli.main import main
    from thresher.index.embedded.layout import current_generation

    tamper, named = TAMPERING[case]
    tamper(current_generation(index_copy))
    code = main(["search", QUESTION, "--index", str(index_copy), "--quiet"])
    err = capsys.readouterr().err
    assert code == 3 and "Traceback" not in err, err
    assert len(err.strip().splitlines()) == 1, err
    assert named in err and "thresher index" in err, err


def test_an_index_of_the_previous_format_is_one_line_naming_the_rebuild(
    index_copy: Path, capsys
) -> None:
    import json

    from thresher.cli.main import main
    from thresher.index.embedded.layout import current_generation

    manifest = current_generation(index_copy) / "manifest.json"
    data = json.loads(manifest.read_text(encoding="utf-8"))
    data["format_version"] = 1  # as written by a thresher that kept a chromadb folder
    manifest.write_text(json.dumps(data, indent=1), encoding="utf-8")
    code = main(["search", QUESTION, "--index", str(index_copy), "--quiet"])
    err = capsys.readouterr().err
    assert code != 0 and "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    assert "format 1" in err and f"thresher index PATH --index {index_copy}" in err, err
