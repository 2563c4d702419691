"""Aggregation of per-interval records, done the way the engines count: sum counts (weight every
interval by its drafts), never average printed means or rates.

The records are columns (numpy arrays, one row per interval: time, engine, drafts, drafted,
accepted, per-position rates, throughput …). `to_frame` / `export_frame` give them as the pandas
DataFrame users export (--csv/--parquet); `summarize` sums the same columns directly, so that a
summary needs numpy only (pandas' import alone costs about a third of a second). Sums run on the
numpy columns and integer group codes, so a million intervals aggregate in well under a second.
"""

from __future__ import annotations

from typing import Any

from ..evidence.acceptance import MIN_DRAFTS, AcceptanceSummary
from .formats import BY_FMT
from .records import FIELDS, Row, SpecInterval, pp_tuple

_NUMERIC = (
    "drafts",
    "drafted",
    "accepted",
    "printed_mean",
    "accepted_throughput",
    "drafted_throughput",
    "emitted",
    "offset",
    "k",
    "line_no",
)
SERIES_POINTS = 200
BLOCK_ROWS = 16384


def obj_array(values) -> Any:
    import numpy as np

    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    return arr


class RateMatrix:
    """Per-position rates of every row, compactly: rates printed to 3 decimals (nearly all) as uint16
    thousandths in one (rows × k) matrix, any other row's rates in a small float matrix beside it.
    Indexable by a row mask or permutation like the numpy columns it travels with."""

    def __init__(self, q, npos, exact_idx, exact):
        self.q, self.npos, self.exact_idx, self.exact = q, npos, exact_idx, exact

    def __len__(self) -> int:
        return len(self.npos)

    @classmethod
    def concat(cls, parts: list[RateMatrix]) -> RateMatrix:
        import numpy as np

        kmax = max((p.q.shape[1] for p in parts), default=0)
        q = np.zeros((sum(len(p) for p in parts), kmax), dtype=np.uint16)
        idx, ex, pos = [], [], 0
        for p in parts:
            q[pos : pos + len(p), : p.q.shape[1]] = p.q
            idx.append(p.exact_idx + pos)
            e = np.full((len(p.exact_idx), kmax), np.nan)
            e[:, : p.exact.shape[1]] = p.exact
            ex.append(e)
            pos += len(p)
        return cls(
            q,
            np.concatenate([p.npos for p in parts]),
            np.concatenate(idx).astype(np.int64),
            np.concatenate(ex) if ex else np.zeros((0, kmax)),
        )

    def __getitem__(self, sel) -> RateMatrix:
        import numpy as np

        sel = np.asarray(sel)
        rows = np.flatnonzero(sel) if sel.dtype == bool else sel
        where = np.full(len(self), -1, dtype=np.int64)
        where[rows] = np.arange(len(rows))
        keep = where[self.exact_idx] >= 0
        return RateMatrix(self.q[rows], self.npos[rows], where[self.exact_idx][keep], self.exact[keep])

    def tolist(self) -> list[tuple[float, ...]]:
        out = [tuple(float(x) / 1000.0 for x in row[:n]) for row, n in zip(self.q, self.npos, strict=False)]
        for i, row in zip(self.exact_idx, self.exact, strict=False):
            out[i] = tuple(float(x) for x in row[: self.npos[i]])
        return out

    def groups(self):
        """(row indices, k, float rates matrix) per number of positions, in blocks of BLOCK_ROWS rows."""
        import numpy as np

        exact_at = {int(i): j for j, i in enumerate(self.exact_idx)}
        for n in sorted(set(distinct_ints(self.npos)) - {0}):
            idx = np.flatnonzero(self.npos == n)
            for lo in range(0, len(idx), BLOCK_ROWS):
                part = idx[lo : lo + BLOCK_ROWS]
                # (rows one after another, as nearly always: a slice, not a gather)
                rows = slice(int(part[0]), int(part[-1]) + 1) if part[-1] - part[0] + 1 == len(part) else part
                mat = self.q[rows, :n] / 1000.0
                if exact_at:
                    for r, i in enumerate(part):
                        j = exact_at.get(int(i))
                        if j is not None:
                            mat[r] = self.exact[j, :n]
                yield part, n, mat


