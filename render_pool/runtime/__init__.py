"""The runtime: the process pool, the headless browser, memory limits and the process tree.

It knows nothing of formats: it runs the callables it is given in worker processes, bounds
their memory and kills what they started. It imports only ``render_pool.errors``."""
