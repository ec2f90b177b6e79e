"""Command line: ``serve``, ``worker``, ``create-admin``, ``create-company``, ``create-user``
and ``convert`` (:mod:`tornado_app.convert_cli`).

``serve`` with no company at all prints one line with a one-time setup address (the UI's
setup screen creates the first company and its ADMIN); ``create-admin`` does the same from
a terminal.

``serve`` with no ``MONGO_URL``/``REDIS_URL`` starts private SecantusDB and redis-server
children under ``DATA_DIR`` and stops them on exit (also on Ctrl-C and SIGTERM). One process
runs them (:mod:`tornado_app.embedded.datadir`): ``create-admin``, ``create-company`` and
``create-user`` use those of the service running on ``DATA_DIR``, or start their own while
none runs; a second ``serve`` on the same ``DATA_DIR`` stops with one line saying so.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import logging
import signal
import socket
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import urlsplit

import tornado.httpserver

from tornado_app.app import make_app, parse_services
from tornado_app.convert_cli import add_arguments as add_convert_arguments
from tornado_app.convert_cli import run_convert
from tornado_app.embedded.datadir import DataDirBusy, DataDirLock, Holder
from tornado_app.embedded.secantus import login_url
from tornado_app.embedded.servers import (
    Embedded,
    EmbeddedServerError,
    ensure_dir,
    start_redis,
    start_secantus,
)
from tornado_app.logs import setup_logging
from tornado_app.runtime import run, settle_heap
from tornado_app.services import Services, open_services
from tornado_app.settings import Settings

log = logging.getLogger("tornado_app")


def _holder_text(holder: Holder) -> str:
    return f"{holder.command or 'another process'}, pid {holder.pid}" if holder.pid else \
        "another process"


def start_embedded(settings: Settings, embedded: Embedded, command: str) -> tuple[str, str]:
    """Start what is not configured, holding the data directory's lock
    (:mod:`tornado_app.embedded.datadir`); returns the MongoDB and Redis URLs to use."""
    mongo_url, redis_url = settings.mongo_url, settings.redis_url
    if mongo_url and redis_url:
        return mongo_url, redis_url
    data = ensure_dir(settings.data_dir)
    lock = DataDirLock(data)
    if not lock.try_acquire(command):
        holder = lock.holder()
        who = _holder_text(holder) if holder else "another process"
        raise DataDirBusy(
            f"the embedded servers of {data} are run by {who}: stop it first, or give "
            f"this {command} another DATA_DIR")
    embedded.lock = lock
    own_redis = not redis_url
    if not redis_url:
        redis_url = embedded.add(start_redis(data / "redis", persistent=True)).url
    mongo_port = None
    if not mongo_url:
        mongo_url = embedded.add(start_secantus(data / "mongo", data / "logs")).url
        mongo_port = urlsplit(mongo_url).port
    lock.publish(mongo_port=mongo_port, redis_url=redis_url if own_redis else None)
    return mongo_url, redis_url


def reach_embedded(settings: Settings, embedded: Embedded, command: str) -> tuple[str, str]:
    """For a terminal command (``create-admin``...): the servers of the service running on
    the data directory, reached with the service's own login; when none runs, its own
    (:func:`start_embedded`). Returns the MongoDB and Redis URLs to use."""
    if settings.mongo_url and settings.redis_url:
        return settings.mongo_url, settings.redis_url
    data = ensure_dir(settings.data_dir)
    lock = DataDirLock(data)
    for _attempt in range(3):  # a service may take or let go of the lock meanwhile
        holder = lock.wait_for_holder(timeout=60)
        if holder is None:
            with contextlib.suppress(DataDirBusy):
                return start_embedded(settings, embedded, command)
            continue
        if not holder.is_service:
            raise EmbeddedServerError(
                f"{_holder_text(holder)} is using the embedded servers of {data}; run "
                f"{command} again once it has ended")
        if not holder.ready:
            raise EmbeddedServerError(
                f"the service on {data} ({_holder_text(holder)}) is still starting; run "
                f"{command} again once it serves")
        mongo_url = settings.mongo_url or (
            login_url(data / "mongo", holder.mongo_port) if holder.mongo_port else None)
        redis_url = settings.redis_url or holder.redis_url
        if not mongo_url or not redis_url:
            missing = " and ".join(name for name, url in (("MONGO_URL", mongo_url),
                                                          ("REDIS_URL", redis_url)) if not url)
            raise EmbeddedServerError(
                f"the service on {data} ({_holder_text(holder)}) is configured with "
                f"{missing}: run {command} with the same settings")
        log.info("using the embedded servers of the running service",
                 extra={"data_dir": str(data), "pid": holder.pid})
        return mongo_url, redis_url
    raise EmbeddedServerError(f"the embedded servers of {data} keep changing hands; "
                              f"run {command} again")


async def _with_services(settings: Settings, embedded: Embedded, command: str,
                         fn: Callable[[Services], Awaitable[int]]) -> int:
    """``fn`` with the services open on the embedded (or configured) servers; closed after."""
    mongo_url, redis_url = reach_embedded(settings, embedded, command)
    svc = await open_services(settings, mongo_url=mongo_url, redis_url=redis_url)
    try:
        return await fn(svc)
    finally:
        await svc.close()


async def stop_requested() -> None:
    """Return once SIGTERM or SIGINT (Ctrl-C) has arrived."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


