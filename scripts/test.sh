#!/usr/bin/env bash
# The project's test command: installs what it needs, builds once, runs every check of the
# harness (`scripts/run --list` describes each), and ends with a table of steps and seconds.
#
#   scripts/test.sh [SWIFT-TEST-ARGUMENTS...]     (CI runs exactly this through .ci/run)
#
# A failed step does not stop the ones after it (the table shows every result); the command
# exits 1 if any failed. Steps run one after another, except where a step that mostly waits
# (on a browser, a reference controller, timers) runs beside one that computes: on 2 cores two
# computing steps only starve each other, and timed UDP exchanges get flaky.
. "$(dirname "$0")/lib/common.sh"
TEST_LOGS="$ROOT/.build/test-steps"
mkdir -p "$TEST_LOGS"
STEP_NAMES=(); STEP_SECONDS=(); STEP_CPU=(); STEP_RESULTS=()
STARTED=$SECONDS

record() {  # record NAME SECONDS CPU-SECONDS RC
  STEP_NAMES+=("$1"); STEP_SECONDS+=("$2"); STEP_CPU+=("$3")
  if [ "$4" = 0 ]; then STEP_RESULTS+=(pass); else STEP_RESULTS+=("FAIL ($4)"); fi
  echo "test.sh: $1 took $2 s, $3 CPU s (exit $4)" >&2
}

# timed NAME COMMAND...: runs COMMAND in a subshell that notes, for the table, when it ended and
# the CPU seconds (user + system) its processes took: `times` there counts only this step's
# children, whatever runs beside it. A step's CPU beside its wall time tells one that computes
# from one that waits.
timed() {
  local name="$1"; shift
  (
    rc=0; "$@" || rc=$?
    times >"$TEST_LOGS/.times-$name"
    echo "$SECONDS" >"$TEST_LOGS/.ended-$name"
    echo "$rc" >"$TEST_LOGS/.rc-$name"
    exit "$rc"
  )
}
# finished NAME BEGAN RC: records a timed step.
finished() {
  local name="$1" began="$2" rc="$3" ended cpu
  ended="$(cat "$TEST_LOGS/.ended-$name" 2>/dev/null || echo "$SECONDS")"
  cpu="$(awk 'NR == 2 { split($1, u, "m"); split($2, s, "m"); printf "%d", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' \
    "$TEST_LOGS/.times-$name" 2>/dev/null || true)"
  record "$name" $((ended - began)) "${cpu:--}" "$rc"
}

# step NAME COMMAND...: runs COMMAND in the foreground, its output also kept in a log for the
# summary.
step() {
  local name="$1" began=$SECONDS rc=0; shift
  echo "test.sh: ---- $name: $*" >&2
  rm -f "$TEST_LOGS/.rc-$name"
  timed "$name" "$@" 2>&1 | tee "$TEST_LOGS/$name.log" || true
  rc="$(cat "$TEST_LOGS/.rc-$name" 2>/dev/null || echo 1)"
  finished "$name" "$began" "$rc"
}

# step_beside NAME COMMAND...: runs COMMAND in the background, its output in a log that is
# shown when `join_beside` collects it; several may run at once.
BESIDE_PIDS=(); BESIDE_NAMES=(); BESIDE_BEGAN=()
step_beside() {
  local name="$1"; shift
  echo "test.sh: ---- $name (beside the next steps): $*" >&2
  timed "$name" "$@" >"$TEST_LOGS/$name.log" 2>&1 &
  BESIDE_PIDS+=($!); BESIDE_NAMES+=("$name"); BESIDE_BEGAN+=("$SECONDS")
}
# join_beside: waits for every step started beside, in the order they were started.
join_beside() {
  local i rc
  for i in "${!BESIDE_PIDS[@]}"; do
    rc=0; wait "${BESIDE_PIDS[$i]}" || rc=$?
    echo "test.sh: ---- output of ${BESIDE_NAMES[$i]}:" >&2
    cat "$TEST_LOGS/${BESIDE_NAMES[$i]}.log" >&2
    finished "${BESIDE_NAMES[$i]}" "${BESIDE_BEGAN[$i]}" "$rc"
  done
  BESIDE_PIDS=(); BESIDE_NAMES=(); BESIDE_BEGAN=()
}
on_exit '[ "${#BESIDE_PIDS[@]}" = 0 ] || kill "${BESIDE_PIDS[@]}" 2>/dev/null'

