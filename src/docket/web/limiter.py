"""Login rate limits and lockout, per client address, per token prefix and per credential.

A lockout is keyed three ways. The same wrong credential failing again and again (a
broken script with an old token) locks out only that credential from that address; an
address or a token prefix is locked out by ``lockout_failures`` *different* wrong
credentials (guessing), so one broken script does not lock out every script on a host.

Kept in memory: one server process is what ``docket … serve`` runs (several workers
would each count on their own; see docs/web.md). Memory is bounded: at most
``MAX_KEYS`` clients and prefixes are remembered, the oldest forgotten first.
"""

from __future__ import annotations

import hashlib
import math
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

from docket.web.settings import WebSettings

MAX_KEYS = 10_000
PREFIX_CHARS = 12  # "dkr_" plus 8 characters of the secret


@dataclass
class _Track:
    attempts: deque[float] = field(default_factory=deque)
    failed: set[str] = field(default_factory=set)  # distinct wrong credentials (hashes)
    failures: int = 0  # wrong attempts in a row ("credential" keys)
    locked_until: float = 0.0


def login_keys(client: str, token: str) -> list[tuple[str, str]]:
    """The (kind, key) pairs one login attempt counts against.

    ``credential`` is the address together with a hash of the token (never the token).
    """
    digest = hashlib.sha256(token.strip().encode()).hexdigest()
    return [
        ("client", client),
        ("prefix", token.strip()[:PREFIX_CHARS]),
        ("credential", f"{client} {digest}"),
    ]


class LoginLimiter:
    """Counts login attempts and failures; says how long a caller must wait.

    Args:
        settings: the limits (attempts per window per client and per prefix, lockout).
        clock: monotonic seconds (tests pass a fake clock).
    """

    def __init__(self, settings: WebSettings, clock: Callable[[], float] = time.monotonic) -> None:
        self.settings, self.clock = settings, clock
        self._tracks: OrderedDict[tuple[str, str], _Track] = OrderedDict()
        self._lock = threading.Lock()

    def _limit(self, kind: str) -> float:
        s = self.settings
        limits = {"client": s.login_attempts_per_client, "prefix": s.login_attempts_per_prefix}
        return limits.get(kind, math.inf)  # a credential is rate-limited by its address

    def _track(self, key: tuple[str, str]) -> _Track:
        track = self._tracks.pop(key, None) or _Track()
        self._tracks[key] = track  # most recently used last
        while len(self._tracks) > MAX_KEYS:
            self._tracks.popitem(last=False)
        return track

    def wait_seconds(self, client: str, token: str) -> int:
        """Seconds until this attempt may be tried (0: now), counting it if allowed."""
        now = self.clock()
        with self._lock:
            keys = login_keys(client, token)
            waits = [self._wait(self._track(k), k[0], now) for k in keys]
            wait = max(waits)
            if wait == 0:
                for k in keys:
                    self._track(k).attempts.append(now)
        return math.ceil(wait)

    def _wait(self, track: _Track, kind: str, now: float) -> float:
        window = self.settings.login_window_s
        while track.attempts and track.attempts[0] <= now - window:
            track.attempts.popleft()
        waits = [max(0.0, track.locked_until - now)]
        if len(track.attempts) >= self._limit(kind):
            waits.append(track.attempts[0] + window - now)
        return max(waits)

    def locked_seconds(self, client: str, token: str) -> int:
        """Seconds left of a lockout of this client or prefix (0: none); counts nothing.

        Bearer tokens are checked against lockouts only: a script's many valid calls
        must not use up the login rate limit, but guessing through the API locks out too.
        """
        now = self.clock()
        with self._lock:
            waits = [self._track(k).locked_until - now for k in login_keys(client, token)]
        return math.ceil(max(0.0, *waits))

    def record(self, client: str, token: str, ok: bool) -> None:
        """Note an attempt's outcome: a success clears failures, enough failures lock out.

        A credential key counts wrong attempts in a row; an address or prefix key counts
        the distinct wrong credentials seen (a repeated wrong token counts once there).
        """
        now = self.clock()
        with self._lock:
            keys = login_keys(client, token)
            digest = keys[-1][1].rsplit(" ", 1)[1]
            for key in keys:
                track = self._track(key)
                if ok:
                    track.failures, track.failed = 0, set()
                    continue
                if key[0] == "credential":
                    track.failures += 1
                else:
                    track.failed.add(digest)
                    track.failures = len(track.failed)
                if track.failures >= self.settings.lockout_failures:
                    track.locked_until = now + self.settings.lockout_s
                    track.failures, track.failed = 0, set()
