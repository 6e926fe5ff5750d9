"""indexing."""
