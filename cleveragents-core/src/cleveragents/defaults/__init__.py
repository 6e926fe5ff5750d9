"""The host's own features, registered as plugins through the public hooks."""
