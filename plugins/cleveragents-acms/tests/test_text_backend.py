"""TantivyTextBackend: identifier-aware search, hostile queries, ranking, scope, persistence."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cleveragents.errors import ConfigurationError, ValidationError
from cleveragents.models.uko import UKONode, node_uri
from cleveragents.protocols import TextBackend, TextIndexBackend, TextResult
from cleveragents_acms.backends.identifiers import (
    NestedTextSplitter,
    expand_identifiers,
    identifier_key,
    query_variants,
    split_camel_case,
    subwords,
)
from cleveragents_acms.backends.text import TantivyTextBackend

RES_A = "01J00000000000000000000RSA"
RES_B = "01J00000000000000000000RSB"
SCOPE_A = frozenset({RES_A})


def node(
    resource: str,
    path: str,
    qualname: str,
    *,
    signature: str = "",
    docstring: str = "",
    body: str = "",
    uko_type: str = "uko-py:Function",
) -> UKONode:
    """A UKO node as an analyzer would produce it."""
    name = qualname.rsplit(".", 1)[-1] if qualname else path.rsplit("/", 1)[-1]
    return UKONode(
        uri=node_uri(resource, path, qualname),
        uko_type=uko_type,
        name=name,
        path=path,
        start_line=3,
        end_line=9,
        resource_id=resource,
        qualname=qualname,
        language="python",
        renderings={0: name, 4: signature or name, 9: body or signature or name},
        properties={"signature": signature, "docstring": docstring},
    )


@pytest.fixture
def backend(tmp_path: Path) -> Iterator[TantivyTextBackend]:
    opened = TantivyTextBackend(tmp_path / "text")
    yield opened
    opened.close()


@pytest.fixture
def identifiers(backend: TantivyTextBackend) -> TantivyTextBackend:
    backend.add_nodes(
        [
            node(
                RES_A,
                "src/net/server.py",
                "parseHTTPRequest",
                signature="def parseHTTPRequest(raw)",
            ),
            node(
                RES_A, "src/util.py", "parse_http_request", signature="def parse_http_request(raw)"
            ),
            node(RES_A, "src/legacy.py", "Legacy.ParseHttpRequest", uko_type="uko-py:Method"),
            node(
                RES_A,
                "src/cache.py",
                "LRUCache",
                uko_type="uko-py:Class",
                body="class LRUCache:\n    def get(self, key): ...",
            ),
            node(
                RES_A, "src/xhr.py", "send", body="x = XMLHttpRequest()\nreturn getHTTPResponse(x)"
            ),
        ]
    )
    backend.commit()
    return backend


def uris(results: list[TextResult]) -> list[str]:
    return [r.uko_uri.rsplit("#", 1)[-1] for r in results]


def test_subwords_split_camel_snake_digits_and_acronyms() -> None:
    """Identifiers split into lower-case sub-words in every spelling."""
    assert subwords("parseHTTPRequest") == ("parse", "http", "request")
    assert subwords("parse_http_request") == ("parse", "http", "request")
    assert subwords("ParseHTTPRequest") == ("parse", "http", "request")
    assert subwords("utf8Decode2") == ("utf", "8", "decode", "2")
    assert subwords("größe_zahl") == ("größe", "zahl")


def test_expansion_keeps_the_original_and_adds_parts() -> None:
    """Short fields get the sub-words and the joined form of each compound identifier."""
    expanded = expand_identifiers("def parseHTTPRequest(raw)")
    assert expanded.startswith("def parseHTTPRequest(raw)")
    assert {"parse", "http", "request", "parsehttprequest"} <= set(expanded.split())
    assert expand_identifiers("plain words only") == "plain words only"


def test_camel_split_and_identifier_key() -> None:
    """Long text gets spaces at case boundaries; keys ignore case and separators."""
    assert split_camel_case("getHTTPResponse(x)") == "get HTTP Response(x)"
    # A one-letter part splits as the query side splits it (is, A, Set).
    assert split_camel_case("isASet MChild") == "is A Set M Child"
    assert split_camel_case("HTTP utf8Decode") == "HTTP utf8 Decode"
    assert identifier_key("parse_HTTP-Request") == "parsehttprequest"


def test_nested_splitter_matches_the_plain_split() -> None:
    """One file's nested texts (module, class, method) split as each would alone."""
    source = Path(__file__).read_text(encoding="utf-8")
    lines = source.split("\n")
    nested = [source, "\n".join(lines[10:60]), "\n".join(lines[20:30]), "getX\n", "x\nnewLine"]
    split = NestedTextSplitter()
    assert [split(text) for text in nested] == [split_camel_case(text) for text in nested]


def test_query_variants_add_pairs_and_keys() -> None:
    """Queries carry sub-words, adjacent pairs and candidate identifier keys."""
    primary, secondary, keys = query_variants("http request")
    assert primary.split() == ["http", "request", "http", "request"]
    assert secondary == "httprequest"
    assert keys == ["http", "request", "httprequest"]


