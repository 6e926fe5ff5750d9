"""The one place that decides what counts as a secret and hides it.

Logs, CLI output and error details all pass through :func:`redact`, so a key
pasted into a config value, a token in an exception message or a password in a
database URL is hidden the same way everywhere. Two rules apply:

* a mapping key that *names* a secret (``api_key``, ``password``, ``token`` …)
  has its whole value replaced by :data:`REDACTED`;
* every string is scanned for values that *look* like secrets (provider keys,
  JWTs, GitHub/GitLab tokens, ``Bearer …``, ``password=…``, URL passwords).

Redaction is idempotent and only imports :mod:`re`, so it is cheap enough to
run on every log record.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["REDACTED", "is_secret_key", "mask", "redact", "redact_text"]

REDACTED = "***REDACTED***"

# Key names, normalised to lower case with ``-`` turned into ``_``. ``token`` is
# a secret, ``max_tokens``, ``tokenizer`` and ``token_budget`` are not; ``auth``
# and ``authorization`` are, ``author`` is not.
_SECRET_KEY = re.compile(
    r"api_?key|password|passwd|secret|credential|private_?key|access_?key"
    r"|auth(?!or(?!iz))"
    r"|token(?![a-z]|_(?:budget|count|limit|usage|ratio|estimate|ids?))"
)

# A secret-looking value never starts in the middle of a word: ``task-…`` is not
# an OpenAI key. ``_B`` is that left boundary.
_B = r"(?<![A-Za-z0-9_\-])"
_TOKEN_PATTERNS = (
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
    _B + r"sk-[A-Za-z0-9_\-]{16,}",  # OpenAI (sk-, sk-proj-), Anthropic (sk-ant-)
    _B + r"eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*",  # JWT
    _B + r"gh[pousr]_[A-Za-z0-9]{16,}",  # GitHub
    _B + r"github_pat_[A-Za-z0-9_]{16,}",
    _B + r"glpat-[A-Za-z0-9_\-]{16,}",  # GitLab
    _B + r"xox[abposr]-[A-Za-z0-9\-]{10,}",  # Slack
    _B + r"AKIA[0-9A-Z]{16}(?![A-Za-z0-9])",  # AWS access key id
    _B + r"AIza[0-9A-Za-z_\-]{35}",  # Google API key
)
_PATTERN = re.compile(
    "|".join(
        [
            "(?P<token>" + "|".join(_TOKEN_PATTERNS) + ")",
            r"(?P<bearer>(?i:bearer)\s+)[A-Za-z0-9._~_+/\-]{8,}=*",
            # scheme://user:PASSWORD@host keeps user and host
            r"(?P<url>[A-Za-z][A-Za-z0-9+.\-]*://[^\s/:@]*:)[^\s/@]+(?=@)",
            # password=…, "api_key": "…", secret: … (DSNs, headers, prose)
            r"(?P<kv>(?<![A-Za-z0-9])(?i:password|passwd|secret|api[_\-]?key"
            r"|access[_\-]?token|auth[_\-]?token)[\"']?\s*[=:]\s*)"
            r"(?P<kv_value>\"[^\"\n]*\"|'[^'\n]*'|[^\s,;&\"'}\]]+)",
        ]
    )
)


# Every match of _PATTERN holds one of these, lower-cased: an ASCII string with none of
# them is returned as it is, without the pattern's slower scan (a command's JSON output
# may hold thousands of paths). Other strings always get the scan: a case-insensitive
# match may stand on a non-ASCII letter (``ſ`` matches ``s``).
_TRIGGERS = (
    "-----begin",
    "sk-",
    "eyj",
    "gh",
    "github_pat_",
    "glpat-",
    "xox",
    "akia",
    "aiza",
    "bearer",
    "://",
    "passw",
    "secret",
    "api",
    "token",
)


def _may_hold_secret(text: str) -> bool:
    if not text.isascii():
        return True
    lowered = text.lower()
    return any(trigger in lowered for trigger in _TRIGGERS)


def _replace(match: re.Match[str]) -> str:
    if match.group("token") is not None:
        return REDACTED
    if (prefix := match.group("bearer")) is not None:
        return prefix + REDACTED
    if (prefix := match.group("url")) is not None:
        return prefix + "***"
    value = match.group("kv_value")
    if value[:1] in {'"', "'"}:
        return match.group("kv") + value[0] + REDACTED + value[0]
    return match.group("kv") + REDACTED


def is_secret_key(name: str) -> bool:
    """Whether a mapping key or configuration key names a secret.

    ``provider.openai.api-key``, ``GITHUB_TOKEN`` and ``authorization`` do;
    ``context.hot.max-tokens`` and ``author`` do not.
    """
    return _SECRET_KEY.search(name.lower().replace("-", "_")) is not None


def redact_text(text: str) -> str:
    """``text`` with every secret-looking substring replaced."""
    return _PATTERN.sub(_replace, text) if _may_hold_secret(text) else text


def redact(value: Any, *, show_secrets: bool = False) -> Any:
    """A copy of ``value`` with secrets hidden; ``show_secrets=True`` returns it unchanged.

    Dicts, lists and tuples are walked recursively. A dict value under a secret
    key is replaced by :data:`REDACTED` unless it is ``None`` or a bool (which
    say whether something is set, not what it is). Other objects are returned as
    they are.
    """
    if show_secrets:
        return value
    return _redact(value)


def _redact(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {
            key: (
                REDACTED
                if isinstance(key, str)
                and is_secret_key(key)
                and item is not None
                and not isinstance(item, bool)
                else _redact(item)
            )
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [_redact(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_redact(item) for item in value)
    return value


_KNOWN_PREFIX = re.compile(r"^(sk-ant-|sk-proj-|sk-|gh[pousr]_|github_pat_|glpat-|xox[abposr]-)")


def mask(value: Any) -> str:
    """A short form that proves which secret is set without showing it.

    ``sk-proj-…abcd`` for a long string (its known prefix and last four
    characters), ``***`` for anything short or not a string, ``""`` for empty.
    """
    if value is None or value == "":
        return ""
    if not isinstance(value, str) or len(value) < 12:
        return "***"
    prefix = _KNOWN_PREFIX.match(value)
    return f"{prefix.group(0) if prefix else ''}…{value[-4:]}"
