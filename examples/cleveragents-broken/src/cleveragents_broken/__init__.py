"""cleveragents-broken: a plugin that cannot be imported, on purpose."""