_BACKLOG = 128  # connections waiting to be accepted (Tornado's own default)


def bind_service_port(port: int, host: str) -> list[socket.socket]:
    """The service's sockets, bound (not yet listening) before anything else starts: the
    embedded servers started next ask the kernel for free ports of their own (SeaweedFS for
    eight) and could be given this one while it is still free. Until :func:`listen_on` a
    caller is refused as before (nothing listens); a port in use stops start-up at once, in
    one line (ValueError), before seconds of work."""
    sockets: list[socket.socket] = []
    try:
        found = socket.getaddrinfo(host or None, port, socket.AF_UNSPEC, socket.SOCK_STREAM,
                                   0, socket.AI_PASSIVE)
        for family, kind, proto, _name, address in dict.fromkeys(found):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:  # as Tornado binds: each family its own socket
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            sock.setblocking(False)
            try:
                sock.bind(address)
            except OSError as exc:  # "localhost" on a machine without IPv6, as Tornado skips
                if exc.errno == errno.EADDRNOTAVAIL and host == "localhost" \
                        and family == socket.AF_INET6:
                    sockets.pop().close()
                    continue
                raise
    except OSError as exc:
        for sock in sockets:
            sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ValueError(f"port {port} on {host or 'all addresses'} is in use") from None
        raise
    return sockets


def listen_on(server: tornado.httpserver.HTTPServer, sockets: list[socket.socket]) -> None:
    """Start taking connections on the sockets :func:`bind_service_port` bound."""
    for sock in sockets:
        sock.listen(_BACKLOG)
    server.add_sockets(sockets)


async def serve(settings: Settings, port: int, host: str, services: tuple[str, ...],
                seed: Path | None, embedded: Embedded, *, worker: bool = True) -> None:
    from tornado_app.callers import check_listen_address
    from tornado_app.ops import listen_metrics, parse_address

    check_listen_address(settings, host)  # DOCS_AUTH=none: loopback only
    parse_address(settings.metrics_address)  # a malformed METRICS_ADDRESS stops start-up
    sockets = bind_service_port(port, host)
    mongo_url, redis_url = start_embedded(settings, embedded, "serve")
    svc: Services = await open_services(settings, mongo_url=mongo_url, redis_url=redis_url)
    if "docs" in services:
        from tornado_app.documents.setup import open_docs_services

        await open_docs_services(svc, embedded)
    if seed:
        from tornado_app.seed import load_seed

        await load_seed(svc, seed)
    consumer = None
    if "docs" in services and worker:
        from tornado_app.documents.job_worker import JobWorker

        consumer = JobWorker(svc)
        consumer.start()
    app = make_app(svc, services)
    server = tornado.httpserver.HTTPServer(
        app, xheaders=False, max_body_size=settings.max_upload_bytes + 1024 * 1024,
        idle_connection_timeout=60, body_timeout=300,
    )
    listen_on(server, sockets)
    metrics_server = listen_metrics(svc, settings.metrics_address)
    settle_heap(settings.gc_gen0_threshold)
    log.info("serving", extra={"port": port, "host": host, "services": ",".join(services),
                               "event_loop": type(asyncio.get_running_loop()).__module__})
    if "auth" in services:
        await announce_first_run(svc, host, port)
    await stop_requested()
    log.info("shutting down: no new connections; waiting for requests in flight")
    server.stop()
    svc.extras["closing"] = True  # event streams end (clients follow elsewhere)
    if metrics_server is not None:
        metrics_server.stop()
    # requests in flight and the running job share one grace period (the job is handed back
    # to the queue if it has not ended by then)
    waits = [app.settings["inflight"].wait_idle(settings.shutdown_grace_seconds)]
    if consumer is not None:
        waits.append(consumer.stop(settings.shutdown_grace_seconds))
    drained = (await asyncio.gather(*waits))[0]
    log.info("requests drained" if drained else "grace period over; closing connections")
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(server.close_all_connections(), 5)
    await svc.close()


