"""Batches of Markdown/HTML documents: a server folder (``/md/convert-folder``,
:mod:`.folder_handlers`) or an uploaded or staged archive (``/api/upload-archive``,
``/api/archive/stage``, ``/api/archive/process``, :mod:`.archive_handlers`), run now or as a
job. The work itself, shared with the job worker, is :mod:`.batch_service`."""