def test_backend_satisfies_both_protocols(backend: TantivyTextBackend) -> None:
    """The class is a TextBackend and a TextIndexBackend."""
    assert isinstance(backend, TextBackend)
    assert isinstance(backend, TextIndexBackend)


@pytest.mark.parametrize(
    "query",
    [
        "parseHTTPRequest",
        "parse_http_request",
        "ParseHTTPRequest",
        "ParseHttpRequest",
        "http request",
        "parse http request",
        "PARSE_HTTP_REQUEST",
    ],
)
def test_every_spelling_finds_every_spelling(identifiers: TantivyTextBackend, query: str) -> None:
    """camelCase, snake_case, acronyms and plain words all find each other."""
    found = uris(identifiers.search(query, scope=SCOPE_A))
    assert {"parseHTTPRequest", "parse_http_request", "Legacy.ParseHttpRequest"} <= set(found[:3])


def test_body_identifiers_are_split(identifiers: TantivyTextBackend) -> None:
    """Camel-case identifiers inside bodies are found by their words."""
    assert "send" in uris(identifiers.search("response", scope=SCOPE_A))
    assert uris(identifiers.search("xml", scope=SCOPE_A)) == ["send"]
    found = uris(identifiers.search("getHTTPResponse", scope=SCOPE_A))
    assert found.index("send") < found.index("LRUCache")
    assert uris(identifiers.search("lru cache", scope=SCOPE_A))[0] == "LRUCache"


def test_name_matches_outrank_body_matches(identifiers: TantivyTextBackend) -> None:
    """A hit in the name is worth more than the same word in a body."""
    found = uris(identifiers.search("request", scope=SCOPE_A))
    assert found.index("send") > found.index("parseHTTPRequest")


@pytest.mark.parametrize(
    "query",
    [
        'foo:"bar',
        "(parse",
        "AND",
        "OR NOT",
        "parse AND (http OR",
        "title:x^3",
        "a* ~2 [1 TO 5]",
        "\\",
        "ünïcödé ∑ 漢字",
        "'; DROP TABLE",
        "{}[]",
        "!!!",
        "-",
        "parse:http:request",
    ],
)
def test_hostile_queries_never_raise(identifiers: TantivyTextBackend, query: str) -> None:
    """Query syntax in user text is treated as text."""
    results = identifiers.search(query, scope=SCOPE_A)
    assert all(0.0 <= r.score <= 1.0 for r in results)


def test_hostile_query_with_words_still_matches(identifiers: TantivyTextBackend) -> None:
    """Words around query syntax are still searched."""
    assert "parseHTTPRequest" in uris(
        identifiers.search('name:"parseHTTPRequest" AND (', scope=SCOPE_A)
    )


@pytest.mark.parametrize("query", ["", "   ", None, 42])
def test_invalid_query_is_rejected(backend: TantivyTextBackend, query: object) -> None:
    """Empty or non-string queries fail the precondition."""
    with pytest.raises(ValueError):
        backend.search(query, scope=SCOPE_A)  # type: ignore[arg-type]


@pytest.mark.parametrize("max_results", [0, -5, True, 2.5])
def test_invalid_max_results_is_rejected(backend: TantivyTextBackend, max_results: object) -> None:
    """max_results must be a positive integer."""
    with pytest.raises(ValidationError):
        backend.search("x", scope=SCOPE_A, max_results=max_results)  # type: ignore[arg-type]


def test_a_bare_string_scope_is_rejected(backend: TantivyTextBackend) -> None:
    """A resource ULID passed as the scope itself is an error, not a set of characters."""
    with pytest.raises(ValueError):
        backend.search("x", scope=RES_A)  # type: ignore[arg-type]


def test_scores_are_descending_and_in_unit_range(identifiers: TantivyTextBackend) -> None:
    """Results come best first with scores in [0, 1]."""
    results = identifiers.search("parse http request cache", scope=SCOPE_A)
    scores = [r.score for r in results]
    assert scores == sorted(scores, reverse=True)
    assert all(0.0 <= s <= 1.0 for s in scores)
    assert scores[0] > 0.5


def test_results_carry_snippet_and_provenance(identifiers: TantivyTextBackend) -> None:
    """content is the stored snippet; metadata names resource, path and lines."""
    top = identifiers.search("parse_http_request", scope=SCOPE_A)[0]
    assert top.content.startswith("def parse")
    assert top.metadata["resource_id"] == RES_A
    assert top.metadata["path"] in {"src/util.py", "src/net/server.py"}
    assert top.metadata["start_line"] == "3" and top.metadata["end_line"] == "9"
    assert top.metadata["uko_type"] == "uko-py:Function"


def test_scope_isolates_resources_sharing_an_index(backend: TantivyTextBackend) -> None:
    """Each scope sees only its own resources; max_results counts in-scope hits."""
    backend.add_nodes(node(RES_B, f"b{i}.py", f"token_parser_{i}") for i in range(50))
    backend.add_nodes([node(RES_A, "a.py", "token_parser")])
    backend.commit()
    only_a = backend.search("token parser", scope=SCOPE_A, max_results=5)
    assert [r.metadata["resource_id"] for r in only_a] == [RES_A]
    only_b = backend.search("token parser", scope=frozenset({RES_B}), max_results=5)
    assert len(only_b) == 5 and {r.metadata["resource_id"] for r in only_b} == {RES_B}
    assert backend.search("token parser", scope=frozenset()) == []
    assert backend.search("token parser", scope=frozenset({"01J0000000000000000000NONE"})) == []


