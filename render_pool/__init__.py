"""Conversion engines (pure functions: bytes and options in, bytes or text out) and the
bounded process pool that runs them off the event loop."""
