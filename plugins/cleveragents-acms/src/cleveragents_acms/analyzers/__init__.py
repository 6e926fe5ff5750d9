"""analyzers."""
