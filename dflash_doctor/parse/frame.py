"""Aggregation of per-interval records in a pandas DataFrame, done the way the engines count:
sum counts (weight every interval by its drafts), never average printed means or rates.

pandas is imported here only, and this module only when a summary is asked for.
"""

from __future__ import annotations

from typing import Any, Iterable

from .records import MIN_DRAFTS, AcceptanceSummary, SpecInterval

FIELDS = ("fmt", "source", "line_no", "timestamp", "engine", "drafts", "drafted", "accepted", "k", "per_position",
          "printed_mean", "accepted_throughput", "drafted_throughput", "emitted", "offset", "estimated")
SERIES_POINTS = 200


def _rows(data: Any) -> list[tuple]:
    rows = getattr(data, "rows", None)
    if rows is not None:
        return rows
    out = []
    for iv in data:
        if isinstance(iv, SpecInterval):
            out.append(tuple(getattr(iv, f) for f in FIELDS))
        else:
            out.append(tuple(iv))
    return out


def to_frame(data: Any):
    """One row per interval; `prefix_accepted` is the τ numerator (V0: emitted - drafts)."""
    import numpy as np
    import pandas as pd

    df = pd.DataFrame.from_records(_rows(data), columns=list(FIELDS))
    for col in ("drafts", "drafted", "accepted", "printed_mean", "emitted", "accepted_throughput",
                "drafted_throughput"):
        df[col] = pd.to_numeric(df[col], errors="coerce").astype(float)
    pref = df["accepted"].copy()
    has_emit = df["emitted"].notna()
    pref[has_emit] = df.loc[has_emit, "emitted"] - df.loc[has_emit, "drafts"]
    no_acc = pref.isna() & df["printed_mean"].notna()
    pref[no_acc] = (df.loc[no_acc, "printed_mean"] - 1.0) * df.loc[no_acc, "drafts"]
    df["prefix_accepted"] = pref
    with np.errstate(divide="ignore", invalid="ignore"):
        df["tau"] = 1.0 + df["prefix_accepted"] / df["drafts"]
    return df


def export_frame(data: Any):
    """The per-interval table users export (--csv/--parquet): per-position rates as columns."""
    df = to_frame(data)
    kmax = int(df["per_position"].map(len).max()) if len(df) else 0
    for i in range(kmax):
        df[f"pos_{i + 1}"] = df["per_position"].map(lambda pp, i=i: pp[i] if len(pp) > i else None)
    return df.drop(columns=["per_position"])


def _tau(df) -> float | None:
    d = df["drafts"].sum()
    return 1.0 + df["prefix_accepted"].sum() / d if d > 0 else None


