"""`python -m dflash_doctor.parse.formats`: the registry as the markdown table of docs/log-formats.md."""

from __future__ import annotations

from ..fast.routes import route
from . import FORMATS


def table() -> str:
    out = ["| id | engine | what | meaning | grep route |", "|---|---|---|---|---|"]
    for f in FORMATS:
        r = route(f)
        grep = (
            "file ends only"
            if r.edges and not r.grep
            else f"pass `{r.grep_pass}`: " + ", ".join(f"`{g}`".replace("|", "\\|") for g in r.grep)
        )
        out.append(f"| `{f.id}` | {f.engine or '—'} | {f.label.replace('|', '/')} | {f.meaning} | {grep} |")
    return "\n".join(out)


if __name__ == "__main__":
    print(table())
