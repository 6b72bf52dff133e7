#!/usr/bin/env bash
# fuzz.sh: coverage-guided fuzzing of every decoder that reads outside input (Fuzz/Harnesses):
# tlv, message (headers, secured messages), im (Interaction Model requests and responses),
# securechannel (PASE, CASE, status reports), certificate (Matter TLV and X.509), profile (YAML
# profiles, homes, scenarios) and relay (cloud relay frames). Built with libFuzzer and the
# address sanitizer (-sanitize=fuzzer,address) in .build-fuzz; each harness runs SECONDS from
# the checked-in seeds (Fuzz/corpus/NAME, never modified) plus what it finds, kept in
# .build-fuzz/corpus/NAME between runs. A crash leaves its input in .build-fuzz/crashes/ (turn
# it into a regression test) and fails the run.
#
#   scripts/fuzz.sh [SECONDS] [HARNESS...]      (default 30 s each, every harness)
#   scripts/fuzz.sh --seeds                     rewrite the seed corpus Fuzz/corpus/
#   scripts/fuzz.sh --build                     build the harnesses only
. "$(dirname "$0")/lib/common.sh"
SCRATCH=.build-fuzz
build() {
  echo "fuzz: building the harnesses (libFuzzer + address sanitizer, $SCRATCH)" >&2
  MATTERSIM_FUZZ=1 swift build --scratch-path "$SCRATCH" --product matter-fuzz \
    -Xswiftc -sanitize=fuzzer,address -Xswiftc -use-ld=lld >"$SCRATCH/build.log" 2>&1 \
    || { tail -n 30 "$SCRATCH/build.log" >&2; echo "fuzz: the build failed (log: $SCRATCH/build.log)" >&2; exit 1; }
}
mkdir -p "$SCRATCH"
build
[ "${1:-}" = "--build" ] && exit 0
BIN="$(MATTERSIM_FUZZ=1 swift build --scratch-path "$SCRATCH" --show-bin-path)/matter-fuzz"
if [ "${1:-}" = "--seeds" ]; then
  rm -rf Fuzz/corpus
  ASAN_OPTIONS=detect_leaks=0 "$BIN" --make-seeds Fuzz/corpus
  exit 0
fi
SECONDS_EACH="${1:-30}"; shift || true
mapfile -t harnesses < <(ASAN_OPTIONS=detect_leaks=0 "$BIN" --list)
[ "$#" -gt 0 ] && mapfile -t harnesses < <(printf '%s\n' "${harnesses[@]}" | awk 'NR == FNR { want[$1] = 1; next } $1 in want' <(printf '%s\n' "$@") -)

mkdir -p "$SCRATCH/crashes"
failed=0
printf '%-14s %10s %9s %7s %7s %7s  %s\n' harness runs "exec/s" cov features corpus result
for line in "${harnesses[@]}"; do
  read -r name maxlen <<<"$line"
  work="$SCRATCH/corpus/$name"; mkdir -p "$work"
  log="$SCRATCH/$name.log"
  status=0
  # Leaks are not crashes here: the Swift runtime's caches look like leaks to LeakSanitizer.
  MATTERSIM_FUZZ_TARGET="$name" ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 \
    "$BIN" -max_total_time="$SECONDS_EACH" -max_len="$maxlen" -timeout=10 -rss_limit_mb=3072 -print_final_stats=1 \
    -artifact_prefix="$SCRATCH/crashes/$name-" "$work" "Fuzz/corpus/$name" >"$log" 2>&1 || status=$?
  runs="$(awk '/stat::number_of_executed_units/ { print $NF }' "$log" | tail -n 1)"
  rate="$(awk '/stat::average_exec_per_sec/ { print $NF }' "$log" | tail -n 1)"
  cov="$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 | awk '{ print $2 }')"
  ft="$(grep -oE 'ft: [0-9]+' "$log" | tail -n 1 | awk '{ print $2 }')"
  corpus="$(find "$work" -type f | wc -l)"
  if [ "$status" = 0 ]; then result="no crash"; else
    failed=$((failed + 1))
    result="CRASH (exit $status): $(ls -t "$SCRATCH/crashes/$name-"* 2>/dev/null | head -n 1); log $log"
  fi
  printf '%-14s %10s %9s %7s %7s %7s  %s\n' "$name" "${runs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$corpus" "$result"
done
echo "fuzz: ${#harnesses[@]} harnesses, ${SECONDS_EACH} s each, $failed with a crash"
[ "$failed" = 0 ]
