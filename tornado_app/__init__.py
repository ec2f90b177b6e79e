"""HTTP layer of the service: route table, handlers, envelopes and the CLI."""
