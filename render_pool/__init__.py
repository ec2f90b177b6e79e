"""Document conversion off the event loop, in three parts (an import-linter layers contract
holds the order): ``batch`` (folders and archives) uses ``engine`` (the model, the registry
and one package per format), which uses ``runtime`` (the process pool, the browser, memory
limits). ``render_pool.errors`` is the one module all three share."""