def distinct_ints(a) -> list[int]:
    """The distinct values of an array of small non-negative integers, ascending. (np.unique would do, but in
    numpy 2 it imports numpy.ma on every call that asks for values only: ~10 ms of every `logs` run.)"""
    import numpy as np

    a = np.asarray(a)
    if a.size == 0:
        return []
    if a.min() < 0:
        return sorted(set(a.tolist()))
    return np.flatnonzero(np.bincount(a.astype(np.int64, copy=False))).tolist()


def rates_from_items(items, npos) -> RateMatrix:
    """Rows' rates given as tuples or printed bytes."""
    import numpy as np

    kmax = int(npos.max()) if len(npos) else 0
    q = np.zeros((len(items), kmax), dtype=np.uint16)
    exact_idx, exact = [], []
    for i, x in enumerate(items):
        r = pp_tuple(x)
        if not r:
            continue
        t = [round(v * 1000) for v in r]
        if all(0 <= a <= 1000 and a == v * 1000 for a, v in zip(t, r, strict=False)):
            q[i, : len(t)] = t
        else:
            exact_idx.append(i)
            exact.append(list(r) + [np.nan] * (kmax - len(r)))
    return RateMatrix(
        q, npos, np.array(exact_idx, dtype=np.int64), np.array(exact, dtype=float).reshape(len(exact), kmax)
    )


def ts_text(v):
    """A timestamp cell as str (fixed-width columns hold bytes)."""
    if isinstance(v, (bytes, bytearray)):
        return v.decode("ascii", "replace")
    return v


