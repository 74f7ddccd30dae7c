#!/usr/bin/env python3
"""The word index after a year of per-turn syncs (issue 29), against the same database rebuilt.

    python3 benches/per_turn_syncs.py --db DB --corpus /tmp/pi-bench/c10k/sessions \
        --work /tmp/merge/sqlite --syncs 20000 [--bin target/release/sessiondb] [--out result.json]

DB is a SQLite file (not existing yet) or a postgres:// URL of an empty database. Steps:

1. `import` of the corpus (read in place, not modified).
2. N per-turn syncs, as the pi package does after each turn: one user and one assistant
   message (copied from random corpus sessions, given fresh ids, chained by parentId) appended
   to a session file of WORK/sessions, then `sync --sessions-dir WORK/sessions FILE --json`.
   A session takes 25 turns, then the next one starts (a new file: its first sync imports it).
   Each sync's wall time and CPU time (user + system, the process included) are recorded:
   on a loaded machine the CPU time is the steadier figure. `--held` sends each sync to one
   `sync --stdin` process instead, as the pi package does since it keeps one open (the time
   from writing the request to reading its answer; CPU as a mean, read from /proc);
   `--alternate` takes turns between the two, the same database in the same sitting. Each
   sync catches the index up; `--index-each` also runs `index` after each sync (a search
   after every turn), timed apart. `--no-rebuild` stops after the syncs' figures.
3. `index --json` (postings rows and batches), then each query timed (`search Q --limit 10
   --json`, median of R runs; a word found nowhere is the floor: process start, open, lookup).
4. `index --rebuild --json`, and the same figures again on the same database.
"""

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import time
import uuid

TURNS_PER_SESSION = 25


def child_cpu():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def spread(values, mean=False):
    """p50, p90, p99 and max of `values` (ms, rounded), and their mean when asked."""
    q = statistics.quantiles(values, n=100)
    out = {"p50": round(statistics.median(values), 1), "p90": round(q[89], 1), "p99": round(q[98], 1),
           "max": round(max(values), 1)}
    if mean:
        out["mean"] = round(statistics.mean(values), 1)
    return out


