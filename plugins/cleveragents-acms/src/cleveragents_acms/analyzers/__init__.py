"""Files to UKO nodes: which files to read, and one analyzer per kind of file.

- :mod:`.files` — ``discover()`` (ignore rules, binary/generated/size filters,
  symlink safety), ``read_text()``, ``choose_analyzer()``, ``language_of()``.
- :mod:`.python` — ``PythonAnalyzer`` (standard library ``ast``).
- :mod:`.markdown` — ``MarkdownAnalyzer`` (line-based block parser).
- :mod:`.treesitter` — ``TypeScriptAnalyzer``, ``JavaScriptAnalyzer``, ``GoAnalyzer``,
  ``RustAnalyzer``, ``JavaAnalyzer`` (grammars from the ``tree-sitter-*`` wheels).
- :mod:`.text` — ``GenericTextAnalyzer``, the fallback for any other text.

Each analyzer satisfies :class:`cleveragents.protocols.UKOAnalyzer` and is
registered by name through the ``analyzer`` slot as a lazy ``"module:Class"``
reference, so nothing here is imported until a file is analyzed.
"""