async def work(settings: Settings, port: int, host: str, embedded: Embedded) -> None:
    """``worker``: the job consumer and the render pool only; ``/health``, ``/ready`` and
    ``/metrics`` on ``host:port`` (open: bind it to loopback or an internal network)."""
    from tornado_app.documents.job_worker import JobWorker
    from tornado_app.documents.setup import open_docs_services
    from tornado_app.ops import make_metrics_app

    sockets = bind_service_port(port, host)
    mongo_url, redis_url = start_embedded(settings, embedded, "worker")
    svc: Services = await open_services(settings, mongo_url=mongo_url, redis_url=redis_url)
    await open_docs_services(svc, embedded)
    consumer = JobWorker(svc)
    consumer.start()
    server = tornado.httpserver.HTTPServer(make_metrics_app(svc))
    listen_on(server, sockets)
    settle_heap(settings.gc_gen0_threshold)
    log.info("worker", extra={"port": port, "host": host, "consumer": consumer.name})
    await stop_requested()
    log.info("shutting down: the running job ends in the grace period or is handed back")
    await consumer.stop(settings.shutdown_grace_seconds)
    server.stop()
    await svc.close()


def setup_address(host: str, port: int, token: str) -> str:
    """The address a person opens to create the first company (wildcard hosts become
    127.0.0.1, IPv6 addresses get brackets)."""
    if host in ("", "0.0.0.0", "::"):  # noqa: S104 - a comparison, not a bind
        host = "127.0.0.1"
    elif ":" in host:
        host = f"[{host}]"
    return f"http://{host}:{port}/ui/#/setup?token={token}"


