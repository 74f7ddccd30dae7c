#!/usr/bin/env python3
"""Markdown table of sessiondb's `bench --json` figures next to bench-pi's for pi's two stores.

    python3 benches/side_by_side.py --pi RESULTS_DIR c1k=ours.c1k.json c10k=ours.c10k.json huge=ours.huge.json

RESULTS_DIR holds bench-pi's `pi-jsonl.<corpus>.json` and `pi-sqlite.<corpus>.json` (and, when the
SQLite import ran as its own phase, `pi-sqlite-import.<corpus>.json`). Ratios above 1 favour
sessiondb.
"""

import argparse
import json
import os


def load(path):
    with open(path) as f:
        return json.load(f)


def get(d, dotted):
    for part in dotted.split("."):
        if not isinstance(d, dict) or part not in d:
            return None
        d = d[part]
    return d


def num(x, digits=3):
    if x is None:
        return "—"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 10:
        return f"{x:.1f}"
    return f"{x:.{digits}g}"


def ratio(a, b):
    """a ÷ b."""
    if a is None or b is None or b == 0:
        return "—"
    r = a / b
    return f"{r:,.0f}×" if r >= 100 else f"{r:.1f}×" if r >= 10 else f"{r:.2f}×"


def other_share(d):
    shares = []

    def walk(o):
        if isinstance(o, dict):
            for k, v in o.items():
                if k == "other_cpu_share" and isinstance(v, (int, float)):
                    shares.append(v)
                else:
                    walk(v)

    walk(d.get("figures", {}))
    return max(shares) if shares else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pi", required=True)
    ap.add_argument("ours", nargs="+", help="corpus=sessiondb-bench.json")
    a = ap.parse_args()
    cols = []
    for spec in a.ours:
        name, path = spec.split("=", 1)
        pj = load(os.path.join(a.pi, f"pi-jsonl.{name}.json"))
        ps = load(os.path.join(a.pi, f"pi-sqlite.{name}.json"))
        imp_path = os.path.join(a.pi, f"pi-sqlite-import.{name}.json")
        imp = load(imp_path) if os.path.exists(imp_path) else ps.get("import", {})
        cols.append((name, load(path), pj["figures"], ps["figures"], imp, pj, ps))

    rows = []

    def row(label, f):
        rows.append(f"| {label} | " + " | ".join(f(*c) for c in cols) + " |")

    row("corpus: sessions / entries / MiB", lambda n, o, j, s, i, pj, ps: f"{o['sessions']:,} / {o['entries']:,} / {num(o['corpus_mib'])}")
    row("**import** MiB/s: sessiondb / pi JSONL parse-only load (f) / ratio",
        lambda n, o, j, s, i, pj, ps: f"{num(o['import_mib_per_s'])} / {num(get(j, 'f_load_entries_all.mib_per_s'))} / {ratio(o['import_mib_per_s'], get(j, 'f_load_entries_all.mib_per_s'))}")
    row("import entries/s: sessiondb / pi SQLite (entry mode) / ratio",
        lambda n, o, j, s, i, pj, ps: f"{num(o['import_entries_per_s'])} / {num(i.get('jsonl_entries_per_s_written'))} / {ratio(o['import_entries_per_s'], i.get('jsonl_entries_per_s_written'))}")
    row("import peak RSS MiB; database MiB", lambda n, o, j, s, i, pj, ps: f"{num(o['import_peak_rss_mib'])}; {num(o.get('db_mib'))}")
    row("**(a)** open + projection of the largest (ms): sessiondb / pi JSONL / pi SQLite context read",
        lambda n, o, j, s, i, pj, ps: f"{num(o['a_open_projection_largest_ms'])} / {num(get(j, 'a_open_and_projection_largest.median_ms'))} / {num(get(s, 'a_open_read_context_largest.median_ms'))}")
    row("(a) ratios: pi JSONL ÷ sessiondb; pi SQLite ÷ sessiondb",
        lambda n, o, j, s, i, pj, ps: f"{ratio(get(j, 'a_open_and_projection_largest.median_ms'), o['a_open_projection_largest_ms'])}; {ratio(get(s, 'a_open_read_context_largest.median_ms'), o['a_open_projection_largest_ms'])}")
    row("(a) entry rows read / path length; cold database open (ms)",
        lambda n, o, j, s, i, pj, ps: f"{o.get('a_projection_rows_read')} / {o.get('a_projection_path_length')}; {num(o.get('a_open_only_ms'))}")
    row("**(b)** find by id (µs): sessiondb / pi JSONL findById / pi SQLite open-by-id",
        lambda n, o, j, s, i, pj, ps: f"{num(o['b_find_by_id_us'])} / {num(get(j, 'b_find_by_id.mean_ms_per_lookup') * 1e3)} / {num(get(s, 'b_find_by_id.open_by_id_mean_ms') * 1e3)}")
    row("(b) ratios: pi JSONL ÷ sessiondb; pi SQLite ÷ sessiondb",
        lambda n, o, j, s, i, pj, ps: f"{ratio(get(j, 'b_find_by_id.mean_ms_per_lookup') * 1e3, o['b_find_by_id_us'])}; {ratio(get(s, 'b_find_by_id.open_by_id_mean_ms') * 1e3, o['b_find_by_id_us'])}")
    row("**(c)** continue recent, busiest folder (ms): sessiondb / pi JSONL / pi SQLite equivalent",
        lambda n, o, j, s, i, pj, ps: f"{num(o['c_continue_recent_ms'])} / {num(get(j, 'c_continue_recent.median_ms'))} / {num(get(s, 'c_continue_recent.equivalent.median_ms'))}")
    row("(c) ratios",
        lambda n, o, j, s, i, pj, ps: f"{ratio(get(j, 'c_continue_recent.median_ms'), o['c_continue_recent_ms'])}; {ratio(get(s, 'c_continue_recent.equivalent.median_ms'), o['c_continue_recent_ms'])}")
    row("**(d)** list busiest folder, full SessionInfo (ms): sessiondb / pi JSONL / pi SQLite with details",
        lambda n, o, j, s, i, pj, ps: f"{num(o['d_list_cwd_ms'])} / {num(get(j, 'd_list_cwd.median_ms'))} / {num(get(s, 'd_list_cwd_with_details.median_ms'))}")
    row("(d) ratios",
        lambda n, o, j, s, i, pj, ps: f"{ratio(get(j, 'd_list_cwd.median_ms'), o['d_list_cwd_ms'])}; {ratio(get(s, 'd_list_cwd_with_details.median_ms'), o['d_list_cwd_ms'])}")
    row("**(d)** list everything (ms): sessiondb / pi JSONL listAll / pi SQLite list() of every repo",
        lambda n, o, j, s, i, pj, ps: f"{num(o['d_list_all_ms'])} / {num(get(j, 'd_list_all.median_ms'))} / {num(get(s, 'd_list_all.median_ms'))}")
    row("(d) ratios",
        lambda n, o, j, s, i, pj, ps: f"{ratio(get(j, 'd_list_all.median_ms'), o['d_list_all_ms'])}; {ratio(get(s, 'd_list_all.median_ms'), o['d_list_all_ms'])}")
    row("**(e)** append 1 KiB, durable (µs): sessiondb p50 / p99; pi JSONL; pi SQLite",
        lambda n, o, j, s, i, pj, ps: f"{num(o['e_append_us_p50'])} / {num(o['e_append_us_p99'])}; {num(get(j, 'e_append.us_per_append'))}; {num(get(s, 'e_append.us_per_append'))}")
    row("(e) ratios: pi SQLite ÷ sessiondb p50; sessiondb p50 ÷ pi JSONL",
        lambda n, o, j, s, i, pj, ps: f"{ratio(get(s, 'e_append.us_per_append'), o['e_append_us_p50'])}; {ratio(o['e_append_us_p50'], get(j, 'e_append.us_per_append'))}")
    row("(e) appends/s (settling included): sessiondb / pi JSONL / pi SQLite",
        lambda n, o, j, s, i, pj, ps: f"{num(o['e_appends_per_s'])} / {num(get(j, 'e_append.entries_per_s'))} / {num(get(s, 'e_append.entries_per_s'))}")
    row("**(g)** fork of the largest (ms): sessiondb / pi JSONL forkFrom / pi SQLite fork tree; pi JSONL ÷ sessiondb",
        lambda n, o, j, s, i, pj, ps: f"{num(o['g_fork_largest_ms'])} / {num(get(j, 'g_fork_from_largest.median_ms'))} / {num(get(s, 'g_fork_tree_largest.median_ms'))}; {ratio(get(j, 'g_fork_from_largest.median_ms'), o['g_fork_largest_ms'])}")
    row("**(h)** branched session at mid-path (ms): sessiondb / pi JSONL / pi SQLite fork branch; pi JSONL ÷ sessiondb",
        lambda n, o, j, s, i, pj, ps: f"{num(o['h_branched_session_mid_ms'])} / {num(get(j, 'h_create_branched_session_largest.median_ms'))} / {num(get(s, 'h_fork_branch_mid_largest.median_ms'))}; {ratio(get(j, 'h_create_branched_session_largest.median_ms'), o['h_branched_session_mid_ms'])}")
    row("export --all MiB/s; search index build s; search (ms): a rare word / a term in every session",
        lambda n, o, j, s, i, pj, ps: f"{num(o.get('export_mib_per_s'))}; {num(o.get('search_index_seconds'))}; "
        f"{num(o.get('search_ms'))} / {num(o.get('search_common_ms'))}")
    row("**peak RSS** MiB: sessiondb / pi JSONL / pi SQLite; pi JSONL ÷ sessiondb",
        lambda n, o, j, s, i, pj, ps: f"{num(o['peak_rss_mib'])} / {num(j.get('i_peak_rss_mib'))} / {num(s.get('i_peak_rss_mib'))}; {ratio(j.get('i_peak_rss_mib'), o['peak_rss_mib'])}")
    row("disk: 64 MiB written + fdatasync before sessiondb's import (MiB/s)",
        lambda n, o, j, s, i, pj, ps: num(o.get('disk_write_mib_per_s')))
    row("other processes' CPU share: sessiondb run / pi JSONL (max) / pi SQLite (max)",
        lambda n, o, j, s, i, pj, ps: f"{o['other_cpu_share'] * 100:.1f}% / {other_share(pj) * 100:.1f}% / {other_share(ps) * 100:.1f}%")
    row("measured at (UTC)", lambda n, o, j, s, i, pj, ps: f"pi JSONL {pj['date'][11:16]}, pi SQLite {ps['date'][11:16]}")

    head = "| figure | " + " | ".join(c[0] for c in cols) + " |"
    print(head)
    print("|---|" + "---:|" * len(cols))
    print("\n".join(rows))


if __name__ == "__main__":
    main()
