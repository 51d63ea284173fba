"""Testing support shipped with hermes-core: the provider conformance suite and fakes."""
