"""The redaction module: which keys and values count as secrets, and that they never leak."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cleveragents.errors import ValidationError, format_error
from cleveragents.redaction import REDACTED, is_secret_key, mask, redact, redact_text

SECRETS = {
    "openai": "sk-abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJ",
    "openai-project": "sk-proj-Abc123_def456-GHI789jklMNO",
    "anthropic": "sk-ant-api03-abcdefghijklmnopqrstuvwxyz-0123456789",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0",
    "github-classic": "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
    "github-oauth": "gho_16C7e42F292c6912E7710c838347Ae178B4a",
    "github-fine-grained": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz",
    "gitlab": "glpat-abcdefghij0123456789",
    "aws": "AKIAIOSFODNN7EXAMPLE",
    "slack": "xoxb-123456789012-abcdefghij",
}


@pytest.mark.parametrize(
    "name",
    [
        "api_key",
        "API-KEY",
        "openai_apikey",
        "provider.openai.api-key",
        "password",
        "db_passwd",
        "client_secret",
        "token",
        "GITHUB_TOKEN",
        "access_token",
        "credentials",
        "Authorization",
        "auth",
        "private-key",
        "aws_access_key_id",
    ],
)
def test_secret_key_names(name: str) -> None:
    """Key names that name a secret are recognised whatever their case and separators."""
    assert is_secret_key(name)


@pytest.mark.parametrize(
    "name",
    [
        "context.hot.max-tokens",
        "max_tokens",
        "tokenizer",
        "token_budget",
        "min-fragment-tokens",
        "author",
        "name",
        "key",
        "path",
    ],
)
def test_ordinary_key_names(name: str) -> None:
    """Token counts, tokenizers and authors are not secrets."""
    assert not is_secret_key(name)


@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_secret_values_are_replaced_in_text(kind: str) -> None:
    """Each known secret format is replaced and the text around it is kept."""
    secret = SECRETS[kind]
    result = redact_text(f"calling the API with {secret} now")
    assert secret not in result
    assert result == f"calling the API with {REDACTED} now"


def test_private_key_block_is_replaced() -> None:
    """A PEM private key block disappears as a whole."""
    pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----"
    assert redact_text(f"key:\n{pem}\n") == f"key:\n{REDACTED}\n"


def test_bearer_token_keeps_the_scheme() -> None:
    """``Authorization: Bearer <token>`` keeps the word Bearer."""
    assert redact_text("Authorization: Bearer abc.def-ghi_jkl") == (
        f"Authorization: Bearer {REDACTED}"
    )


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("postgresql://user:s3cr3t@db:5432/app", "postgresql://user:***@db:5432/app"),
        ("redis://:hunter2@cache", "redis://:***@cache"),
        ("https://x-token:ghp_abc@github.com/o/r.git", "https://x-token:***@github.com/o/r.git"),
    ],
)
def test_url_password_is_masked(url: str, expected: str) -> None:
    """Passwords in URLs are masked; user, host and path stay readable."""
    assert redact_text(url) == expected


def test_urls_without_password_are_untouched() -> None:
    """A port number is not a password."""
    text = "see http://localhost:8080/path and ssh://git@github.com/o/r"
    assert redact_text(text) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("password=hunter2 user=bob", f"password={REDACTED} user=bob"),
        ('{"api_key": "xyz"}', f'{{"api_key": "{REDACTED}"}}'),
        ("client_secret: abc, next", f"client_secret: {REDACTED}, next"),
    ],
)
def test_secret_assignments_in_text(text: str, expected: str) -> None:
    """``password=…`` and ``"api_key": "…"`` inside free text are redacted."""
    assert redact_text(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "task-assignment-service-handler",
        "context.pipeline.fragment-scorer = builtin:WeightedCompositeScorer",
        "the max-tokens budget is 16000",
        "ask-me-anything-about-the-codebase",
        "",
    ],
)
def test_ordinary_text_is_untouched(text: str) -> None:
    """Identifiers that merely contain ``sk-`` and ordinary settings are not redacted."""
    assert redact_text(text) == text


def test_nested_structures_are_walked() -> None:
    """Dicts, lists and tuples are walked; secret keys lose their value, None and bools stay."""
    value = {
        "api_key": "plain",
        "items": [{"password": None, "token": True, "note": f"uses {SECRETS['github-classic']}"}],
        "pair": ("Bearer abcdefghijk", 3),
        "count": 3,
    }
    assert redact(value) == {
        "api_key": REDACTED,
        "items": [{"password": None, "token": True, "note": f"uses {REDACTED}"}],
        "pair": (f"Bearer {REDACTED}", 3),
        "count": 3,
    }
    assert value["api_key"] == "plain"  # the input is not modified


def test_secret_key_hides_whole_subtree() -> None:
    """A secret key holding a structure is replaced as a whole."""
    assert redact({"credentials": {"user": "bob", "pin": 1234}}) == {"credentials": REDACTED}


def test_show_secrets_returns_value_unchanged() -> None:
    """``show_secrets=True`` is the identity."""
    value = {"api_key": SECRETS["openai"]}
    assert redact(value, show_secrets=True) is value


def test_error_messages_and_details_are_redacted() -> None:
    """The error taxonomy uses this module for messages and details."""
    error = ValidationError(
        f"bad key {SECRETS['openai']}", details={"token": "abc", "url": "http://u:p@h"}
    )
    assert SECRETS["openai"] not in format_error(error)
    assert error.to_dict()["details"] == {"token": REDACTED, "url": "http://u:***@h"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("sk-proj-abcdefgh1234", "sk-proj-…1234"),
        ("sk-ant-api03-abcdefghwxyz", "sk-ant-…wxyz"),
        ("ghp_abcdefghijklmnop9876", "ghp_…9876"),
        ("a-long-database-password", "…word"),
        ("short", "***"),
        (12345, "***"),
        ("", ""),
        (None, ""),
    ],
)
def test_mask(value: object, expected: str) -> None:
    """``mask`` keeps a known prefix and the last four characters of long values only."""
    assert mask(value) == expected


def test_import_is_cheap() -> None:
    """Importing the module pulls in nothing beyond the standard library's ``re``."""
    code = (
        "import sys; before = set(sys.modules); import cleveragents.redaction; "
        "new = set(sys.modules) - before; print(sorted(new))"
    )
    out = subprocess.run(
        [sys.executable, "-c", "import cleveragents; " + code],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert out.strip() == "['cleveragents.redaction']"


# -- properties -----------------------------------------------------------------

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"


def _tail(alphabet: str, size: int = 16) -> st.SearchStrategy[str]:
    return st.text(alphabet=alphabet, min_size=size, max_size=60)


generated_secrets = st.one_of(
    st.builds(
        lambda p, t: p + t,
        st.sampled_from(["sk-", "sk-proj-", "sk-ant-api03-"]),
        _tail(_ALNUM + "_-"),
    ),
    st.builds(
        lambda p, t: p + t, st.sampled_from(["ghp_", "gho_", "ghu_", "ghs_", "ghr_"]), _tail(_ALNUM)
    ),
    st.builds(lambda t: "github_pat_" + t, _tail(_ALNUM + "_")),
    st.builds(lambda t: "glpat-" + t, _tail(_ALNUM + "_-", 20)),
    st.builds(
        lambda a, b, c: f"eyJ{a}.{b}.{c}",
        _tail(_ALNUM + "_-", 5),
        _tail(_ALNUM + "_-", 5),
        _tail(_ALNUM + "_-", 0),
    ),
)


@given(secret=generated_secrets, before=st.text(max_size=40), after=st.text(max_size=40))
def test_embedded_secret_never_survives(secret: str, before: str, after: str) -> None:
    """A generated secret surrounded by arbitrary text is always removed."""
    assert secret not in redact_text(f"{before} {secret} {after}")


@given(secret=generated_secrets, key=st.text(max_size=20), noise=st.text(max_size=30))
def test_secret_inside_structures_never_survives(secret: str, key: str, noise: str) -> None:
    """Secrets nested in dicts and lists are removed too."""
    value = {key: [noise, f"{noise} {secret}"], "x": ({"y": secret},)}
    assert secret not in repr(redact(value))


@given(
    text=st.one_of(
        st.text(),
        st.lists(st.one_of(st.text(max_size=20), generated_secrets)).map(" ".join),
        st.lists(
            st.sampled_from(
                ["password=", "Bearer ", "http://u:", "@host", "sk-", "eyJ", ".", ":", " ", "="]
            )
            | st.text(alphabet=_ALNUM + "_-", max_size=24)
        ).map("".join),
    )
)
def test_redaction_is_idempotent(text: str) -> None:
    """Redacting twice changes nothing more than redacting once."""
    once = redact_text(text)
    assert redact_text(once) == once


@given(
    value=st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=30),
        lambda children: (
            st.lists(children, max_size=4)
            | st.dictionaries(st.sampled_from(["a", "token", "api_key", "n"]), children, max_size=4)
        ),
        max_leaves=20,
    )
)
def test_structure_redaction_is_idempotent(value: object) -> None:
    """``redact`` is idempotent on nested data as well."""
    once = redact(value)
    assert redact(once) == once


