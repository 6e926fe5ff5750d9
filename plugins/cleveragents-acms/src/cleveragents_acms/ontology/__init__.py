"""ontology."""
