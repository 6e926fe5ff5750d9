"""Query analysis: what in a question (often a pasted issue) is worth searching for.

An issue is prose around evidence: names of classes and functions, dotted
module paths, file paths and tracebacks, error names, messages, code in
backticks or fences. Search engines drown that evidence in the prose, and the
text backend reads at most 32 words of a query, so strategies do not search
the question as it is. :func:`analyze` splits it into weighted evidence and
:meth:`QueryAnalysis.text_queries` turns the evidence into a few short,
focused queries.

Nothing here knows a project: weights come from where a token appears (title,
backticks, traceback, code), never from what it is.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache

__all__ = [
    "STOP_WORDS",
    "QueryAnalysis",
    "TextQuery",
    "Weights",
    "analyze",
    "identifier_parts",
    "is_code_like",
    "parts_of",
    "short_form",
]


#: English function words and the vocabulary every issue template uses.
def _word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


STOP_WORDS = _word_set(
    """
    a about above after again against all almost also although always am among an and any
    anyone anything are aren't around as at be because been before being below between both
    but by can cannot could couldn't did didn't do does doesn't doing don't done down during
    each either else even ever every few for from further get gets getting got had hadn't has
    hasn't have haven't having he her here hers herself him himself his how however i i'd i'm
    i've if in into is isn't it it's its itself just let let's like likely made make makes
    many may me might mine more most much must my myself need needs neither no nor not now of
    off often on once one only or other others otherwise our ours ourselves out over own per
    perhaps please quite rather really same see seem seems seemed shall she should shouldn't
    since so some someone something sometimes still such than that that's the their theirs
    them themselves then there there's these they they're this those though through thus to
    too under until up upon us use used uses using very via was wasn't way we we're were
    weren't what what's whatever when where whether which while who whom whose why will with
    within without won't would wouldn't yet you you're your yours yourself yourselves
    able actually already anyway etc e.g i.e ok okay thank thanks hi hello sure
    expected expect expects actual behavior behaviour description describe described
    reproduce reproduced reproducing reproduction steps step version versions python issue
    issues bug bugs problem problems result results output outputs following follows example
    examples work works worked working want wanted think thought know known try tried trying
    case cases thing things instead currently current new old fine wrong correct correctly
    happen happens happened look looks looked run running ran returns return returned error
    errors fix fixed fixes fixing report reported minimal code test tests traceback recent
    call last line lines file files don doesn isn aren wasn weren didn won couldn shouldn
    wouldn haven hasn hadn
    """
)

#: Words of Python (and its usual imports) that say nothing about where code lives.
_CODE_NOISE = _word_set(
    """
    self cls def class return import from as if elif else for while in not and or is none
    true false pass raise try except finally with lambda yield async await print len range
    str int float bool dict list tuple set object type super isinstance assert np numpy pd
    pandas plt os sys re args kwargs main foo bar baz spam eggs obj x y z a b c i j k n
    """
)

#: Code words that mean nothing in prose either ("import" or "class" may, so they stay).
_PROSE_NOISE = _word_set("self cls def none true false args kwargs foo bar baz spam eggs obj print")

#: Prose words and the short forms code spells them with: "environment variable" is
#: ``env`` in code, "configuration" ``config``. A question's prose word also searches its
#: short form, at :data:`_SHORT_FORM_WEIGHT` of the word's salience. Left out: short
#: forms that are keywords or everywhere in some language (``var``, ``val``, ``func``,
#: ``fmt``, ``std``, ``max``, ``exc``) or common folder names (``src``, ``lib``, ``doc``).
SHORT_FORMS: dict[str, str] = {
    "address": "addr", "administrator": "admin", "allocation": "alloc", "application": "app",
    "argument": "arg", "asynchronous": "async", "attribute": "attr", "authentication": "auth",
    "authorization": "auth", "buffer": "buf", "button": "btn", "calculate": "calc",
    "certificate": "cert", "character": "char", "column": "col", "command": "cmd",
    "configuration": "config", "configure": "config", "connection": "conn", "context": "ctx",
    "coordinate": "coord", "database": "db", "declaration": "decl", "dependency": "dep",
    "description": "desc", "destination": "dst", "directory": "dir", "element": "elem",
    "environment": "env", "execute": "exec", "execution": "exec", "expression": "expr",
    "extension": "ext", "frequency": "freq", "header": "hdr", "image": "img",
    "implementation": "impl", "index": "idx", "information": "info", "initialization": "init",
    "initialize": "init", "initialise": "init", "instance": "inst", "iterator": "iter",
    "language": "lang", "manager": "mgr", "memory": "mem", "message": "msg",
    "miscellaneous": "misc", "number": "num", "original": "orig", "package": "pkg",
    "parameter": "param", "pointer": "ptr", "previous": "prev", "property": "prop",
    "reference": "ref", "repository": "repo", "request": "req", "response": "resp",
    "separator": "sep", "sequence": "seq", "specification": "spec", "statement": "stmt",
    "statistics": "stats", "synchronous": "sync", "temporary": "tmp", "token": "tok",
    "utility": "util",
}  # fmt: skip
_SHORT_FORM_WEIGHT = 0.5

#: Verbs a task opens with ("Add retries to …", "Allow environment variables to …"):
#: they say what to do, not where, yet match ``add_*`` and ``allow_*`` names. Opening the
#: title, such a verb keeps :data:`_TASK_VERB_WEIGHT` of that occurrence's salience.
_TASK_VERBS = _word_set(
    "add allow support implement enable disable introduce improve refactor rename replace "
    "remove change update create handle ensure avoid prevent provide expose extend"
)
_TASK_VERB_WEIGHT = 0.25
#: The salience a title's prose word gets from that one occurrence (title 2 + prose 1).
_TITLE_WORD_SALIENCE = 3.0

_FENCE = re.compile(r"```[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)
_BACKTICK = re.compile(r"`([^`\n]{1,200})`")
_TRACE_FRAME = re.compile(r'File "([^"]+)", line (\d+)(?:, in ([\w<>.]+))?')
#: pytest's long traceback style: ``path/to/module.py:695: in run``.
_PYTEST_FRAME = re.compile(r"^[ \t]*([^\s:]+\.py):(\d+): in ([\w<>.]+)", re.M)
#: IPython's and Jupyter's: ``~/…/point.py in __add__(self, other)`` (the line follows,
#: after ``-->``; Python 2 shows the ``.pyc``; VS Code links the path,
#: ``[c:\…\point.py](file:///C:/…/point.py) in __add__(…)``) and, since IPython 8,
#: ``File ~/…/point.py:220, in Point.__add__(self, other)``.
_IPYTHON_FRAME = re.compile(
    r"^[ \t]*(?:File[ \t]+)?(?:\[[^\]\n]*\]\((?:file:/+)?)?((?:[A-Za-z]:)?[^\s:()]+\.py)c?\)?"
    r"(?::(\d+))?,? in ([\w<>.]+)\(",
    re.M,
)
#: ``ValueError: message``, also as pytest shows it (``E   ValueError: …``) and as Python
#: prints a warning (``path.py:12: UserWarning: …``).
_EXCEPTION_LINE = re.compile(
    r"^\s*(?:E\s+)?(?:\S+\.py:\d+:\s*)?(?:[\w.]+\.)?(\w+(?:Error|Exception|Warning|Exit|Interrupt))"
    r"\s*:\s*(.+?)\s*$",
    re.M,
)
_ERROR_NAME = re.compile(r"\b(\w*(?:Error|Exception|Warning))\b")
_QUOTED = re.compile(r"(?<![\w\\])(?:\"([^\"\n]{6,160})\"|'([^'\n]{6,160})')")
_PATH = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w.-]+\.(?:py|pyx|pyi|js|ts|tsx|go|rs|java))\b")
#: ``class Name(...):`` in the question's code: a class of the reporter's own.
_CLASS_DEF = re.compile(r"^[ \t>.]*class[ \t]+([A-Za-z_]\w*)", re.M)
_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)(?![\w(])")
_CALL = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\s*\(")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[a-z0-9][A-Z]|[A-Z]{2,}[a-z]")
_PARTS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
#: Headings of the sections of an issue that list the reporter's environment.
_ENVIRONMENT = re.compile(
    r"^\W*(?:versions?|system (?:details|info(?:rmation)?)|environment|platform|"
    r"installation|operating system)\b.*$",
    re.I | re.M,
)
#: ``numpy 1.24.1``, ``- Django: 3.0``, ``Python 3.10.9 (main, Dec  7 2022 …)``
_VERSION_LINE = re.compile(
    r"^[ \t]*[-*]?[ \t]*[A-Za-z][\w .-]{0,30}?[ \t]*(?:[:=]=?|version)?[ \t]*"
    r"v?\d+\.\d+(?:\.\d+)*\S*(?:[ \t]+\(.*\))?[ \t]*$",
    re.M | re.I,
)
_HTML_COMMENT = re.compile(r"<!--.*?-->", re.S)
_NOT_DOMAIN = frozenset({"com", "org", "net", "io", "html", "htm", "txt", "md", "rst", "www"})

MAX_QUERY_WORDS = 28


_SEPARATORS = re.compile(r"[._\W]+")


@lru_cache(maxsize=200_000)
def parts_of(token: str) -> tuple[str, ...]:
    """Cached :func:`identifier_parts` as a tuple (for scoring many texts)."""
    parts: list[str] = []
    for piece in _SEPARATORS.split(token):
        if piece:
            parts.extend(p.lower() for p in _PARTS.findall(piece))
    return tuple(parts)


def identifier_parts(token: str) -> list[str]:
    """Lower-case parts: ``NDDataRef.handle_mask`` -> nd, data, ref, handle, mask."""
    return list(parts_of(token))


def short_form(word: str) -> str | None:
    """The short form code uses for a prose word (plurals too: ``arguments`` -> ``args``)."""
    short = SHORT_FORMS.get(word)
    if short is None and len(word) > 4 and word.endswith("s"):
        singular = word[:-3] + "y" if word.endswith("ies") else word[:-1]
        short = SHORT_FORMS.get(singular)
        if short is not None and not short.endswith("s"):
            short += "s"
    return short


def is_code_like(token: str) -> bool:
    """True for tokens that can only be code: ``snake_case``, ``CamelCase``, ``dotted.name``."""
    if "." in token.strip("."):
        return all(part.isidentifier() for part in token.split("."))
    core = token.strip("_")
    return ("_" in core and any(c.isalpha() for c in core)) or bool(_CAMEL.search(core))


class Weights(dict[str, float]):
    """Salience per term; ``most_common`` as :class:`collections.Counter` has it."""

    def add(self, key: str, weight: float) -> None:
        self[key] = self.get(key, 0.0) + weight

    def most_common(self, limit: int | None = None) -> list[tuple[str, float]]:
        ordered = sorted(self.items(), key=lambda item: -item[1])
        return ordered if limit is None else ordered[:limit]


@dataclass(frozen=True)
class TextQuery:
    """One short query for the text backend, with the weight its results deserve."""

    kind: str
    text: str
    weight: float


@dataclass
class QueryAnalysis:
    """The evidence in a question, each kind weighted by where it appeared."""

    text: str
    title: str = ""
    #: identifier -> salience (``handle_mask``, ``NDDataRef``, ``Table.read``)
    identifiers: Weights = field(default_factory=Weights)
    #: prose word (lower case) -> salience
    keywords: Weights = field(default_factory=Weights)
    #: file paths as written (``astropy/io/ascii/qdp.py``), most specific first
    paths: list[str] = field(default_factory=list)
    #: dotted module names that may be files (``astropy.io.ascii.qdp``)
    modules: list[str] = field(default_factory=list)
    #: classes the question's code defines (the reporter's, not the project's)
    own_classes: set[str] = field(default_factory=set)
    #: ``(path as written, site prefix stripped; function)`` of traceback frames, innermost last
    trace_frames: list[tuple[str, str]] = field(default_factory=list)
    #: exception class names
    errors: list[str] = field(default_factory=list)
    #: error messages and quoted phrases, as written
    messages: list[str] = field(default_factory=list)

    @property
    def trace_functions(self) -> list[str]:
        """The function names of the traceback frames, innermost last."""
        return [function for _, function in self.trace_frames]

    @property
    def is_empty(self) -> bool:
        return not (self.identifiers or self.keywords or self.paths or self.modules)

    def top_identifiers(self, limit: int = 12) -> list[str]:
        return [name for name, _ in self.identifiers.most_common(limit)]

    def top_keywords(self, limit: int = 20) -> list[str]:
        return [word for word, _ in self.keywords.most_common(limit)]

    def names(self) -> set[str]:
        """Every simple name the question mentions (last part of dotted names too)."""
        found: set[str] = set()
        for identifier in self.identifiers:
            found.add(identifier)
            found.update(p for p in identifier.split(".") if p)
        found.update(self.trace_functions)
        return found

    def terms(self) -> Weights:
        """Lower-case word parts with their salience, for local lexical scoring."""
        terms = Weights()
        for identifier, weight in self.identifiers.items():
            for part in identifier_parts(identifier):
                if len(part) > 1 and part not in _CODE_NOISE:
                    terms.add(part, weight)
        for word, weight in self.keywords.items():
            terms.add(word, weight)
        return terms

    def text_queries(self, *, max_identifier_queries: int = 8) -> list[TextQuery]:
        """A handful of focused queries: the title, each salient name, the prose, each message."""
        queries: list[TextQuery] = []
        seen: set[str] = set()

        def add(kind: str, words: Iterable[str], weight: float) -> None:
            unique = list(dict.fromkeys(w for w in words if w))[:MAX_QUERY_WORDS]
            text = " ".join(unique)
            if text and text.lower() not in seen:
                seen.add(text.lower())
                queries.append(TextQuery(kind, text, weight))

        title_words = _prose_words(self.title) + [
            t for t in _tokens(self.title) if is_code_like(t) or t in self.identifiers
        ]
        add("title", title_words, 1.0)
        for name in self.top_identifiers(max_identifier_queries):
            add("identifier", [name], 0.8)
        for function in reversed(self.trace_functions[-4:]):
            add("trace", [function], 0.8)
        add("keywords", self.top_keywords(16) + self.top_identifiers(8), 1.0)
        for message in self.messages[:3]:
            add("message", _prose_words(message) + _tokens(message), 0.6)
        return queries


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text)


def _prose_words(text: str) -> list[str]:
    words = []
    for word in _WORD.findall(text):
        lower = word.lower()
        if len(lower) > 2 and lower not in STOP_WORDS and lower not in _PROSE_NOISE:
            words.append(lower if not is_code_like(word) else word)
    return words


def _weigh_down_task_verb(analysis: QueryAnalysis) -> None:
    """Weigh down the verb a task's title opens with (its other occurrences keep theirs)."""
    first = _tokens(analysis.title)[:1]
    verb = first[0].lower() if first else ""
    if verb in _TASK_VERBS and verb in analysis.keywords:
        analysis.keywords[verb] -= _TITLE_WORD_SALIENCE * (1 - _TASK_VERB_WEIGHT)


