"""Readers: one per input format, each building a :class:`render_pool.model.Document`."""