def summarize(data: Any, min_drafts: int = MIN_DRAFTS) -> AcceptanceSummary | None:
    import numpy as np

    rows = _rows(data)
    if not rows:
        return None
    df = to_frame(rows)
    notes: list[str] = []
    unweighted = df["drafts"].isna()
    if unweighted.any():
        notes.append(f"{int(unweighted.sum())} interval(s) print no drafts count and no k was recovered "
                     "(vLLM 0.8.3–0.8.4): they count toward the draft acceptance rate only")
    rate_rows = df[df["drafted"].notna() & df["accepted"].notna() & ~df["fmt"].eq("sglang")]
    use = df[(df["drafts"] > 0) & df["prefix_accepted"].notna()].copy()
    if use.empty:
        if rate_rows.empty or rate_rows["drafted"].sum() <= 0:
            return None
        # only 0.8.3-style lines without k: the rate is all there is
        drafted, accepted = rate_rows["drafted"].sum(), rate_rows["accepted"].sum()
        return AcceptanceSummary(
            mean_acceptance_length=float("nan"), per_position=(), drafts=0.0, drafted=int(drafted),
            accepted=int(accepted), k=None, draft_acceptance_rate=accepted / drafted, intervals=len(df),
            formats=tuple(sorted(df["fmt"].unique())), min_drafts=min_drafts,
            notes=tuple(notes + ["τ cannot be computed without drafts: give the k (num_speculative_tokens)"]))
    drafts = float(use["drafts"].sum())
    tau = 1.0 + float(use["prefix_accepted"].sum()) / drafts

    # per-position: rates × drafts are counts; sum counts per position over the intervals having it
    kk = use["per_position"].map(len)
    ks = sorted({int(x) for x in use["k"].dropna().unique()})
    k = int(use["k"].dropna().mode().iloc[0]) if use["k"].notna().any() else None
    per_pos: list[float] = []
    kmax = int(kk.max()) if len(kk) else 0
    if kmax:
        num = np.zeros(kmax)
        den = np.zeros(kmax)
        for n, grp in use[kk > 0].groupby(kk[kk > 0]):
            mat = np.array(grp["per_position"].tolist(), dtype=float)
            w = grp["drafts"].to_numpy()
            num[:n] += (mat * w[:, None]).sum(axis=0)
            den[:n] += w.sum()
        per_pos = [float(a / b) if b > 0 else 0.0 for a, b in zip(num, den)]
    if len(ks) > 1:
        notes.append(f"k changed between intervals ({', '.join(map(str, ks))}); each position's rate is summed "
                     "over the intervals that have it")
    if use["estimated"].astype(bool).any():
        n_est = int(use["estimated"].astype(bool).sum())
        notes.append(f"{n_est} interval(s) have an estimated drafts count (not printed by the engine)")

    # τ over time: file order; first vs last third of the intervals, and a thinned series
    use = use.reset_index(drop=True)
    first = last = None
    n = len(use)
    if n >= 3:
        t = n // 3
        first, last = _tau(use.iloc[:t]), _tau(use.iloc[n - t:])
    bins = np.arange(n) * min(n, SERIES_POINTS) // max(n, 1)
    series = []
    for _, grp in use.groupby(bins):
        series.append({"timestamp": grp["timestamp"].iloc[-1], "source": grp["source"].iloc[-1],
                       "tau": round(float(_tau(grp)), 4), "drafts": round(float(grp["drafts"].sum()), 1),
                       "intervals": int(len(grp))})

    engines = use["engine"].fillna("(untagged)")
    per_engine = []
    for name, grp in use.groupby(engines, sort=True):
        per_engine.append({"engine": name, "intervals": int(len(grp)), "drafts": round(float(grp["drafts"].sum()), 1),
                           "tau": round(float(_tau(grp)), 4),
                           "formats": sorted(grp["fmt"].unique().tolist())})
    if len(per_engine) > 1:
        notes.append(f"lines from {len(per_engine)} engines/processes are interleaved "
                     f"({', '.join(e['engine'] for e in per_engine)}): kept apart in per_engine and summed here")
    families = {f.split("-")[0] for f in use["fmt"].unique()}
    if len(families) > 1:
        notes.append(f"the log mixes engines ({', '.join(sorted(families))}); the totals sum them, weighted by drafts")
    if drafts < min_drafts:
        notes.append(f"only {drafts:.0f} drafts (< {min_drafts}): per-position zeros and small differences are noise")

    drafted = accepted = 0
    rate = None
    if not rate_rows.empty and rate_rows["drafted"].sum() > 0:
        drafted, accepted = int(rate_rows["drafted"].sum()), int(rate_rows["accepted"].sum())
        rate = accepted / drafted
    thr = None
    if use["accepted_throughput"].notna().any():
        thr = {"accepted_tokens_per_s": round(float(use["accepted_throughput"].mean()), 2),
               "drafted_tokens_per_s": round(float(use["drafted_throughput"].mean()), 2)}
    return AcceptanceSummary(
        mean_acceptance_length=tau, per_position=tuple(per_pos), drafts=drafts, drafted=drafted, accepted=accepted,
        k=k, draft_acceptance_rate=rate, intervals=n, formats=tuple(sorted(use["fmt"].unique())),
        engines=tuple(sorted(use["engine"].dropna().unique())), tau_first_third=first, tau_last_third=last,
        min_drafts=min_drafts, notes=tuple(notes), per_engine=tuple(per_engine), series=tuple(series),
        throughput=thr,
    )


def combined(*frames: Iterable) -> list:
    out: list = []
    for f in frames:
        out.extend(_rows(f))
    return out