async def announce_first_run(svc: Services, host: str, port: int) -> None:
    """With no company yet: print the one-time setup address (on stdout, for the person
    who started the service; the log says only that it was printed)."""
    from tornado_app.auth.setup import first_run_token

    token = await first_run_token(svc)
    if token is None:
        return
    minutes = max(1, svc.settings.setup_token_ttl_seconds // 60)
    print(f"First run: no company yet. Open {setup_address(host, port, token)} within "
          f"{minutes} minutes to create the first company and its administrator "
          f"(or, while this runs, in another terminal here: just create-admin).", flush=True)
    log.info("first run: setup address printed on stdout (valid once)")


def _ask(prompt: str, given: str | None) -> str:
    if given:
        return given
    if not sys.stdin.isatty():
        raise ValueError(f"{prompt.strip(': ')} is needed (pass it as an option)")
    return input(prompt).strip()


def _read_password() -> str:
    """Twice without echo at a terminal; the first line of stdin otherwise (scripts)."""
    import getpass

    if not sys.stdin.isatty():
        return sys.stdin.readline().rstrip("\r\n")
    first = getpass.getpass("Password (8-128 characters): ")
    if getpass.getpass("Password again: ") != first:
        raise ValueError("the two passwords differ")
    return first


async def _create_admin(svc: Services, args: argparse.Namespace) -> int:
    from store import companies
    from tornado_app.api_errors import ApiError
    from tornado_app.auth.fields import check_password, check_real_name, check_username
    from tornado_app.auth.setup import (
        check_company_code,
        check_company_name,
        create_first_admin,
    )

    try:
        code = check_company_code(_ask("Company code: ", args.company))
        existing = await companies.get_by_code(svc.db, code)
        name = existing.name if existing else check_company_name(
            _ask("Company name: ", args.name))
        username = check_username(_ask("Username: ", args.username))
        real_name = check_real_name(args.real_name or "")
        password = check_password(_read_password())
        company, user = await create_first_admin(
            svc, company_code=code, company_name=name, username=username, password=password,
            real_name=real_name)
    except ApiError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 1
    print(f"ADMIN {user.username} created in company {company.code} ({company.name}); "
          f"sign in at /ui/ with company code {company.code}")
    return 0


async def _create_company(svc: Services, code: str, name: str) -> int:
    from tornado_app.seed import ensure_company

    company = await ensure_company(svc, code, name)
    print(f"company {company.code} id={company.id}")
    return 0


async def _create_user(svc: Services, args: argparse.Namespace) -> int:
    from store import companies
    from tornado_app.seed import ensure_user

    company = await companies.get_by_code(svc.db, args.company)
    if company is None:
        print(f"no company with code {args.company!r}", file=sys.stderr)
        return 2
    created = await ensure_user(svc, company, {
        "username": args.username, "password": args.password, "role": args.role,
        "realName": args.real_name or "",
    })
    print("user created" if created else "user exists already")
    return 0 if created else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tornado_app")
    sub = parser.add_subparsers(dest="command", required=True)
    p_serve = sub.add_parser("serve", help="start the service")
    p_serve.add_argument("--port", type=int, default=8080)
    p_serve.add_argument("--host", default="127.0.0.1")
    p_serve.add_argument("--seed", type=Path, default=None)
    p_serve.add_argument("--services", default="all", help="all, auth, docs or auth,docs")
    p_serve.add_argument("--no-worker", action="store_true",
                         help="only enqueue jobs; run no job consumer (see: worker)")
    p_work = sub.add_parser("worker", help="run jobs only: the job consumer and the render "
                            "pool, with /health, /ready and /metrics on --port")
    p_work.add_argument("--port", type=int, default=8081)
    p_work.add_argument("--host", default="127.0.0.1")
    p_admin = sub.add_parser("create-admin", help="create a company (if new) and an ADMIN; "
                             "asks for what is not given, the password without echo")
    p_admin.add_argument("--company", help="company code")
    p_admin.add_argument("--name", help="company name (for a new company)")
    p_admin.add_argument("--username")
    p_admin.add_argument("--real-name", default="")
    p_company = sub.add_parser("create-company", help="create a company (tenant)")
    p_company.add_argument("--code", required=True)
    p_company.add_argument("--name", required=True)
    p_user = sub.add_parser("create-user", help="create a user in a company")
    p_user.add_argument("--company", required=True, help="company code")
    p_user.add_argument("--username", required=True)
    p_user.add_argument("--password", required=True)
    p_user.add_argument("--role", default="ANNOTATOR")
    p_user.add_argument("--real-name", default="")
    add_convert_arguments(sub.add_parser(
        "convert", help="convert documents with the service's readers and writers, "
        "without servers (like POST /api/convert)"))
    args = parser.parse_args(argv)

    settings = Settings.from_env()
    if args.command == "convert":  # its output is the documents and a summary
        setup_logging("WARNING", settings.log_format)
        return run_convert(args, settings)
    setup_logging(settings.log_level, settings.log_format)
    embedded = Embedded()
    try:
        if args.command == "serve":
            seed = args.seed or settings.seed_file
            run(serve(settings, args.port, args.host, parse_services(args.services), seed,
                      embedded, worker=not args.no_worker), settings.event_loop)
            return 0
        if args.command == "worker":
            run(work(settings, args.port, args.host, embedded), settings.event_loop)
            return 0
        if args.command == "create-admin":
            return asyncio.run(_with_services(settings, embedded, args.command,
                                              lambda s: _create_admin(s, args)))
        if args.command == "create-company":
            return asyncio.run(_with_services(
                settings, embedded, args.command,
                lambda s: _create_company(s, args.code, args.name)))
        return asyncio.run(_with_services(settings, embedded, args.command,
                                          lambda s: _create_user(s, args)))
    except (EmbeddedServerError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    finally:
        embedded.stop()


if __name__ == "__main__":
    sys.exit(main())
