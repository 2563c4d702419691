"""Options shared by the commands that read Prometheus (`fleet`, `diagnose --prometheus`): the
connection and its authentication, turned into a PromAuth (secrets are read only when used)."""

from __future__ import annotations

import os
from datetime import UTC, datetime

import typer

from ..errors import UsageError
from ..prometheus.client import PromAuth, check_secret
from ..prometheus.gather import PromSource
from ..prometheus.queries import parse_duration
from .common import number

SelectorOpt = typer.Option(
    None, "--selector", metavar="SELECTOR", help="Label matchers for the engines' series, e.g. '{job=\"vllm\"}'."
)
SinceOpt = typer.Option(
    "6h", "--since", metavar="DURATION", help="Window to read, back from now (or from --until): 30m, 6h, 2d."
)
StepOpt = typer.Option(
    None,
    "--step",
    metavar="DURATION",
    help="Resolution of τ over time (range-query step); default: from the window, about 72 points "
    "(5m over 6h), at least 15s (a usual scrape interval).",
)

# The step chosen from the window when --step is not given, as Grafana does: about this many points, rounded up to
# a round duration, never finer than a usual scrape interval nor longer than the window.
POINTS = 72
_ROUND_STEPS = (15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


def choose_step(step: str | None, window: float) -> float:
    """--step as seconds; without it, window / POINTS rounded up to a round step (15s … 1d), at most the window.
    A --step longer than the window is a usage error."""
    if step is None:
        want = window / POINTS
        return min(window, next((r for r in _ROUND_STEPS if r >= want), _ROUND_STEPS[-1]))
    res = parse_duration(step, "--step")
    if res > window:
        raise UsageError("--step is longer than --since", hint="e.g. --since 6h --step 5m, or leave --step out")
    return res


UntilOpt = typer.Option(
    None, "--until", metavar="TIME", help="End of the window: unix seconds or ISO 8601 (default: now)."
)
TimeoutOpt = typer.Option(
    30.0,
    "--timeout",
    metavar="SECONDS",
    help="Seconds each Prometheus answer may take, whole (not per read).",
    parser=number("--timeout", 0, 86400, above=True),
)
BearerFileOpt = typer.Option(
    None, "--bearer-token-file", metavar="FILE", help="File holding a bearer token for Prometheus."
)
BearerEnvOpt = typer.Option(
    None, "--bearer-token-env", metavar="VAR", help="Environment variable holding a bearer token."
)
BasicUserOpt = typer.Option(None, "--basic-auth-user", metavar="USER", help="Basic-auth user name.")
BasicFileOpt = typer.Option(
    None,
    "--basic-auth-file",
    metavar="FILE",
    help="File holding the basic-auth password (like Prometheus' password_file).",
)
BasicEnvOpt = typer.Option(
    None, "--basic-auth-env", metavar="VAR", help="Environment variable holding the basic-auth password."
)
CaFileOpt = typer.Option(
    None, "--ca-file", metavar="PEM", help="PEM bundle of the CA that signed Prometheus' TLS certificate."
)
InsecureOpt = typer.Option(False, "--insecure-skip-verify", help="Do not verify Prometheus' TLS certificate.")


def make_auth(
    bearer_token_file, bearer_token_env, basic_user, basic_password_file, basic_password_env, ca_file, insecure
):

    if bearer_token_file and bearer_token_env:
        raise UsageError("give one of --bearer-token-file and --bearer-token-env")
    if (bearer_token_file or bearer_token_env) and basic_user:
        raise UsageError("give either a bearer token or basic auth, not both")
    if (basic_password_file or basic_password_env) and not basic_user:
        raise UsageError("a basic-auth password needs --basic-auth-user")
    token = password = None
    if bearer_token_env:
        token = os.environ.get(bearer_token_env, "").strip()
        if not token:
            raise UsageError(
                f"environment variable {bearer_token_env} is empty or not set",
                hint="export it, or give --bearer-token-file FILE",
            )
        token = check_secret(token, f"environment variable {bearer_token_env}")
    if basic_password_env and not basic_password_file:
        password = os.environ.get(basic_password_env)
        if password is None:
            raise UsageError(
                f"environment variable {basic_password_env} is not set",
                hint="export it, or give --basic-auth-file FILE",
            )
        password = check_secret(password, f"environment variable {basic_password_env}")
    return PromAuth(
        bearer_token_file=bearer_token_file,
        bearer_token=token,
        basic_user=basic_user,
        basic_password_file=basic_password_file,
        basic_password=password,
        ca_file=ca_file,
        insecure=insecure,
    )


MAX_UNIX_TIME = 32503680000.0  # 3000-01-01


def parse_until(text: str | None) -> float | None:
    if not text:
        return None

    hint = "unix seconds or ISO 8601, e.g. 2026-05-14T09:15:00Z"
    try:
        seconds = float(text)
    except ValueError:
        try:
            t = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
        except ValueError:
            raise UsageError(f"--until {text[:60]!r} is not a time", hint=hint) from None
        if t.tzinfo is None:
            t = t.replace(tzinfo=UTC)
        seconds = t.timestamp()
    # nan, inf, 1e300 or before 1970: no window Prometheus could answer for (a range query with them failed
    # deep inside, as an internal error)
    if not 0 < seconds <= MAX_UNIX_TIME:
        raise UsageError(f"--until {text[:60]!r}: not a time between 1970 and the year 3000", hint=hint)
    return seconds


def prom_source(url, selector, since, step, until, timeout, *auth_args):
    """The Prometheus source of `diagnose --prometheus` from its flags."""

    if timeout <= 0:
        raise UsageError("--timeout must be positive")
    window = parse_duration(since, "--since")
    res = choose_step(step, window)
    return PromSource(
        url=url,
        selector=selector,
        since=window,
        step=res,
        until=parse_until(until),
        auth=make_auth(*auth_args),
        timeout=timeout,
    )