def _columns(data: Any, skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Numpy columns (plus `npos`, the number of per-position rates; `per_position` is a RateMatrix) from
    a LogScan, SpecIntervals or field tuples, in file order; the `skip` ones are not built."""
    import numpy as np

    fast = getattr(data, "fast", None)
    rows = getattr(data, "rows", None)
    if rows is None:
        rows = [
            tuple(getattr(iv, f) for f in FIELDS) if isinstance(iv, SpecInterval) else tuple(Row(*iv)) for iv in data
        ]
    parts: list[dict[str, Any]] = []
    if rows:
        cols = list(zip(*rows, strict=False))
        d: dict[str, Any] = {}
        for name, col in zip(FIELDS, cols, strict=False):
            if name in skip:
                continue
            if name in _NUMERIC:
                d[name] = np.array(col, dtype=float)
            elif name in ("estimated", "per_request"):
                d[name] = np.array(col, dtype=bool)
            elif name != "per_position":
                d[name] = obj_array(col)
        d["npos"] = np.array([len(pp_tuple(x)) for x in cols[9]], dtype=np.int64)
        d["per_position"] = rates_from_items(cols[9], d["npos"])
        parts.append(d)
    if fast:
        parts.append(fast.arrays(skip))
    if not parts:
        return {}
    if len(parts) == 1:
        return parts[0]
    out: dict[str, Any] = {
        k: (
            RateMatrix.concat([p[k] for p in parts])
            if k == "per_position"
            else np.concatenate([p[k].astype(object) if k == "timestamp" else p[k] for p in parts])
        )
        for k in parts[0]
    }
    order_src = {s: i for i, s in enumerate(getattr(data, "sources", []) or [])}
    src_idx = np.array([order_src.get(s, 0) for s in out["source"]])
    off = np.where(np.isnan(out["offset"]), np.inf, out["offset"])
    order = np.lexsort((off, src_idx))
    return {k: v[order] for k, v in out.items()}


def _with_tau(d: dict[str, Any]) -> dict[str, Any]:
    """Add `prefix_accepted` (the τ numerator; V0: emitted - drafts) and `tau` to the columns."""
    import numpy as np

    pref = np.where(np.isnan(d["emitted"]), d["accepted"], d["emitted"] - d["drafts"])
    no_acc = np.isnan(pref) & ~np.isnan(d["printed_mean"])
    pref[no_acc] = (d["printed_mean"][no_acc] - 1.0) * d["drafts"][no_acc]
    d["prefix_accepted"] = pref
    with np.errstate(divide="ignore", invalid="ignore"):
        d["tau"] = 1.0 + pref / d["drafts"]
    return d


def to_frame(data: Any):
    """One row per interval; `prefix_accepted` is the τ numerator (V0: emitted - drafts)."""
    import pandas as pd

    d = _columns(data)
    if not d:
        return pd.DataFrame({f: [] for f in FIELDS + ("npos", "prefix_accepted", "tau")})
    d = _with_tau(d)
    d["per_position"] = obj_array(d["per_position"].tolist())
    d["timestamp"] = obj_array([ts_text(t) for t in d["timestamp"]])
    # object columns stay object: inferring an arrow string dtype costs more than the whole sum
    return pd.DataFrame(
        {k: (pd.Series(v, dtype=object, copy=False) if v.dtype == object else v) for k, v in d.items()}, copy=False
    )


def _factorize(values) -> tuple[Any, list]:
    """Integer codes (-1 for None) and the distinct values in order of first appearance."""
    import numpy as np

    vals = values.tolist() if hasattr(values, "tolist") else list(values)
    if vals and vals[0] is not None and vals.count(vals[0]) == len(vals):  # one value (a scan of one process)
        return np.zeros(len(vals), dtype=np.int64), [vals[0]]
    seen = dict.fromkeys(vals)
    has_none = None in seen
    uniq = [u for u in seen if u is not None]
    if len(uniq) == 1 and not has_none:
        return np.zeros(len(vals), dtype=np.int64), uniq
    lookup = {u: i for i, u in enumerate(uniq)}
    lookup[None] = -1
    return np.fromiter(map(lookup.__getitem__, vals), dtype=np.int64, count=len(vals)), uniq


def export_frame(data: Any):
    """The per-interval table users export (--csv/--parquet): per-position rates as columns."""
    import numpy as np
    import pandas as pd

    d = _columns(data)
    if not d:
        return pd.DataFrame({f: [] for f in FIELDS + ("prefix_accepted", "tau") if f != "per_position"})
    d = _with_tau(d)
    pp = d.pop("per_position")
    d.pop("npos")
    d["timestamp"] = obj_array([ts_text(t) for t in d["timestamp"]])
    df = pd.DataFrame(
        {k: (pd.Series(v, dtype=object, copy=False) if v.dtype == object else v) for k, v in d.items()}, copy=False
    )
    kmax = pp.q.shape[1]
    cols = np.full((len(df), kmax), np.nan)
    for idx, n, mat in pp.groups():
        cols[idx, :n] = mat
    for i in range(kmax):
        df[f"pos_{i + 1}"] = cols[:, i]
    return df


def _standing(fmt: str) -> str:
    f = BY_FMT.get(fmt)
    return f.standing if f is not None else "engine"


def _rate_from_counts(fmt: str) -> bool:
    f = BY_FMT.get(fmt)
    return f.rate_from_counts if f is not None else True


def _tau_ceiling(fmt: str) -> bool:
    f = BY_FMT.get(fmt)
    return f is not None and fmt in f.tau_ceiling


def _engine(fmt: str) -> str:
    f = BY_FMT.get(fmt)
    return (f.engine or "unrecognised") if f is not None else fmt.split("-")[0]


def _label(fmt: str) -> tuple[str, str]:
    f = BY_FMT.get(fmt)
    if f is None:
        return fmt, ""
    return f.label, f.meaning


def _with_estimates(standing: str, est, w, notes: list[str]) -> str:
    """The standing once estimated weights are known: "printed" when every figure is a printed τ whose weight
    nobody printed (one unit each: a benchmark client's one line), "estimated" when some weights are estimates."""
    if not est.any():
        return standing
    if standing == "counts" and est.all() and bool((w == 1.0).all()):
        notes.append("τ is a printed figure without its counts: its weight (the drafts behind it) is unknown")
        return "printed"
    notes.append(f"{int(est.sum())} interval(s) have an estimated drafts count (not printed by the engine)")
    return "estimated" if standing == "counts" else standing


def _why_no_drafts(format_ids: set[str]) -> str:
    """Why lines of these formats carry no drafts count, by engine."""
    why = []
    if any(f.startswith("llamacpp") for f in format_ids):
        why.append("llama.cpp's timing line counts drafted tokens, not drafts: k is the server's --draft-max")
    if any(f.startswith("vllm") for f in format_ids) or not why:
        why.append("vLLM 0.8.3–0.8.4, or a line cut before its per-position list")
    return "; ".join(why)


def _k_flag(format_ids: set[str]) -> str:
    if format_ids and all(f.startswith("llamacpp") for f in format_ids):
        return "llama-server's --draft-max, e.g. --launch 'llama-server … --draft-max N'"
    return "num_speculative_tokens"


def summarize(data: Any, min_drafts: int = MIN_DRAFTS) -> AcceptanceSummary | None:  # noqa: C901 - shared masks
    """Drafts-weighted totals. Rows read by the generic reader are used only when no known format gave
    a figure; per-request averages only when no drafts-weighted figure exists (then flagged)."""
    import numpy as np

    df = _columns(data, skip=("line_no",))
    if not df or not len(df["drafts"]):
        return None
    df = _with_tau(df)
    for c in ("emitted", "offset"):  # (not read below: a million intervals' worth of memory less)
        del df[c]
    notes: list[str] = []
    drafts_c = df["drafts"]
    pref_c = df["prefix_accepted"]
    fmt_codes, fmt_names = _factorize(df["fmt"])
    generic = np.isin(fmt_codes, [i for i, f in enumerate(fmt_names) if _standing(str(f)) == "unrecognised"])
    per_req = df["per_request"]
    unweighted = np.isnan(drafts_c)
    if unweighted.any():
        ids = {str(fmt_names[i]) for i in np.unique(fmt_codes[unweighted])}
        notes.append(
            f"{int(unweighted.sum())} interval(s) print no drafts count and no k was recovered "
            f"({_why_no_drafts(ids)}): they count toward the draft acceptance rate only"
        )
    drafted_c, accepted_c = df["drafted"], df["accepted"]
    no_counts = np.isin(fmt_codes, [i for i, f in enumerate(fmt_names) if not _rate_from_counts(str(f))])
    base = (drafts_c > 0) & ~np.isnan(pref_c)
    primary = base & ~per_req & ~generic
    if primary.any():
        use_mask, standing = primary, "counts"
    elif (base & ~per_req).any():
        use_mask, standing = base & ~per_req, "unrecognised-format"
    elif (base & per_req).any():
        use_mask, standing = base & per_req, "per-request"
    else:
        use_mask, standing = base, "counts"
    rate_mask = ~np.isnan(drafted_c) & ~np.isnan(accepted_c) & ~no_counts & ~per_req & (~generic | ~primary.any())
    alternatives = list(getattr(data, "alternatives", ()) or ())
    set_aside = base & ~use_mask
    for i in np.flatnonzero(set_aside & (per_req | generic))[:20]:
        label = _label(str(df["fmt"][i]))[0]
        alt = {
            "figure": f"{'per-request average' if per_req[i] else 'unrecognised-format figure'} from {label}",
            "value": round(float(df["tau"][i]), 4),
            "meaning": "not drafts-weighted: kept aside, not used"
            if per_req[i]
            else "lower standing than the known formats' figures: kept aside, not used",
        }
        if alt not in alternatives:
            alternatives.append(alt)
    details = _format_details(df, use_mask, getattr(data, "shadowed", ()) or (), (fmt_codes, fmt_names))
    if not use_mask.any():
        if not rate_mask.any() or drafted_c[rate_mask].sum() <= 0:
            return None
        # only 0.8.3-style lines without k: the rate is all there is
        drafted, accepted = drafted_c[rate_mask].sum(), accepted_c[rate_mask].sum()
        return AcceptanceSummary(
            mean_acceptance_length=float("nan"),
            per_position=(),
            drafts=0.0,
            drafted=int(drafted),
            accepted=int(accepted),
            k=None,
            draft_acceptance_rate=accepted / drafted,
            intervals=len(drafts_c),
            formats=tuple(sorted(fmt_names)),
            min_drafts=min_drafts,
            notes=tuple(
                notes + [f"τ cannot be computed without drafts: give the k ({_k_flag(set(map(str, fmt_names)))})"]
            ),
            k_candidates=tuple(getattr(data, "k_candidates", ()) or ()),
            format_details=details,
            alternatives=tuple(alternatives),
        )
    use = df if use_mask.all() else {k: v[use_mask] for k, v in df.items()}
    w = use["drafts"]
    pref = use["prefix_accepted"]
    drafts = float(w.sum())
    tau = 1.0 + float(pref.sum()) / drafts
    if standing == "per-request":
        notes.append(
            f"τ {tau:.2f} is a per-request average (every request weighted equally), not a drafts-weighted "
            "mean: weaker evidence, not comparable with vLLM's drafts-weighted τ"
        )
    elif standing == "unrecognised-format":
        notes.append("τ was read from an unrecognised format (the generic key-value reader): lower confidence")

    # per-position: rates × drafts are counts; sum counts per position over the intervals having it
    kcol = use["k"]
    kvals, kcounts = np.unique(kcol[~np.isnan(kcol)], return_counts=True)
    ks = [int(x) for x in kvals]
    k = int(kvals[np.argmax(kcounts)]) if len(kvals) else None
    per_pos: list[float] = []
    kmax = int(use["npos"].max()) if len(use["npos"]) else 0
    if kmax:
        num = np.zeros(kmax)
        den = np.zeros(kmax)
        for idx, n, mat in use["per_position"].groups():
            ww = w[idx]
            num[:n] += ww @ mat
            den[:n] += ww.sum()
        per_pos = [float(a / b) if b > 0 else 0.0 for a, b in zip(num, den, strict=False)]
    if len(ks) > 1:
        notes.append(
            f"k changed between intervals ({', '.join(map(str, ks))}); each position's rate is summed "
            "over the intervals that have it"
        )
    standing = _with_estimates(standing, use["estimated"].astype(bool), w, notes)
    ceil_codes = [i for i, f in enumerate(fmt_names) if _tau_ceiling(str(f))]
    ceil_rows = int(np.isin(fmt_codes[use_mask], ceil_codes).sum()) if ceil_codes else 0
    if ceil_rows:
        standing = "upper-bound"
        notes.append(
            f"τ is an upper bound: {ceil_rows} interval(s) print drafted tokens but no drafts, and their drafts were "
            "taken as drafted / k although a draft can stop before k"
        )
    k_cands = tuple(getattr(data, "k_candidates", ()) or ())
    if k_cands:
        notes.append(
            f"k is printed nowhere and several values fit the printed arithmetic: {', '.join(map(str, k_cands))}"
            f" (k = {k} used; give the launch command or the drafter config to settle it)"
        )

    # τ over time, in file order: first vs last third of the intervals, and a thinned series
    n = len(w)
    first = last = None
    if n >= 3:
        t = n // 3
        first = 1.0 + pref[:t].sum() / w[:t].sum()
        last = 1.0 + pref[n - t :].sum() / w[n - t :].sum()
    nb = min(n, SERIES_POINTS)
    # interval i falls in bin i·nb // n; with nb <= n every bin is hit and bin b starts at ceil(b·n / nb)
    starts = -((-np.arange(nb, dtype=np.int64) * n) // nb)
    ends = np.r_[starts[1:], n] - 1
    bw, bp = np.add.reduceat(w, starts), np.add.reduceat(pref, starts)
    ts_col, src_col = use["timestamp"], use["source"]
    series = [
        {
            "timestamp": ts_text(ts_col[e]),
            "source": src_col[e],
            "tau": round(float(1.0 + p / d), 4),
            "drafts": round(float(d), 1),
            "intervals": int(e - s + 1),
        }
        for s, e, d, p in zip(starts, ends, bw, bp, strict=False)
    ]

    eng_codes, eng_names = _factorize(use["engine"])
    per_engine: list[dict[str, Any]] = []
    ufmt_codes, ufmt_names = (fmt_codes, fmt_names) if use is df else _factorize(use["fmt"])
    untagged = eng_codes < 0
    labels = [str(x) for x in eng_names] + (["(untagged)"] if untagged.any() else [])
    codes = np.where(untagged, len(eng_names), eng_codes)
    ew = np.bincount(codes, weights=w, minlength=len(labels))
    ep = np.bincount(codes, weights=pref, minlength=len(labels))
    ec = np.bincount(codes, minlength=len(labels))
    for i, name in enumerate(labels):
        if ec[i] == 0:
            continue
        fm = sorted({str(ufmt_names[c]) for c in distinct_ints(ufmt_codes[codes == i])})
        per_engine.append(
            {
                "engine": name,
                "intervals": int(ec[i]),
                "drafts": round(float(ew[i]), 1),
                "tau": round(float(1.0 + ep[i] / ew[i]), 4) if ew[i] > 0 else None,
                "formats": fm,
            }
        )
    per_engine.sort(key=lambda e: e["engine"])
    if len(per_engine) > 1:
        notes.append(
            f"lines from {len(per_engine)} engines/processes are interleaved "
            f"({', '.join(e['engine'] for e in per_engine)}): kept apart in per_engine and summed here"
        )
    families = {_engine(str(f)) for f in ufmt_names}
    if len(families) > 1:
        notes.append(f"the log mixes engines ({', '.join(sorted(families))}); the totals sum them, weighted by drafts")
    used = [d for d in details if d["used"]]
    if used:
        notes.append("acceptance read from: " + "; ".join(f"{d['label']} ({d['intervals']} interval(s))" for d in used))
    if drafts < min_drafts:
        notes.append(f"only {drafts:.0f} drafts (< {min_drafts}): per-position zeros and small differences are noise")

    drafted = accepted = 0
    rate = None
    if rate_mask.any() and drafted_c[rate_mask].sum() > 0:
        drafted, accepted = int(drafted_c[rate_mask].sum()), int(accepted_c[rate_mask].sum())
        rate = accepted / drafted
    thr = None
    athr = use["accepted_throughput"]
    if (~np.isnan(athr)).any():
        dthr = use["drafted_throughput"]
        thr = {
            "accepted_tokens_per_s": round(float(np.nanmean(athr)), 2),
            "drafted_tokens_per_s": round(float(np.nanmean(dthr)), 2),
        }
    engines = tuple(sorted(str(x) for x in eng_names))
    return AcceptanceSummary(
        mean_acceptance_length=tau,
        per_position=tuple(per_pos),
        drafts=drafts,
        drafted=drafted,
        accepted=accepted,
        k=k,
        draft_acceptance_rate=rate,
        intervals=n,
        formats=tuple(sorted(str(f) for f in ufmt_names)),
        engines=engines,
        tau_first_third=None if first is None else float(first),
        tau_last_third=None if last is None else float(last),
        min_drafts=min_drafts,
        notes=tuple(notes),
        per_engine=tuple(per_engine),
        series=tuple(series),
        throughput=thr,
        standing=standing,
        per_request=standing == "per-request",
        k_candidates=k_cands,
        format_details=details,
        alternatives=tuple(alternatives),
    )


def _format_details(df: dict, use_mask, shadowed, factorized) -> tuple[dict, ...]:
    """One row per format variant the numbers came from (used or set aside): what it means, how many
    intervals, drafts and τ. `factorized`: the fmt column's (codes, names)."""
    import numpy as np

    out = []
    codes, names = factorized
    for i, f in enumerate(names):
        m = codes == i
        label, meaning = _label(str(f))
        if len(names) == 1 and m.all():  # (one format, as a server log: every row, no masked copies)
            w, pa, pr_col, est_col, used_col = (
                df["drafts"],
                df["prefix_accepted"],
                df["per_request"],
                df["estimated"],
                use_mask,
            )
        else:
            w, pa, pr_col, est_col, used_col = (
                df["drafts"][m],
                df["prefix_accepted"][m],
                df["per_request"][m],
                df["estimated"][m],
                use_mask[m],
            )
        ok = (w > 0) & ~np.isnan(pa)
        d = float(w[ok].sum()) if ok.any() else 0.0
        pr = bool(pr_col.any())
        out.append(
            {
                "format": str(f),
                "label": label,
                "meaning": meaning,
                "intervals": int(m.sum()),
                "drafts": round(d, 1),
                "tau": round(1.0 + float(pa[ok].sum()) / d, 4) if d > 0 else None,
                "standing": "per-request"
                if pr
                else (
                    "unrecognised-format"
                    if _standing(str(f)) == "unrecognised"
                    else "estimated"
                    if est_col.any()
                    else "counts"
                ),
                "used": bool(used_col.any()),
            }
        )
    seen: dict[str, list[Any]] = {}
    for r in shadowed:
        seen.setdefault(r.fmt, []).append(r)
    for f, rows in seen.items():
        label, meaning = _label(f)
        d = sum(r.drafts or 0 for r in rows)
        acc = sum((r.printed_mean - 1.0) * r.drafts for r in rows if r.drafts and r.printed_mean is not None)
        out.append(
            {
                "format": f,
                "label": label,
                "meaning": meaning,
                "intervals": len(rows),
                "drafts": round(d, 1),
                "tau": round(1.0 + acc / d, 4) if d else None,
                "standing": "set aside",
                "used": False,
            }
        )
    return tuple(out)
