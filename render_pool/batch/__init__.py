"""Batch work on folders and archives of Markdown and HTML: safe unpacking, planning,
link rewriting, data-URI extraction and the pool jobs that run them.

It uses the format engine (``render_pool.engine``) to read HTML and write Markdown and chunks;
the engine never imports it."""
