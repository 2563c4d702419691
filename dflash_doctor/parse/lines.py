"""One parser per engine line format. Each takes a decoded line and returns a dict of what the line
says, or a string saying why a line that looked like metrics did not parse.

The formats, by engine version, are listed in shared/reference/engine-logs.md. Every pattern is
searched inside the line, never anchored at its start: wrappers (docker-compose, journald, ANSI,
process tags, ISO timestamps, JSON records) sit in front of the engine's own text.
"""

from __future__ import annotations

import json
import re

_N = r"[-+]?(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?"  # signed, so negatives are caught and reported
_I = r"[-+]?\d+"

# ---- prefixes ---------------------------------------------------------------------------------

_TS = re.compile(
    r"(?P<iso>(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})[ T](?P<t1>\d{2}:\d{2}:\d{2}))"
    r"|(?<![\d-])(?P<md>(?P<mo2>\d{2})-(?P<d2>\d{2}) (?P<t2>\d{2}:\d{2}:\d{2}))"
    r"|(?P<jd>(?P<mon>Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) +(?P<d3>\d{1,2}) (?P<t3>\d{2}:\d{2}:\d{2}))"
)
_MONTHS = {m: i for i, m in enumerate("Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split(), 1)}
_PROC = re.compile(r"\((?P<name>[A-Za-z]\w*?) pid=(?P<pid>\d+)\)")
_RANK = re.compile(r"\b(DP\d+)\b")
_COMPOSE = re.compile(r"^\s*(?P<svc>[\w.-]+?)(?:-\d+)?\s+\|\s")
_JOURNAL = re.compile(r"\b(?P<unit>[\w.-]+)\[(?P<pid>\d+)\]:\s")


def norm_ts(text: str | None) -> str | None:
    """A sortable timestamp: 'YYYY-MM-DDTHH:MM:SS', or 'MM-DDTHH:MM:SS' when the log has no year."""
    if not text:
        return None
    m = _TS.search(text)
    if not m:
        return None
    if m.group("iso"):
        return f"{m['y']}-{m['mo']}-{m['d']}T{m['t1']}"
    if m.group("md"):
        return f"{m['mo2']}-{m['d2']}T{m['t2']}"
    return f"{_MONTHS[m['mon']]:02d}-{int(m['d3']):02d}T{m['t3']}"


def prefix_facts(prefix: str) -> tuple[str | None, str | None]:
    """(timestamp, engine tag) from the text in front of a message.

    The engine's own timestamp is the last one before the message (a wrapper's comes first). The tag
    keeps lines from different processes, services or DP ranks apart.
    """
    ts = None
    for m in _TS.finditer(prefix):
        ts = m
    tags = []
    m = _COMPOSE.search(prefix)
    if m:
        tags.append(m["svc"])
    m = _JOURNAL.search(prefix)
    if m:
        tags.append(f"{m['unit']}[{m['pid']}]")
    m = _PROC.search(prefix)
    if m:
        tags.append(f"pid {m['pid']}")
    m = _RANK.search(prefix)
    if m:
        tags.append(m.group(1))
    return (norm_ts(ts.group(0)) if ts else None), ("/".join(tags) or None)


def unwrap_json(line: str) -> tuple[str, str | None]:
    """vLLM 0.33 can log JSON records: return (message, timestamp text) when the line is one."""
    start = line.find("{")
    if start < 0 or '"' not in line[start:start + 3]:
        return line, None
    try:
        rec = json.loads(line[start:])
    except ValueError:
        return line, None
    if not isinstance(rec, dict):
        return line, None
    msg = next((rec[k] for k in ("message", "msg", "text") if isinstance(rec.get(k), str)), None)
    if msg is None:
        return line, None
    ts = next((str(rec[k]) for k in ("timestamp", "time", "asctime", "ts") if k in rec), None)
    tag = next((f"(X pid={rec[k]}) " for k in ("process", "pid") if isinstance(rec.get(k), int)), "")
    return tag + line[:start] + " " + msg, ts


# ---- vLLM V1: `SpecDecoding metrics:` ---------------------------------------------------------

V1_LITERAL = "SpecDecoding metrics"
_PP = r"(?P<pp>" + _N + r"(?:\s*,\s*" + _N + r")*)"
V1 = re.compile(
    r"SpecDecoding metrics:\s*"
    r"(?:Draft acceptance rate:\s*(?P<rate0>" + _N + r")\s*%\s*,\s*)?"
    r"(?:Mean acceptance length:\s*(?P<mean>" + _N + r")\s*,\s*)?"
    r"(?:Accepted throughput:\s*(?P<athr>" + _N + r")\s*tokens/s\s*,\s*"
    r"Drafted throughput:\s*(?P<dthr>" + _N + r")\s*tokens/s\s*,\s*)?"
    r"Accepted:\s*(?P<acc>" + _N + r")\s*tokens\s*,\s*Drafted:\s*(?P<dft>" + _N + r")\s*tokens"
    r"(?:\s*,\s*Per-position acceptance rate:\s*" + _PP + r")?"
    r"(?:\s*,\s*Avg Draft acceptance rate:\s*(?P<rate>" + _N + r")\s*%)?"
)
_PP_ITEM = re.compile(r"\d\.\d{3}$")


def _int(text: str) -> int | None:
    try:
        v = float(text)
        return int(v) if v == int(v) else None
    except (ValueError, OverflowError):  # "1e999" is inf, and int(inf) overflows
        return None


def parse_v1(msg: str) -> dict | str:
    m = V1.search(msg)
    if not m:
        return "looks like a vLLM `SpecDecoding metrics` line but matches no known variant (cut short?)"
    acc, dft = _int(m["acc"]), _int(m["dft"])
    if acc is None or dft is None:
        return "Accepted/Drafted are not whole numbers"
    tail = msg[m.end():].strip()
    if m["athr"] is not None:
        variant = "vllm-v1-0.10.2"
        if m["pp"] is None or m["rate"] is None:
            return "line cut short: a 0.10.2+ line ends with the per-position list and the average rate"
    elif m["rate0"] is not None and m["mean"] is not None:
        variant = "vllm-v1-0.8.5/0.9"  # the mean's meaning is settled by arithmetic in `settle_v1_mean`
    elif m["rate0"] is not None:
        variant = "vllm-v1-0.8.3"
    else:
        return "looks like a vLLM `SpecDecoding metrics` line but matches no known variant"
    pp: tuple[float, ...] = ()
    if m["pp"] is not None:
        items = [x for x in re.split(r"\s*,\s*", m["pp"].strip()) if x]
        # rates are printed %.3f; a shorter last item at the end of the line is a cut-off number
        if not tail and items and not _PP_ITEM.match(items[-1]) and all(_PP_ITEM.match(x) for x in items[:-1]):
            return "line cut mid-number in the per-position list"
        pp = tuple(float(x) for x in items)
    mean = float(m["mean"]) if m["mean"] is not None else None
    rate = m["rate"] if m["rate"] is not None else m["rate0"]
    rate = float(rate) if rate is not None else None
    if acc < 0 or dft < 0 or (mean is not None and mean < 0) or any(r < 0 for r in pp):
        return "negative numbers"
    if acc > dft:
        return f"absurd numbers: Accepted {acc} > Drafted {dft}"
    if any(r > 1.0 for r in pp) or (rate is not None and rate > 100.0):
        return "absurd numbers: a rate above 100 %"
    if mean is not None and pp and mean > len(pp) + 1.0 + 0.01:
        return f"absurd numbers: mean length {mean} > k+1 = {len(pp) + 1}"
    return {"fmt": variant, "accepted": acc, "drafted": dft, "mean": mean, "pp": pp, "rate": rate,
            "athr": float(m["athr"]) if m["athr"] is not None else None,
            "dthr": float(m["dthr"]) if m["dthr"] is not None else None}


def v1_drafts(d: dict, k_hint: int | None = None) -> tuple[float | None, bool]:
    """drafts is not printed: Drafted/k when every draft carries k tokens, else Accepted/Σrates."""
    pp, acc, dft = d["pp"], d["accepted"], d["drafted"]
    k = len(pp) or k_hint
    if dft == 0:
        return 0.0, False
    if k and dft % k == 0:
        return dft / k, not pp
    s = sum(pp)
    if s > 0:
        return acc / s, True
    if k:
        return dft / k, True
    return None, True


def settle_v1_mean(d: dict, drafts: float | None) -> tuple[float | None, str | None]:
    """0.8.5 printed accepted/drafts as the mean (no bonus token); 0.9+ prints 1 + accepted/drafts.

    The text is identical, so the arithmetic decides: the printed mean is compared with both.
    Returns the mean including the bonus token, and a note when it was normalised.
    """
    mean = d["mean"]
    if mean is None:
        return None, None
    if drafts:
        ratio = d["accepted"] / drafts
        # a mean below 1 cannot include the bonus token, whatever the arithmetic says
        if mean < 1.0 or abs(mean - ratio) + 1e-9 < abs(mean - (1.0 + ratio)):
            return mean + 1.0, "0.8.5"
        return mean, None
    return (mean + 1.0, "0.8.5") if mean < 1.0 else (mean, None)


# ---- vLLM V0: `Speculative metrics:` (cumulative) ---------------------------------------------

V0_LITERAL = "Speculative metrics"
V0 = re.compile(
    r"Speculative metrics:\s*Draft acceptance rate:\s*(?P<rate>" + _N + r")\s*,\s*"
    r"System efficiency:\s*(?P<eff>" + _N + r")\s*,\s*"
    r"Number of speculative tokens:\s*(?P<k>" + _I + r")\s*,\s*"
    r"Number of accepted tokens:\s*(?P<acc>" + _I + r")\s*,\s*"
    r"Number of draft tokens(?: tokens)?:\s*(?P<dft>" + _I + r")\s*,\s*"
    r"Number of emitted tokens(?: tokens)?:\s*(?P<emt>" + _I + r")(?P<end>\.?)"
)


def parse_v0(msg: str) -> dict | str:
    m = V0.search(msg)
    if not m:
        return "looks like a vLLM V0 `Speculative metrics` line but does not parse (cut short?)"
    vals = [_int(m[g]) for g in ("k", "acc", "dft", "emt")]
    if any(v is None for v in vals):
        return "token counts are not whole numbers"
    k, acc, dft, emt = vals
    if not m["end"] and msg[m.end():].strip() == "" and msg.rstrip().endswith(m["emt"]):
        # the line normally ends with '.', a missing one at end of line means it was cut
        return "line cut mid-number (no final '.')"
    if k <= 0 or acc < 0 or dft < 0 or emt < 0:
        return "negative or zero numbers"
    if acc > dft:
        return f"absurd numbers: accepted {acc} > draft tokens {dft}"
    return {"fmt": "vllm-v0", "k": k, "accepted": acc, "drafted": dft, "emitted": emt,
            "rate": float(m["rate"]), "eff": float(m["eff"])}


# ---- SGLang: `Decode batch.` / `Decode batch,` -------------------------------------------------

SGL_LITERAL = "Decode batch"
SGL = re.compile(
    r"Decode batch[.,]\s*#running-req:\s*(?P<run>" + _N + r")\s*,"
    r"(?P<body>.*?)accept len:\s*(?P<len>" + _N + r")"
    r"(?:\s*,\s*accept rate:\s*(?P<rate>" + _N + r"))?"
    r"(?P<rest>\s*,.*)?$"
)


def parse_sglang(msg: str) -> dict | str | None:
    if "accept len" not in msg:
        return None  # a decode line without speculative decoding: not a metrics line
    m = SGL.search(msg)
    if not m:
        return "looks like an SGLang `Decode batch` line with `accept len` but does not parse"
    run = _int(m["run"])
    length = float(m["len"])
    rate = float(m["rate"]) if m["rate"] is not None else None
    if run is None or run < 0 or length < 0 or (rate is not None and rate < 0):
        return "negative numbers"
    if m["rest"] is None and msg.rstrip().endswith(m["rate"] or m["len"]):
        return "line cut mid-number"
    if length < 1.0 - 1e-9:
        return f"absurd numbers: accept len {length} < 1"
    if rate is not None and rate > 1.0 + 1e-9:
        return f"absurd numbers: accept rate {rate} > 1"
    return {"fmt": "sglang", "running": run, "len": length, "rate": rate}


# ---- `vllm bench serve` summary block ----------------------------------------------------------

BENCH_LITERAL = "Acceptance rate (%)"
_BENCH_FIELDS = {
    "Acceptance rate (%)": "rate", "Acceptance length": "mean", "Drafts": "drafts",
    "Draft tokens": "drafted", "Accepted tokens": "accepted",
}
_BENCH_LINE = re.compile(r"(Acceptance rate \(%\)|Acceptance length|Drafts|Draft tokens|Accepted tokens"
                         r"|Position (?P<pos>\d+)):\s*(?P<v>" + _N + r")?\s*$")


def parse_bench_block(lines: list[str]) -> dict | str:
    """The lines from `Acceptance rate (%):` to the block's end (a `====` rule or a non-matching line)."""
    out: dict = {"pos": {}}
    for ln in lines:
        if "=====" in ln or "-----" in ln:
            break
        m = _BENCH_LINE.search(ln)
        if not m:
            if "Per-position acceptance" in ln:
                continue
            break
        if m["v"] is None:
            return f"bench block line without a value: {ln.strip()[:60]}"
        if m["pos"] is not None:
            out["pos"][int(m["pos"])] = float(m["v"]) / 100.0
        else:
            out[_BENCH_FIELDS[m.group(1)]] = float(m["v"])
    if "mean" not in out:
        return "bench block without `Acceptance length`"
    pp = tuple(out["pos"][i] for i in sorted(out["pos"]))
    drafts = out.get("drafts")
    if drafts is not None and drafts < 0 or any(r < 0 or r > 1 for r in pp):
        return "negative or absurd numbers in the bench block"
    return {"fmt": "vllm-bench-serve", "mean": out["mean"], "drafts": drafts, "drafted": out.get("drafted"),
            "accepted": out.get("accepted"), "rate": out.get("rate"), "pp": pp}


# ---- offline example (examples/offline_inference/spec_decode.py) -------------------------------

OFFLINE_LITERAL = "mean acceptance length"
_OFF_MEAN = re.compile(r"mean acceptance length:\s*(?P<v>" + _N + r")")
_OFF_POS = re.compile(r"acceptance at token\s*(?P<i>\d+)\s*:\s*(?P<v>" + _N + r")")
_OFF_COUNT = re.compile(r"\b(?P<key>num_drafts|num_draft_tokens|num_accepted_tokens):\s*(?P<v>\d+)")


def is_block_line(line: str) -> bool:
    """A line of a `vllm bench serve` block or of the offline example's summary (after its first)."""
    return bool(_BENCH_LINE.search(line) or "Per-position acceptance" in line or _OFF_POS.search(line))


def parse_offline_block(before: list[str], lines: list[str]) -> dict | str:
    """`mean acceptance length: X` plus the `acceptance at token i: r` lines after it.

    The counts printed before it (num_drafts …) are used when present. The older form (mid-2025)
    starts at `acceptance at token 0: 1.00` — the bonus slot, not a draft position — which the
    arithmetic exposes: then mean = 1 + Σ rates[1:], and slot 0 is dropped.
    """
    m = _OFF_MEAN.search(lines[0])
    if not m:
        return "offline block without a mean"
    mean = float(m["v"])
    counts = {}
    for ln in before:
        c = _OFF_COUNT.search(ln)
        if c:
            counts[c["key"]] = int(c["v"])
    pos = {}
    for ln in lines[1:]:
        p = _OFF_POS.search(ln)
        if p:
            pos[int(p["i"])] = float(p["v"])
        elif ln.strip().strip("-") == "":
            continue
        else:
            break
    pp = [pos[i] for i in sorted(pos)]
    note = None
    if len(pp) >= 2 and pp[0] >= 0.995 and abs(mean - (1 + sum(pp[1:]))) < abs(mean - (1 + sum(pp))):
        pp = pp[1:]
        note = "older offline-example output: `acceptance at token 0` is the bonus slot and was dropped"
    if mean < 1.0 or any(r < 0 or r > 1 for r in pp):
        return "negative or absurd numbers in the offline block"
    return {"fmt": "vllm-offline-example", "mean": mean, "pp": tuple(pp), "note": note,
            "drafts": counts.get("num_drafts"), "drafted": counts.get("num_draft_tokens"),
            "accepted": counts.get("num_accepted_tokens")}
