"""Long commands report progress: stderr chunks reach the caller while the command still runs."""

import sys
import time

from dflash_doctor.hosts.local import LocalHost

SLOW = (
    "import sys, time\nfor i in range(3):\n    print(f'step {i}', file=sys.stderr, flush=True)\n    time.sleep(0.4)\n"
)


def test_local_stderr_chunks_arrive_before_the_command_ends():
    seen: list[tuple[float, bytes]] = []
    t0 = time.monotonic()
    res = LocalHost().run(
        [sys.executable, "-c", SLOW], timeout=30, on_stderr=lambda c: seen.append((time.monotonic(), c))
    )
    ended = time.monotonic()
    assert res.ok and b"step 2" in res.stderr  # still kept in the result
    assert seen and seen[0][0] - t0 < (ended - t0) - 0.5, "first progress arrived only at the end"
    assert b"".join(c for _, c in seen) == res.stderr
