#!/usr/bin/env bash
# Seeds fuzz/corpus/<target>/ from the sample sessions and the oracle's edge files.
set -euo pipefail
cd "$(dirname "$0")"
root=..
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
xz -dc "$root/tests/fixtures/oracle.tar.xz" | tar x -C "$tmp"
files=()
while IFS= read -r -d '' f; do files+=("$f"); done < <(
  find "$root/examples/sessions" "$tmp/corpus/sessions/--home-u-edge--" "$tmp/corpus/cycles" \
    -type f -size -64k -print0)
for t in migrate import projection; do
  mkdir -p "corpus/$t"
  for f in "${files[@]}"; do cp "$f" "corpus/$t/$(basename "$f" | tr ' ' _)"; done
done
mkdir -p corpus/json
n=0
for f in "${files[@]}"; do
  while IFS= read -r line; do
    n=$((n + 1))
    printf '%s' "$line" > "corpus/json/line-$n"
  done < <(head -c 65536 "$f" | head -n 40)
done
echo "seeded: $(ls corpus/json | wc -l) json lines, ${#files[@]} files per session target"
