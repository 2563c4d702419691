"""Load and validate the cause knowledge (causes.toml). Bad data fails loudly at start."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

CAUSE_IDS = (
    "undertrained-drafter", "layer-offset", "swa-ignored", "wrong-pairing", "method-mismatch", "draft-vocab-map",
    "rope-mismatch", "workload-shift", "sampling-mismatch", "engine-bug", "rotated-quantization", "launch-config",
)


class KnowledgeError(ValueError):
    pass


@dataclass(frozen=True)
class CauseSpec:
    id: str
    title: str
    prior: float
    fix: str
    next_step: str
    decided_by: tuple[str, ...]
    silence_note: str | None = None


@dataclass(frozen=True)
class Rule:
    observation: str
    cause: str
    weight: float
    text: str


@dataclass(frozen=True)
class Knowledge:
    schema: int
    causes: dict[str, CauseSpec]
    rules: tuple[Rule, ...]

    def rules_for(self, observation: str) -> list[Rule]:
        return [r for r in self.rules if r.observation == observation]


def _req(d: dict, key: str, typ, where: str):
    if key not in d:
        raise KnowledgeError(f"{where}: missing '{key}'")
    val = d[key]
    if typ is float and isinstance(val, int) and not isinstance(val, bool):
        val = float(val)
    if not isinstance(val, typ):
        raise KnowledgeError(f"{where}: '{key}' must be {typ.__name__}")
    return val


def parse_knowledge(data: dict, extra_sources: list[dict] | None = None) -> Knowledge:
    schema = data.get("schema")
    if schema != 1:
        raise KnowledgeError(f"unsupported causes schema {schema!r} (expected 1)")
    causes: dict[str, CauseSpec] = {}
    rules: list[Rule] = []
    for doc in [data, *(extra_sources or [])]:
        for i, c in enumerate(doc.get("cause", [])):
            where = f"cause #{i + 1}"
            cid = _req(c, "id", str, where)
            if cid in causes:
                raise KnowledgeError(f"{where}: duplicate cause id '{cid}'")
            decided = c.get("decided_by", [])
            if not isinstance(decided, list) or not all(isinstance(x, str) for x in decided):
                raise KnowledgeError(f"{where}: decided_by must be a list of evidence kinds")
            causes[cid] = CauseSpec(
                id=cid, title=_req(c, "title", str, where), prior=_req(c, "prior", float, where),
                fix=_req(c, "fix", str, where), next_step=_req(c, "next_step", str, where),
                decided_by=tuple(decided), silence_note=c.get("silence_note"),
            )
        for i, r in enumerate(doc.get("rule", [])):
            where = f"rule #{i + 1} ({r.get('observation')!r} -> {r.get('cause')!r})"
            rules.append(Rule(observation=_req(r, "observation", str, where), cause=_req(r, "cause", str, where),
                              weight=_req(r, "weight", float, where), text=_req(r, "text", str, where)))
    for r in rules:
        if r.cause not in causes:
            raise KnowledgeError(f"rule for observation '{r.observation}' names unknown cause '{r.cause}'")
    return Knowledge(schema=schema, causes=causes, rules=tuple(rules))


def load_toml(path: Path | str) -> dict:
    with open(path, "rb") as fh:
        return tomllib.load(fh)


@lru_cache(maxsize=None)
def default_knowledge(extra: tuple[str, ...] = ()) -> Knowledge:
    """The packaged causes, plus any extra TOML files (``--knowledge FILE`` or DFLASH_DOCTOR_KNOWLEDGE)."""
    text = resources.files("dflash_doctor.rank").joinpath("causes.toml").read_bytes()
    data = tomllib.loads(text.decode("utf-8"))
    return parse_knowledge(data, [load_toml(p) for p in extra])