# why_failed NAME: the lines of a failed step's log that say why, then its last lines. CI keeps
# only the end of the output, so the summary repeats them there.
why_failed() {
  local log="$TEST_LOGS/$1.log"
  [ -f "$log" ] || return 0
  echo
  echo "test.sh: ---- why $1 failed ($log):"
  grep -aE '✘|error:|FAIL|[Ff]atal|Assertion|Traceback|timed out' "$log" | grep -av ' 0 failed' | head -40 | cut -c1-400
  echo "test.sh: ---- last lines of $1:"
  tail -n 15 "$log" | cut -c1-400
}

summary() {
  local i failed=0
  for i in "${!STEP_NAMES[@]}"; do
    [ "${STEP_RESULTS[$i]}" = pass ] || why_failed "${STEP_NAMES[$i]}"
  done
  echo
  echo "test.sh: steps and seconds"
  printf '  %-24s %7s %7s  %s\n' step seconds "CPU s" result
  for i in "${!STEP_NAMES[@]}"; do
    printf '  %-24s %7s %7s  %s\n' "${STEP_NAMES[$i]}" "${STEP_SECONDS[$i]}" "${STEP_CPU[$i]}" "${STEP_RESULTS[$i]}"
    [ "${STEP_RESULTS[$i]}" = pass ] || failed=$((failed + 1))
  done
  printf '  %-24s %7s\n' "total" $((SECONDS - STARTED))
  echo "test.sh: $(( ${#STEP_NAMES[@]} - failed )) passed, $failed failed"
  [ "$failed" = 0 ]
}

# prepare: what later steps install on first use (Debian packages, the Python environments of
# scripts/lib/venvs.sh), fetched while the build computes; each step still checks its own.
prepare() {
  scripts/apt-install.sh chromium chromium-driver zbar-tools docker.io docker-compose debootstrap gdb haproxy
  local name
  for name in circuitmatter interop ohf dm-validator dashboard soak; do scripts/lib/venvs.sh "$name" >/dev/null; done
}

step setup scripts/setup.sh
step_beside prepare prepare
# Everything is built once; the scripts below then skip their own `swift build`.
step build swift build --build-tests
built="${STEP_RESULTS[-1]}"
join_beside
[ "$built" = pass ] || { summary; exit 1; }
export MATTERSIM_BUILT=1 MATTERSIM_BIN="$ROOT/.build/debug"
# Coverage-guided fuzzing (libFuzzer + address sanitizer) of every outside-input decoder, 30 s
# each: its own build (.build-fuzz) and the runs compute while the unit tests mostly wait on
# timers and fake LANs (about 110 s of CPU in 470 s), so it runs beside them. (The unit tests
# stay one process: split in two, a process ending right after HomeAPI's tests crashed in
# exit() while their Avahi and D-Bus threads still ran.)
step_beside fuzz scripts/fuzz.sh 30
step unit-tests swift test --skip-build --no-parallel "$@"
join_beside
# HomeAPI's generated traits and device types are what the data model says.
step codegen-check python3 scripts/matter-codegen.py --check
# Data-model IDs are written through that generated layer: none is left as a literal. The
# other hex literals in Sources/, classified by the checker's rules (--list), stay at or below
# these counts: protocol identifiers (opcodes, protocol IDs, header flags, vendor and node IDs)
# and the rest (masks, width bounds, encoding bytes).
step hex-ids python3 scripts/checks/hex-ids.py --max-ids 0 --max-protocol 58 --max-other 121
step model-import-check python3 scripts/model-import.py --check
# Package.swift declares exactly what each target imports.
step package-deps python3 scripts/checks/package-deps.py
# HomeAPI's public functions throw HomeError by type (`throws(HomeError)`), none untyped.
step untyped-throws python3 scripts/checks/untyped-throws.py --max 0
# deploy/kubernetes.yaml offline (no cluster here): kinds, fields and references between objects.
step kubernetes-manifest python3 scripts/checks/kubernetes-manifest.py
# Every read of real time outside the clocks says why (issue #20).
step clock-audit scripts/clock-audit.sh --strict
# The guides' own code, byte for byte, is what Examples/GuideCode holds and what the build above
# compiled (linked into the HomeAPI tests, against the SDK's products). Building Examples/GuideCode
# as a package of its own (the whole dependency tree again, 600 CPU s) is `scripts/run guide-code-app`.
step guide-code python3 scripts/check-guide-code.py

