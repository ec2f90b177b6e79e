"""Launchers and supervisors of the embedded servers (redis-server, SecantusDB, SeaweedFS)
the service starts when no external database, Redis or storage is configured."""
