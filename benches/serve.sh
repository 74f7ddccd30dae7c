#!/usr/bin/env bash
# Server time of `sessiondb serve`, measured with a real HTTP client (curl: time from the request
# to the last byte, over a kept TCP connection per run), and the server's peak memory.
#
#   benches/serve.sh BIN C10K_DB HUGE_DB [RUNS]
#
# C10K_DB and HUGE_DB are databases imported from the c10k and huge corpora
# (node /work/shared/bench-pi/make-corpus.mjs ...; sessiondb --db X import DIR). Prints one line
# per figure: name, median and max of RUNS requests (after 3 warm-up requests), bytes.
set -euo pipefail
bin=$1 c10k=$2 huge=$3 runs=${4:-30}

start() { # db -> port (the server's pid in $pid)
  local out; out=$(mktemp)
  "$bin" --db "$1" serve --listen 127.0.0.1:0 >"$out" 2>&1 &
  pid=$!
  for _ in $(seq 100); do grep -q ' at http' "$out" && break; sleep 0.1; done
  port=$(grep -o ' at http://[^/]*' "$out" | sed 's/.*://')
  rm -f "$out"
}

measure() { # name url
  local name=$1 url=$2 times=() bytes
  for _ in 1 2 3; do curl -s -o /dev/null "$url"; done
  for _ in $(seq "$runs"); do
    times+=("$(curl -s -o /dev/null -w '%{time_total}' "$url")")
  done
  bytes=$(curl -s -o /dev/null -w '%{size_download}' "$url")
  printf '%s\n' "${times[@]}" | sort -n | awk -v n="$name" -v b="$bytes" \
    '{ t[NR] = $1 * 1000 } END { printf "%-34s median %7.1f ms   max %7.1f ms   %9d bytes\n", n, t[int((NR + 1) / 2)], t[NR], b }'
}

once() { # name url: one request, nothing kept yet
  curl -s -o /dev/null -w "$(printf '%-34s' "$1")  once   %{time_total} s (cold: nothing kept yet)\n" "$2"
}

start "$c10k"
base="http://127.0.0.1:$port"
# The first requests after the start: nothing of usage is kept by the server (it reads the
# totals the store keeps per day), every grouping and a chosen period.
for by in day week month model provider project session; do
  once "usage by $by, cold" "$base/usage?by=$by"
done
once "usage by day, a period, cold" "$base/usage?by=day&since=2026-10-15&until=2026-11-10"
once "usage by model, a period, cold" "$base/usage?by=model&since=2026-10-15&until=2026-11-10"
measure "sessions page (10k sessions)" "$base/"
measure "sessions page, page 150" "$base/?page=150"
project=$(curl -s "$base/" | grep -o '<option value="[^"]*"' | sed -n 2p | sed 's/<option value="//; s/"$//')
measure "sessions page, one project" "$base/?project=$(python3 -c 'import sys, urllib.parse; print(urllib.parse.quote(sys.argv[1], safe=""))' "$project")"
measure "search (common word)" "$base/?q=function"
measure "search (rare phrase)" "$base/?q=%22error+handling%22"
measure "usage by day (10k sessions)" "$base/usage?by=day"
measure "usage by week, a period" "$base/usage?by=week&since=2026-10-15&until=2026-11-10"
measure "usage by model" "$base/usage?by=model"
measure "usage by session (10k rows)" "$base/usage?by=session"
echo "c10k server peak RSS: $(grep VmHWM /proc/$pid/status | awk '{print $2 / 1024 " MiB"}')"
kill "$pid"

start "$huge"
base="http://127.0.0.1:$port"
grep VmRSS /proc/$pid/status | awk '{print "huge server RSS at start: " $2 / 1024 " MiB"}'
sid=$(curl -s "$base/" | grep -o 'href="/s/[0-9]*"' | head -1 | sed 's/[^0-9]//g')
once "huge session, first screen, cold" "$base/s/$sid"
measure "huge session, first screen" "$base/s/$sid"
once "huge session's tree, cold" "$base/s/$sid/tree"
measure "huge session's tree (kept)" "$base/s/$sid/tree"
earliest=$(curl -s "$base/s/$sid" | grep -o 'id="earlier" href="[^"]*"' | sed 's/.*href="//; s/"$//; s/&amp;/\&/g')
measure "huge session, earlier entries" "$base$earliest"
curl -s -o /dev/null -w "huge session export: %{time_total} s, %{size_download} bytes\n" "$base/s/$sid/export.jsonl"
for _ in $(seq 20); do curl -s -o /dev/null "$base/s/$sid"; done
echo "huge server peak RSS after $((runs + 24)) first screens, 1 earlier, 1 export: $(grep VmHWM /proc/$pid/status | awk '{print $2 / 1024 " MiB"}')"
kill "$pid"
