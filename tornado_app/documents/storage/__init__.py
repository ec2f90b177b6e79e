"""A company's object storage, through plain-JSON endpoints (:mod:`tornado_app.documents.plain`):
the configuration (``/config/storage``, ``/config/storage/test``, ``/system/time/check``,
``GET /config``), saved profiles, the link map and the download proxy. What each endpoint
does lives in :mod:`.storage_service`; the ``*_handlers`` modules parse, authorize, call it
and answer. What a caller may see of a configuration is :mod:`.storage_view`."""