def test_bulk_writes_are_invisible_until_commit(backend: TantivyTextBackend) -> None:
    """add_nodes is a batch: rollback drops it, commit publishes it."""
    backend.add_nodes([node(RES_A, "a.py", "draft_function")])
    assert backend.search("draft function", scope=SCOPE_A) == []
    backend.rollback()
    backend.commit()
    assert backend.count() == 0
    backend.add_nodes([node(RES_A, "a.py", "draft_function")])
    backend.commit()
    assert uris(backend.search("draft function", scope=SCOPE_A)) == ["draft_function"]


def test_delete_paths_and_delete_resource(backend: TantivyTextBackend) -> None:
    """Deletion by file path and by resource."""
    backend.add_nodes(
        [
            node(RES_A, "keep.py", "kept_helper"),
            node(RES_A, "drop.py", "dropped_helper"),
            node(RES_A, "drop.py", "other_helper"),
            node(RES_B, "drop.py", "b_helper"),
        ]
    )
    backend.commit()
    assert backend.count(RES_A) == 3
    backend.delete_paths(RES_A, ["drop.py"])
    backend.commit()
    both = frozenset({RES_A, RES_B})
    assert set(uris(backend.search("helper", scope=both))) == {"b_helper", "kept_helper"}
    backend.delete_resource(RES_B)
    backend.commit()
    assert backend.count(RES_B) == 0
    assert backend.count() == 1


def test_index_document_api_replaces_and_removes(backend: TantivyTextBackend) -> None:
    """The spec's single-document API is visible to the next search without commit."""
    meta = {"resource_id": RES_A, "path": "notes.md"}
    backend.index_document("proj", "doc://1", "alpha beta", meta)
    assert [r.uko_uri for r in backend.search("alpha", scope=SCOPE_A)] == ["doc://1"]
    assert backend.search("alpha", scope=SCOPE_A)[0].content == "alpha beta"
    backend.index_document("proj", "doc://1", "gamma", meta)
    assert backend.search("alpha", scope=SCOPE_A) == []
    backend.remove_document("proj", "doc://1")
    assert backend.search("gamma", scope=SCOPE_A) == []
    backend.index_document("proj", "doc://2", "delta", meta)
    backend.rebuild_index("proj")
    assert backend.count() == 1


def test_index_persists_across_reopen(tmp_path: Path) -> None:
    """A committed index is there after closing and reopening."""
    first = TantivyTextBackend(tmp_path / "text")
    first.add_nodes([node(RES_A, "a.py", "persistentThing")])
    first.commit()
    first.close()
    second = TantivyTextBackend(tmp_path / "text")
    assert uris(second.search("persistent thing", scope=SCOPE_A)) == ["persistentThing"]
    second.close()


def test_an_index_of_another_schema_is_refused(tmp_path: Path) -> None:
    """Opening an index written by an incompatible version gives a clear error."""
    TantivyTextBackend(tmp_path / "text").close()
    (tmp_path / "text" / "cleveragents-text.json").write_text('{"schema": 0}')
    with pytest.raises(ConfigurationError, match="re-index"):
        TantivyTextBackend(tmp_path / "text")


def test_bulk_load_sanity(backend: TantivyTextBackend) -> None:
    """Thousands of nodes load in one batch and a scoped query finds its own (how fast:
    the indexing benchmark's text query latency)."""
    body = "\n".join(f"    value_{k} = compute_{k}(item)" for k in range(20))
    nodes = [
        node(
            RES_A if i % 2 else RES_B,
            f"pkg/mod{i // 10}.py",
            f"Handler{i}.processItem{i}",
            signature=f"def processItem{i}(self, item)",
            body=body,
        )
        for i in range(5_000)
    ]
    assert backend.add_nodes(nodes) == 5_000
    backend.commit()
    assert backend.count() == 5_000
    results = backend.search("process item handler", scope=SCOPE_A, max_results=10)
    assert len(results) == 10
    assert {r.metadata["resource_id"] for r in results} == {RES_A}  # the scope holds


def test_a_second_writer_is_a_clear_error(tmp_path: Path) -> None:
    """Two writers on one index: the second gets a ConfigurationError."""
    first = TantivyTextBackend(tmp_path / "text")
    second = TantivyTextBackend(tmp_path / "text")
    first.add_nodes([node(RES_A, "a.py", "first_writer")])
    with pytest.raises(ConfigurationError, match="another process"):
        second.add_nodes([node(RES_A, "b.py", "second_writer")])
    first.commit()
    assert uris(second.search("first writer", scope=SCOPE_A)) == ["first_writer"]
    first.close()
    second.close()