# --- Group 1. Home Assistant's Matter server commissions, drives, power-cycles and shares every
# shipped device profile (four runs of about eight, side by side), then the demo home in one
# process and in one process per device. These mostly wait on devices and timers (a run of
# 350 s uses about 150 s of CPU), so they run side by side, beside the light steps below.
# ohf-profiles ends with issue #41's round trip: each node's dump as the server interviewed it is
# cloned (`matter-sim clone`), the clone runs in its place, and the server's dump of the clone
# must equal the first (checks.dumps.VARIES apart); about 5 s a run of ten, in the same server run.
step_beside ohf-profiles env OHF_PARALLEL=4 OHF_CLONE_ROUNDTRIP=1 scripts/ohf-check.sh
# The demo home must be back within 10 s of power-on in both modes (#43). Per device, each child
# resolves only its own device on a model that builds only the clusters it uses (0.13 s of CPU to
# listen), and the children take their first advertisement's slot from one file in the state root
# (AnnouncementSlots), so their registrations go to the shared Avahi daemon 120 ms apart across
# processes, as in one process. In ten fresh-clone runs of this command (the two side by side)
# the slowest node took 3.8-4.4 s in one process and 4.3-6.6 s per device. Before those runs one
# node now and then waited out the server's 45 s address lookup (28.9 s once in a full run, 46.3 s
# once in one process at load 7): the bound says if that comes back.
step_beside ohf-home env OHF_POWER_ON_BOUND=10 scripts/ohf-check.sh --home DeviceProfiles/homes/demo-home.yaml
step_beside ohf-home-per-device env OHF_POWER_ON_BOUND=10 scripts/ohf-check.sh --home DeviceProfiles/homes/demo-home.yaml --process-per-device
# Scenarios: the two shipped ones pass, a wrong expectation fails (exit 1, JUnit failure); it
# waits on the scenario's own timers (3 s of CPU in 145 s).
step_beside scenarios scripts/scenario-check.sh
# The web dashboard in Debian's chromium (headless, selenium) against the demo home on a fake LAN.
step dashboard scripts/dashboard-check.sh
# Power cuts (SIGKILL) during commissioning and writes, and broken state files (#17 item 6).
step durability scripts/durability.sh 10
# A flood of PBKDFParamRequests: memory stays flat and a real commissioner gets in right after.
step pase-flood scripts/pase-flood.sh 5000 2
join_beside

# --- Group 2. The reference Matter controller commissions and drives the simulated devices,
# and Espressif's validator checks its wildcard read of every shipped profile, the demo home's
# devices and the schema's variants: one device at a time on fake LANs of their own, side by
# side with the soak's three minutes, beside the light steps below (together about 80 CPU s).
step_beside interop scripts/interop.sh
step_beside dm-conformance scripts/dm-conformance.sh
step_beside soak scripts/soak.sh 3 50
# The cloud relay SIGKILLed mid-traffic and restarted on its database: time back to full service.
step relay-restart scripts/relay-restart.sh 2
# Two relay instances on PostgreSQL behind HAProxy: a revocation across them, one SIGKILLed
# mid-traffic (the short form, about 20 s; `scripts/run relay-scale` is the full one).
step relay-scale scripts/relay-scale.sh --short
step lossy-lan scripts/lossy-bench.sh 20 200
# docker-compose.yml for real: the compose home (and two small fleet replicas reporting through
# the relay) in containers, then the same fleet as a swarm stack (about 20 s more);
# `scripts/run compose-scale` adds the cloud profile with a relay killed.
step compose scripts/compose-test.sh --fleet 2 5 --stack 2 5
join_beside
summary
