"""One process runs a data directory's embedded servers; the others read how to reach them
(tornado_app/embedded/datadir.py). A flock conflicts between two descriptors of one file in
one process as it does between processes, so the lock is tested here without a second one;
tests/test_cli.py runs `create-admin` beside a real `serve`."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tornado_app.embedded.datadir import DataDirLock, Holder
from tornado_app.embedded.secantus import credentials_path, login_url, start_secantus
from tornado_app.embedded.servers import EmbeddedServerError


def test_the_holder_is_known_until_it_lets_go(tmp_path: Path) -> None:
    service, command = DataDirLock(tmp_path), DataDirLock(tmp_path)
    assert command.holder() is None
    assert service.try_acquire("serve")
    assert not command.try_acquire("create-admin")
    assert command.holder() == Holder(os.getpid(), "serve", ready=False)
    service.publish(mongo_port=27999, redis_url="unix:///d/redis/redis.sock")
    found = command.holder()
    assert found == Holder(os.getpid(), "serve", True, 27999, "unix:///d/redis/redis.sock")
    assert found.is_service
    assert (tmp_path / "embedded.lock").stat().st_mode & 0o077 == 0
    service.stop()
    assert command.holder() is None
    assert command.try_acquire("create-admin")
    assert not DataDirLock(tmp_path).holder().is_service  # a command is not a service
    command.stop()


def test_a_probe_of_the_lock_does_not_make_a_starting_service_think_it_is_taken(
        tmp_path: Path) -> None:
    """``holder()`` tests a free lock by taking it for a moment (``create-admin`` does so
    while a service may be starting): the service taking the lock then is not refused."""
    stop = threading.Event()

    def probe() -> None:
        prober = DataDirLock(tmp_path)
        while not stop.is_set():
            prober.holder()

    prober = threading.Thread(target=probe)
    prober.start()
    refused = 0
    try:
        for _ in range(300):
            service = DataDirLock(tmp_path)
            if service.try_acquire("serve"):
                service.stop()
            else:
                refused += 1
    finally:
        stop.set()
        prober.join()
    assert refused == 0


def test_waiting_for_a_holder_that_is_still_starting_ends_at_the_deadline(tmp_path: Path) -> None:
    service = DataDirLock(tmp_path)
    assert service.try_acquire("serve")
    try:
        found = DataDirLock(tmp_path).wait_for_holder(timeout=0.3)
        assert found is not None and not found.ready
    finally:
        service.stop()
    assert DataDirLock(tmp_path).wait_for_holder(timeout=5) is None


def test_login_url_uses_the_saved_login(tmp_path: Path) -> None:
    store = tmp_path / "mongo"
    assert login_url(store, 1234) is None
    credentials_path(store).write_text('{"user": "docservice", "password": "p/w"}')
    assert login_url(store, 1234) == ("mongodb://docservice:p%2Fw@127.0.0.1:1234/"
                                      "?directConnection=true&authSource=admin")


@pytest.mark.slow  # starts SecantusDB
def test_a_store_open_in_another_process_is_one_clear_line(tmp_path: Path) -> None:
    first = start_secantus(tmp_path / "mongo", tmp_path / "logs")
    try:
        with pytest.raises(EmbeddedServerError) as err:
            start_secantus(tmp_path / "mongo", tmp_path / "logs")
    finally:
        first.stop()
    assert str(err.value) == (f"the SecantusDB store {tmp_path / 'mongo'} is open in another "
                              "process (a service still running on this DATA_DIR?): stop it "
                              "first")
