"""PostgreSQL test helpers: a fresh schema per test, so other tests' tables never interfere."""

from __future__ import annotations

import contextlib
import uuid


def pg_schema_url(base: str) -> str:
    """A URL of ``base`` whose search path is a new, empty schema."""
    from sqlalchemy import create_engine, text

    schema = f"t_{uuid.uuid4().hex[:12]}"
    engine = create_engine(base)
    with engine.begin() as conn:
        conn.execute(text(f"CREATE SCHEMA {schema}"))
    engine.dispose()
    return f"{base}?options=-csearch_path%3D{schema}"


class PgOutage:
    """A TCP relay in front of PostgreSQL that a test can take down and bring back.

    The app under test connects through :attr:`url`; :meth:`stop` cuts every connection and
    refuses new ones, as a stopped server does (without stopping the server other tests
    share), and :meth:`start` lets connections through again.
    """

    def __init__(self, url: str) -> None:
        import socket
        import threading

        from sqlalchemy import make_url

        target = make_url(url)
        self._target = (target.host or "127.0.0.1", target.port or 5432)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = target.set(host="127.0.0.1", port=self._listener.getsockname()[1])
        self.url = self.url.render_as_string(hide_password=False)
        self.up = True
        self._open: list[socket.socket] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        import socket
        import threading

        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            if not self.up:
                client.close()  # like a stopped server: the connection is refused at once
                continue
            server = socket.create_connection(self._target)
            with self._lock:
                self._open += [client, server]
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(source, sink) -> None:  # type: ignore[no-untyped-def]
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass
        finally:
            for end in (source, sink):
                with contextlib.suppress(OSError):
                    end.close()

    def stop(self) -> None:
        """Take the server away: open connections are cut, new ones refused."""
        import socket

        self.up = False
        with self._lock:
            ends, self._open = self._open, []
        for end in ends:
            try:
                end.shutdown(socket.SHUT_RDWR)
                end.close()
            except OSError:
                pass

    def start(self) -> None:
        """Bring the server back."""
        self.up = True

    def close(self) -> None:
        """Stop relaying for good."""
        self.stop()
        self._listener.close()