_FRAGMENTS = st.sampled_from(
    [
        "password=",
        "PASSWD: ",
        "Secret=",
        "api-key=",
        "ACCESS_TOKEN=",
        "auth-token: ",
        "Bearer ",
        "BEARER ",
        "http://u:",
        "@host",
        "-----BEGIN RSA PRIVATE KEY-----",
        "-----END RSA PRIVATE KEY-----",
        "paſſword=",  # a case-insensitive match on a non-ASCII letter
        "sk-",
        "eyJ",
        "AKIA",
        "AIza",
        "xoxb-",
        ".",
        ":",
        " ",
        "=",
        '"',
    ]
)


@given(
    text=st.one_of(
        st.text(),
        st.lists(
            st.one_of(
                st.text(max_size=20), generated_secrets, st.sampled_from(list(SECRETS.values()))
            )
        ).map(" ".join),
        st.lists(_FRAGMENTS | st.text(alphabet=_ALNUM + "_-/", max_size=40)).map("".join),
    )
)
def test_the_quick_check_never_skips_a_string_the_pattern_changes(text: str) -> None:
    """Strings the cheap look-ahead passes by are those the full pattern leaves alone."""
    from cleveragents.redaction import _PATTERN, _replace

    assert redact_text(text) == _PATTERN.sub(_replace, text)


def test_paths_and_reasons_pass_without_a_scan() -> None:
    """A command's listing of paths comes back unchanged, and cheaply: the full pattern is
    not run on strings with nothing secret-like in them."""
    from cleveragents import redaction

    listing = [{"path": f"pkg/module_{n}/file.py", "reason": "binary"} for n in range(50)]
    calls = []
    original = redaction._PATTERN
    try:
        redaction._PATTERN = type(
            "Counting", (), {"sub": lambda self, *a: calls.append(a) or original.sub(*a)}
        )()
        assert redact(listing) == listing
        assert redact_text("see https://user:hunter22@example.com") == (
            "see https://user:***@example.com"
        )
    finally:
        redaction._PATTERN = original
    assert len(calls) == 1
