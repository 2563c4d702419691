"""The launch against the engine release: what the release refuses at startup, ignores, or stopped guarding
(interpret/releases.toml, each entry read in the release's own wheel). vLLM 0.34 removed Model Runner V1 (so
VLLM_USE_V2_MODEL_RUNNER=0 fails and "toggle the runner" is no advice there), P-EAGLE, PARD parallel drafting,
cross-vocabulary drafts, `custom_class` and `disable_padded_drafter_batch`; its SpeculativeConfig forbids unknown
keys, so a launch line that still carries one fails at startup. It also dropped the check that refused a quantized
checkpoint without its MTP weights.

A launch is a claim: when the log shows speculative decoding running, a launch the named release would have refused
is not what ran there (the release or the launch given is not the deployment's), and the finding says so instead
of blaming the launch.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

from dflash_doctor.check import Check
from dflash_doctor.evidence import EvidenceSet, Observation, Status
from dflash_doctor.evidence.acceptance import AcceptanceSummary, StartupFacts
from dflash_doctor.evidence.model_facts import DrafterFacts, TargetFacts
from dflash_doctor.evidence.payloads import EngineId, Environment, LaunchConfig
from dflash_doctor.models.launch_view import launch_method
from dflash_doctor.versions import VersionError, parse_range, parse_version


@cache
def entries() -> tuple[dict[str, Any], ...]:
    """interpret/releases.toml, validated by schema.ReleasesFile (a bad entry fails loudly with its place)."""
    from dflash_doctor.knowledge.causes import KnowledgeError
    from dflash_doctor.schema import ReleasesFile, convert, parse_toml

    raw = resources.files("dflash_doctor.interpret").joinpath("releases.toml").read_bytes()
    data = parse_toml(raw, "releases.toml", KnowledgeError)
    convert(data, ReleasesFile, "releases.toml", KnowledgeError)
    out = []
    for i, e in enumerate(data["entry"]):
        try:
            out.append(dict(e, range=parse_range(e["versions"])))
        except VersionError as exc:
            raise KnowledgeError(f"releases.toml: entry[{i}].versions: {exc}") from None
    return tuple(out)


def _spec(evidence: EvidenceSet) -> tuple[dict, str | None]:
    launch = evidence.get(LaunchConfig)
    if launch is not None and isinstance(launch.speculative, dict):
        return launch.speculative, evidence.ref(LaunchConfig)
    return {}, None


def _hit(e: dict, evidence: EvidenceSet) -> tuple[str, str | None] | None:
    """(what in the deployment the entry applies to, evidence ref) or None."""
    method, written, mev = launch_method(evidence)
    spec, sref = _spec(evidence)
    if e.get("only_method") and method not in e["only_method"]:
        return None
    if e.get("unless_method") and method in e["unless_method"]:
        return None
    if e["where"] == "spec-key":
        key = e["key"]
        if key in spec and ("value" not in e or spec[key] == e["value"]):
            return f'"{key}": {spec[key]!r} in --speculative-config', sref
    elif e["where"] == "env":
        launch = evidence.get(LaunchConfig)
        env = dict(launch.env) if launch is not None else {}
        host = evidence.get(Environment)
        env.update({k: v for k, v in (getattr(host, "variables", None) or {}).items() if k not in env})
        val = env.get(e["key"])
        if val is not None and str(val).strip() and str(val).strip() != e.get("unless_value"):
            return f"{e['key']}={val}", evidence.ref(LaunchConfig) or evidence.ref(Environment)
    elif e["where"] == "method":
        if written and written.strip().lower() == e["value"]:
            return f"method {written!r}", mev.ref if mev else None
    elif e["where"] == "drafter":
        d = evidence.get(DrafterFacts)
        if d is not None and d.method == e["value"]:
            return f"a {e['value']} drafter ({', '.join(d.architectures) or d.method})", evidence.ref(DrafterFacts)
    elif e["where"] == "target":
        from dflash_doctor.interpret.known_issues.deployment import deployment_from_evidence

        dep = deployment_from_evidence(evidence)
        if (not e.get("methods") or dep.method in e["methods"]) and all(dep.facts.get(f) is True for f in e["facts"]):
            return f"{dep.method} drafter, " + ", ".join(e["facts"]), dep.sources.get(e["facts"][0])
    return None


class LaunchRelease(Check):
    id = "launch-release"
    area = "launch"
    title = "The launch against the engine release (what it refuses, ignores or no longer guards)"
    needs = (EngineId,)
    wants = (LaunchConfig, StartupFacts, DrafterFacts, TargetFacts, Environment, AcceptanceSummary)
    observations = ("launch:refused-by-release", "engine-launch:refused", "release:guard-dropped")

    def run(self, evidence: EvidenceSet):
        eng = evidence.require(EngineId)
        try:
            version = parse_version(eng.version) if eng.version else None
        except VersionError:
            version = None
        out: list = []
        refused: list[tuple[str, str, tuple]] = []
        for e in entries():
            if e["engine"] != eng.name:
                continue
            hit = _hit(e, evidence)
            if hit is None:
                continue
            if version is None:
                out.append(
                    self.finding(
                        Status.WARN,
                        f"if you run {eng.name} {e['versions']}: {hit[0]} — {e['error']}",
                        refs=tuple(r for r in (hit[1],) if r),
                        remedy=e["fix"],
                        details=(e["source"],),
                    )
                )
            elif e["range"].contains(version):
                out.append(self._finding(e, hit, eng, evidence, refused))
        if refused:
            # one set of observations for every refusal: the cause's fix names each thing to change
            detail = " ".join(f"{msg}. {fix}" for msg, fix, _ in refused)
            refs = tuple(sorted({r for _, _, rs in refused for r in rs}))
            obs = (
                Observation("launch:refused-by-release", detail, refs),
                Observation("engine-launch:refused", "; ".join(m for m, _, _ in refused), refs),
            )
            i = next(i for i, f in enumerate(out) if f.status == Status.FAIL)
            f = out[i]
            out[i] = type(f)(f.check_id, f.status, f.message, f.refs, f.remedy, f.details, obs)
        if not out:
            what = f"{eng.name} {eng.version}" if eng.version else eng.name
            return [self.finding(Status.OK, f"nothing in the launch that {what} refuses, ignores or stopped guarding")]
        return out

    def _finding(self, e: dict, hit: tuple[str, str | None], eng, evidence: EvidenceSet, refused: list):
        what, ref = hit
        refs = tuple(r for r in (ref, evidence.ref(EngineId)) if r)
        verb = {"refused": "refuses", "ignored": "ignores", "silent": "no longer guards against"}[e["kind"]]
        msg = f"{eng.name} {eng.version} {verb} {what}: {e['error'].rstrip('.')}"
        if e["kind"] == "ignored":
            return self.finding(Status.WARN, msg, refs=refs, remedy=e["fix"], details=(e["source"],))
        if e["kind"] == "silent":
            obs = (Observation("release:guard-dropped", f"{msg} ({e['source']})", refs),)
            return self.finding(Status.WARN, msg, refs=refs, remedy=e["fix"], details=(e["source"],), observations=obs)
        acc = evidence.get(AcceptanceSummary)
        if acc is not None and acc.drafts and acc.drafts > 1.0:
            # the log shows speculative decoding running: this launch on this release is not what ran
            return self.finding(
                Status.WARN,
                f"{msg} — yet the log shows speculative decoding running: the release named or the launch given is "
                "not what ran",
                refs=refs,
                details=(e["source"],),
            )
        refused.append((msg, e["fix"], refs))
        return self.finding(Status.FAIL, msg, refs=refs, remedy=e["fix"], details=(e["source"],))