def proc_cpu(pid):
    """User + system CPU seconds of a running process (all its threads, those ended included)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run(bin_, db, args, check=True, cpu=None):
    t = time.perf_counter()
    c = child_cpu()
    p = subprocess.run([bin_, "--db", db, *args], capture_output=True, text=True)
    dt = time.perf_counter() - t
    if cpu is not None:
        cpu.append((child_cpu() - c) * 1000)
    if check and p.returncode not in (0, 1):
        sys.exit(f"{args}: exit {p.returncode}: {p.stderr}")
    return dt, p.stdout


def message_lines(corpus, n_files, rng):
    """User and assistant message lines of some corpus files."""
    files = []
    for root, _, names in os.walk(corpus):
        files.extend(os.path.join(root, f) for f in names if f.endswith(".jsonl"))
    files.sort()
    users, assistants = [], []
    for path in rng.sample(files, min(n_files, len(files))):
        with open(path, encoding="utf-8") as f:
            for line in f:
                if '"type":"message"' not in line:
                    continue
                e = json.loads(line)
                role = e.get("message", {}).get("role")
                if role == "user":
                    users.append(e)
                elif role == "assistant":
                    assistants.append(e)
    return users, assistants


def rare_word(users, assistants, bin_, db, rng):
    """A word of the corpus found in few entries: of the words of 8 or more letters in 40
    random messages, the one with the fewest hits (as `sessiondb bench` picks its rare word)."""
    import re
    candidates = []
    for _ in range(40):
        e = rng.choice(users + assistants)
        for part in e["message"].get("content", []):
            text = part.get("text") or part.get("thinking") or ""
            for w in re.findall(r"[A-Za-z]{8,}", text):
                if w not in candidates:
                    candidates.append(w)
    best = ("zyzzyva", 0)
    for w in candidates[:60]:
        # Up to 20 hits: a common word stops the search early.
        _, out = run(bin_, db, ["search", w, "--limit", "20", "--json"])
        n = len(json.loads(out)) if out.strip() else 0
        if n > 0 and (best[1] == 0 or n < best[1]):
            best = (w, n)
    print(f"rare word {best[0]!r}: {best[1]} hits", flush=True)
    return best[0]


def time_queries(bin_, db, queries, runs):
    out = {}
    for q in queries:
        run(bin_, db, ["search", q, "--limit", "10", "--json"])  # warm
        times = [run(bin_, db, ["search", q, "--limit", "10", "--json"])[0] for _ in range(runs)]
        out[q] = round(statistics.median(times) * 1000, 2)
    return out


def shape(bin_, db):
    dt, out = run(bin_, db, ["index", "--json"])
    v = json.loads(out)
    return {"rows": v["postingRows"], "batches": v["postingBatches"]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--db", required=True)
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--syncs", type=int, default=20000)
    ap.add_argument("--bin", default="target/release/sessiondb")
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--out")
    ap.add_argument("--rare", help="the rare word (else picked: on c10k `sessiondb bench` picks managerTree)")
    ap.add_argument("--imported", type=float, help="the corpus is imported already (in this many s)")
    ap.add_argument("--index-each", action="store_true", help="run `index` after each sync (PostgreSQL)")
    ap.add_argument("--held", action="store_true", help="each sync through one `sync --stdin` process")
    ap.add_argument("--alternate", action="store_true", help="every other sync through the held process")
    ap.add_argument("--no-rebuild", action="store_true", help="stop after the syncs' figures")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    sessions = os.path.join(a.work, "sessions", f"--home-dev-work-turns-{a.seed}--")
    os.makedirs(sessions, exist_ok=True)
    root = os.path.join(a.work, "sessions")
    r = {"db": a.db.split("@")[-1], "syncs_asked": a.syncs, "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}

    if a.imported is None:
        dt, out = run(a.bin, a.db, ["import", a.corpus, "--json"])
        r["import_s"] = round(dt, 1)
        print(f"import {dt:.1f} s", flush=True)
    else:
        r["import_s"] = a.imported
    r["after_import"] = shape(a.bin, a.db)

    users, assistants = message_lines(a.corpus, 400, rng)
    word = a.rare or rare_word(users, assistants, a.bin, a.db, rng)
    queries = [word, "function", "the", "error handling", "backoff retry", "zzqxjv"]
    r["queries"] = queries
    print(f"queries {queries}", flush=True)

    sync_ms, index_ms, sync_cpu_ms, held_ms = [], [], [], []
    held = None
    if a.held or a.alternate:
        held = subprocess.Popen([a.bin, "--db", a.db, "sync", "--stdin", "--sessions-dir", root],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
    held_cpu = proc_cpu(held.pid) if held else 0
    path, last_id, ts = None, None, 1_800_000_000_000
    started = time.perf_counter()
    deadline = float(os.environ.get("BENCH_DEADLINE", "inf"))
    for i in range(a.syncs):
        if time.time() > deadline:
            print(f"deadline reached after {i} syncs", flush=True)
            break
        if i % TURNS_PER_SESSION == 0:
            sid = str(uuid.UUID(int=rng.getrandbits(128)))
            path = os.path.join(sessions, f"turns-{i // TURNS_PER_SESSION:05d}_{sid}.jsonl")
            iso = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(ts / 1000))
            with open(path, "w", encoding="utf-8") as f:
                f.write(json.dumps({"type": "session", "version": 3, "id": sid, "timestamp": iso,
                                    "cwd": "/home/dev/work/turns"}, separators=(",", ":")) + "\n")
            last_id = None
        lines = []
        for src in (rng.choice(users), rng.choice(assistants)):
            ts += 1000 + rng.randrange(60_000)
            e = json.loads(json.dumps(src))
            e["id"] = "%08x" % rng.getrandbits(32)
            e["parentId"] = last_id
            e["timestamp"] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts / 1000)) + ".%03dZ" % (ts % 1000)
            e["message"]["timestamp"] = ts
            last_id = e["id"]
            lines.append(json.dumps(e, separators=(",", ":"), ensure_ascii=False))
        with open(path, "a", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        if held and (a.held or i % 2 == 1):
            t = time.perf_counter()
            held.stdin.write(json.dumps([path]) + "\n")
            answer = held.stdout.readline()
            held_ms.append((time.perf_counter() - t) * 1000)
            if not answer or "error" in json.loads(answer):
                sys.exit(f"sync --stdin: {answer!r}")
        else:
            dt, _ = run(a.bin, a.db, ["sync", "--sessions-dir", root, path, "--json"], cpu=sync_cpu_ms)
            sync_ms.append(dt * 1000)
        if a.index_each:
            # On a server `sync` leaves the index to the next search: catch up as one per turn would.
            dt, _ = run(a.bin, a.db, ["index", "--json"])
            index_ms.append(dt * 1000)
        if (i + 1) % 1000 == 0:
            print(f"{i + 1} syncs, p50 {statistics.median((sync_ms or held_ms)[-1000:]):.1f} ms "
                  f"{time.perf_counter() - started:.0f} s", flush=True)
    if held:
        r["held_syncs"] = len(held_ms)
        cpu = proc_cpu(held.pid) - held_cpu
        held.stdin.close()
        held.wait()
        r["held_sync_ms"] = {**spread(held_ms, mean=True), "cpu_mean": round(cpu * 1000 / len(held_ms), 1)}
        print(f"held syncs: {r['held_sync_ms']}", flush=True)
    r["syncs"] = len(sync_ms)
    if sync_ms:
        r["sync_ms"] = spread(sync_ms, mean=True)
        r["sync_cpu_ms"] = spread(sync_cpu_ms)
    if index_ms:
        r["index_ms"] = spread(index_ms)
    print(f"syncs: {r.get('sync_ms')} index: {r.get('index_ms')}", flush=True)

    if a.no_rebuild:
        finish(r, a)
        return
    r["after_syncs"] = shape(a.bin, a.db)
    r["after_syncs"]["query_ms"] = time_queries(a.bin, a.db, queries, a.runs)
    print(f"after syncs: {r['after_syncs']}", flush=True)

    dt, _ = run(a.bin, a.db, ["index", "--rebuild", "--json"])
    r["rebuild_s"] = round(dt, 1)
    r["after_rebuild"] = shape(a.bin, a.db)
    r["after_rebuild"]["query_ms"] = time_queries(a.bin, a.db, queries, a.runs)
    print(f"after rebuild ({dt:.1f} s): {r['after_rebuild']}", flush=True)
    finish(r, a)


def finish(r, a):
    r["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    text = json.dumps(r, indent=2)
    print(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    main()
