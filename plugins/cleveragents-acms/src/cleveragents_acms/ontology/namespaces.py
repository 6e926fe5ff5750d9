"""IRIs of the UKO layers (spec 001 "Layer structure"); prefix -> namespace."""

from __future__ import annotations

from collections.abc import Mapping

BASE = "https://cleveragents.ai/ontology/uko"

#: prefix -> (namespace IRI, layer)
LAYERS: dict[str, tuple[str, int]] = {
    "uko": (f"{BASE}#", 0),
    "uko-code": (f"{BASE}/code#", 1),
    "uko-doc": (f"{BASE}/doc#", 1),
    "uko-data": (f"{BASE}/data#", 1),
    "uko-infra": (f"{BASE}/infra#", 1),
    "uko-oo": (f"{BASE}/oo#", 2),
    "uko-func": (f"{BASE}/func#", 2),
    "uko-proc": (f"{BASE}/proc#", 2),
    "uko-py": (f"{BASE}/py#", 3),
    "uko-ts": (f"{BASE}/ts#", 3),
    "uko-rs": (f"{BASE}/rs#", 3),
    "uko-java": (f"{BASE}/java#", 3),
}

UKO = LAYERS["uko"][0]

#: The W3C vocabularies the ontology files are written in.
STANDARD: dict[str, str] = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
}

RDF_TYPE = STANDARD["rdf"] + "type"


def _namespaces(prefixes: Mapping[str, str] | None) -> dict[str, str]:
    merged = {prefix: namespace for prefix, (namespace, _) in LAYERS.items()}
    merged.update(STANDARD)
    if prefixes:
        merged.update(prefixes)
    return merged


def expand(curie: str, prefixes: Mapping[str, str] | None = None) -> str:
    """``uko-py:Function`` -> full IRI; full IRIs and unknown prefixes pass through unchanged.

    ``prefixes`` adds namespaces (prefix -> IRI) beyond the UKO layers, e.g. a
    vocabulary's ``uko-tf``.
    """
    prefix, sep, local = curie.partition(":")
    if not sep or local.startswith("//"):
        return curie
    if prefixes is None:
        namespace = LAYERS[prefix][0] if prefix in LAYERS else STANDARD.get(prefix)
        return namespace + local if namespace is not None else curie
    namespace = _namespaces(prefixes).get(prefix)
    return namespace + local if namespace is not None else curie


def compact(iri: str, prefixes: Mapping[str, str] | None = None) -> str:
    """Full IRI -> ``prefix:Local`` when it is in a known UKO namespace (or in ``prefixes``)."""
    candidates = (
        ((prefix, namespace) for prefix, (namespace, _) in LAYERS.items())
        if prefixes is None
        else _namespaces(prefixes).items()
    )
    for prefix, namespace in sorted(candidates, key=lambda kv: -len(kv[1])):
        if iri.startswith(namespace):
            return f"{prefix}:{iri[len(namespace) :]}"
    return iri


def layer_of_prefix(prefix: str) -> int | None:
    """The layer (0-3) of a built-in UKO prefix, ``None`` for any other prefix."""
    entry = LAYERS.get(prefix.rstrip(":"))
    return entry[1] if entry else None
