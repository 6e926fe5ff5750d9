"""The Context Assembly Pipeline: ten replaceable stages, their defaults, and tokenizers.

Phase 1 (strategy orchestration): :mod:`.selector`, :mod:`.allocator`,
:mod:`.executor`. Phase 2 (fragment fusion): :mod:`.dedup`, :mod:`.depth`,
:mod:`.scorer`, :mod:`.packer`, :mod:`.orderer`. Phase 3 (finalisation):
:mod:`.preamble`, :mod:`.skeleton`. :mod:`.assembly` holds the mediator,
:mod:`.config` the scope-chain resolver, :mod:`.tokenizers` the budget's
token counters. Submodules are imported on use, so importing this package
stays cheap.
"""