def _trace_frames(text: str) -> list[tuple[str, str, str]]:
    """``(path, line, function)`` of each traceback frame in ``text``, in order (Python's,
    pytest's and IPython's styles; a qualified ``Point.__add__`` gives ``__add__``)."""
    found = [
        *_TRACE_FRAME.finditer(text),
        *_PYTEST_FRAME.finditer(text),
        *_IPYTHON_FRAME.finditer(text),
    ]
    found.sort(key=lambda m: m.start())
    return [(m.group(1), m.group(2) or "", (m.group(3) or "").rsplit(".", 1)[-1]) for m in found]


def _strip_site(path: str) -> str:
    """The package-relative part of an installed path (after site-packages/ or a src/ root)."""
    path = path.replace("\\", "/")
    for marker in ("site-packages/", "dist-packages/", "/src/", "/lib/"):
        if marker in path:
            path = path.rsplit(marker, 1)[1]
            break
    return path.lstrip("./")


def _as_rendered(text: str) -> str:
    """The question as its reader sees it: LF line ends (issues pasted from a browser end
    lines with CRLF, and the patterns read lines by ``$``), no HTML comments (an issue
    template's hidden instructions)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _HTML_COMMENT.sub(" ", text).strip()


def _without_environment(text: str) -> str:
    """The issue without its environment report (versions of Python and of dependencies)."""
    heading = _ENVIRONMENT.search(text)
    if heading is not None and heading.start() > len(text) // 3:
        text = text[: heading.start()]
    return _VERSION_LINE.sub("", text)


def analyze(text: str | None, *extra: str) -> QueryAnalysis:
    """Evidence of ``text`` (plus ``extra`` terms such as request entities), weighted."""
    text = _without_environment(_as_rendered(text or ""))
    analysis = QueryAnalysis(text=text)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    analysis.title = lines[0] if lines else ""
    identifiers = analysis.identifiers

    fences = [m.group(1) for m in _FENCE.finditer(text)]
    prose = _FENCE.sub(" ", text)
    backticks = [m.group(1) for m in _BACKTICK.finditer(prose)]
    prose_only = _BACKTICK.sub(" ", prose)

    # Tracebacks: the files and functions they pass through, and the message at the end.
    for path, _line, function in _trace_frames(text):
        relative = _strip_site(path)
        if relative and relative not in analysis.paths:
            analysis.paths.append(relative)
        if function and function.isidentifier() and function not in ("<module>", "main"):
            analysis.trace_frames.append((relative, function))
            identifiers.add(function, 2.0)
    for error, message in _EXCEPTION_LINE.findall(text):
        analysis.errors.append(error)
        if len(message.split()) >= 2 and message not in analysis.messages:
            analysis.messages.append(message[:200])

    analysis.own_classes.update(_CLASS_DEF.findall(text))

    for path in _PATH.findall(text):
        relative = _strip_site(path)
        if ("/" in relative or relative.count(".") == 1) and relative not in analysis.paths:
            analysis.paths.append(relative)

    def add_identifier(token: str, weight: float, *, called: bool = False) -> None:
        token = token.strip(".")
        # a short name counts only as a called class (``Q(...)``, ``F(...)``)
        short_class = called and token[:1].isupper() and token.isidentifier()
        if not token or token.lower() in _CODE_NOISE or (len(token) < 3 and not short_class):
            return
        if token.lower() in STOP_WORDS and not is_code_like(token):
            return
        if "." in token:
            parts = token.split(".")
            if parts[-1].lower() in _NOT_DOMAIN or any(not p for p in parts):
                return
            is_module = len(parts) >= 3 and all(p.islower() or p == "_" for p in parts)
            if is_module and token not in analysis.modules:
                analysis.modules.append(token)
        identifiers.add(token, weight)

    title_tokens = set(_tokens(analysis.title))
    for source, base in ((prose_only, 1.0), (" ".join(backticks), 1.5), (" ".join(fences), 0.6)):
        in_code = base != 1.0
        for dotted in _DOTTED.findall(source):
            add_identifier(dotted, base)
        for called in _CALL.findall(source):
            add_identifier(called.rsplit(".", 1)[-1], base, called=True)
        for token in _tokens(source):
            if is_code_like(token) or (in_code and base > 1.0):
                add_identifier(token, base * (2.0 if token in title_tokens else 1.0))
    for error in _ERROR_NAME.findall(text):
        if error not in analysis.errors and error not in ("Error", "Exception", "Warning"):
            analysis.errors.append(error)

    for match in _QUOTED.finditer(prose_only):
        phrase = match.group(1) or match.group(2) or ""
        if len(phrase.split()) >= 2 and phrase not in analysis.messages:
            analysis.messages.append(phrase)

    keywords = analysis.keywords
    for word in _prose_words(prose_only):
        if not is_code_like(word):
            keywords.add(word.lower(), 1.0)
    for word in _prose_words(analysis.title):
        if not is_code_like(word):
            keywords.add(word.lower(), 2.0)

    _weigh_down_task_verb(analysis)
    for word, weight in list(keywords.items()):
        short = short_form(word)
        if short and short not in keywords:
            keywords.add(short, weight * _SHORT_FORM_WEIGHT)

    for name in analysis.own_classes & set(identifiers):  # found in the project's tests at best
        identifiers[name] *= 0.25
    for term in extra:
        for token in _tokens(term):
            if is_code_like(token) or len(token) > 2:
                identifiers.add(token, 2.0)
        if "/" in term and term not in analysis.paths:
            analysis.paths.append(term)
    return analysis
