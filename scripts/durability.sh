#!/usr/bin/env bash
# durability.sh: power cuts (SIGKILL) at random moments, and what the node finds when it comes
# back. On a private fake LAN (host 'dev' runs `matter-sim run`, host 'ctl' runs homectl):
#
#   commissioning  ROUNDS/2 times: a fresh node, homectl commissions it, and the node is killed
#                  at a random moment of that (0 to 350 ms after homectl starts; it takes about
#                  200). Started again it must load its state and be on the fabric or cleanly on
#                  none (the fail-safe's rule: what an armed fail-safe added is dropped unless
#                  CommissioningComplete committed it): with none it is commissionable and a new
#                  commissioning succeeds;
#                  with one, homectl reaches it if homectl heard CommissioningComplete answered.
#   writes         ROUNDS/2 times: a commissioned node takes levels from homectl (each answered
#                  one noted) and is killed at a random moment. Started again, its level is the
#                  last answered one or the one in flight, never an older one.
#   broken files   each state file truncated, then garbled: the node refuses to start with a
#                  message that names the file and says what to do, and leaves the file as it was
#                  (but a journal's torn tail, which it reads up to, and the event numbers'
#                  reservation, which it replaces past 2^32 with a warning naming the file).
#
#   scripts/durability.sh [ROUNDS]     (default 100; the test command runs 10)
#
# Prints each round, then the counts; exits 1 on any round that breaks the rule.
. "$(dirname "$0")/lib/common.sh"
ROUNDS="${1:-100}"
build_products matter-sim homectl
PROFILE=DeviceProfiles/devices/dimmable-light.yaml
CODE=34970112332   # passcode 20202021, discriminator 3840
DEV_IP=10.77.0.2
STATE="$(mktemp -d /tmp/durability.XXXXXX)"
LAN="fldur$$"; LAN="${LAN:0:12}"
NODE_PID=""
cleanup() {
  [ -z "$NODE_PID" ] || kill -9 "$NODE_PID" 2>/dev/null || true
  wait 2>/dev/null || true
  scripts/fakelan.sh down "$LAN" >/dev/null 2>&1 || true
  rm -rf "$STATE"
}
on_exit cleanup
scripts/fakelan.sh up "$LAN" dev ctl >/dev/null
scripts/fakelan.sh avahi "$LAN" dev ctl >/dev/null
TRUST="$STATE/trust"; mkdir -p "$TRUST"
cp DeviceProfiles/credentials/paa/*.pem DeviceProfiles/credentials/Chip-Test-CD-Signing-Cert.pem "$TRUST/"
on_ctl() { scripts/fakelan.sh exec "$LAN" ctl -- "$@"; }

# start_node DIR: matter-sim run on 'dev' with its state in DIR; waits for its summary.
start_node() {
  local dir="$1"
  : >"$STATE/node.out"
  scripts/fakelan.sh exec "$LAN" dev -- "$BIN/matter-sim" run "$PROFILE" --passcode 20202021 --discriminator 3840 \
    --port 5540 --state-dir "$dir" --commissioning-window 0 --control "$STATE/control.sock" \
    >"$STATE/node.out" 2>"$STATE/node.err" &
  NODE_PID=$!
  for _ in $(seq 200); do  # bounded: 10 s
    grep -q '^  fabrics:' "$STATE/node.out" && return 0
    kill -0 "$NODE_PID" 2>/dev/null || return 1
    sleep 0.05
  done
  return 1
}
kill_node() { kill -9 "$NODE_PID" 2>/dev/null || true; wait "$NODE_PID" 2>/dev/null || true; NODE_PID=""; }
stop_node() { kill -INT "$NODE_PID" 2>/dev/null || true; wait "$NODE_PID" 2>/dev/null || true; NODE_PID=""; }
fabrics() { awk '$1 == "fabrics:" { $1 = ""; print substr($0, 2) }' "$STATE/node.out"; }
random_ms() { echo $((RANDOM % ($1 + 1))); }
seconds() { awk -v ms="$1" 'BEGIN { printf "%.3f", ms / 1000 }'; }
commission() {  # commission DB: homectl commissions the node at its address as "Light"
  on_ctl "$BIN/homectl" commission --code "$CODE" --address "$DEV_IP:5540" --home "$1" --paa-trust-store "$TRUST" \
    --name Light --timeout 15 >/dev/null 2>&1
}
level_of() {  # level_of DB: the light's CurrentLevel as homectl reads it
  on_ctl "$BIN/homectl" get Light --home "$1" --json --no-dnssd --timeout 10 2>/dev/null \
    | python3 -c 'import json, sys
try: print(json.load(sys.stdin)["state"].get("level", ""))
except ValueError: print("")' || true
}

broken=0; onFabric=0; onNone=0; lostAnswer=0; writes=0; writeOK=0
fail() { broken=$((broken + 1)); echo "BROKEN $*"; }

half=$(( (ROUNDS + 1) / 2 ))
echo "durability: $half power cuts during commissioning"
for round in $(seq "$half"); do
  node="$STATE/c$round"; db="$STATE/c$round.sqlite"
  start_node "$node" || { fail "round $round: the node did not start: $(tail -n 3 "$STATE/node.err")"; continue; }
  at=$(random_ms 350)
  commission "$db" & homectl_pid=$!
  sleep "$(seconds "$at")"
  kill_node
  homectl_status=0; wait "$homectl_pid" || homectl_status=$?
  if ! start_node "$node"; then
    fail "round $round (cut at ${at} ms): the node did not start again: $(tail -n 3 "$STATE/node.err")"; kill_node; continue
  fi
  state="$(fabrics)"
  case "$state" in
    none*)
      # Cleanly on no fabric: commissionable, and a new commissioning succeeds.
      if [ "$homectl_status" = 0 ]; then fail "round $round (cut at ${at} ms): homectl finished, the node has no fabric"
      elif commission "$STATE/again$round.sqlite"; then onNone=$((onNone + 1)); echo "round $round: cut at ${at} ms: no fabric; commissioned again"
      else fail "round $round (cut at ${at} ms): no fabric, but commissioning it again fails"; fi ;;
    1\ *)
      if [ "$homectl_status" = 0 ]; then
        if [ -n "$(level_of "$db")" ]; then onFabric=$((onFabric + 1)); echo "round $round: cut at ${at} ms: on the fabric; homectl reaches it"
        else fail "round $round (cut at ${at} ms): on the fabric homectl commissioned, but homectl cannot reach it"; fi
      else
        # CommissioningComplete was committed, its answer lost with the power.
        lostAnswer=$((lostAnswer + 1)); echo "round $round: cut at ${at} ms: on the fabric (the answer to CommissioningComplete was lost)"
      fi ;;
    *) fail "round $round (cut at ${at} ms): unexpected fabrics: $state" ;;
  esac
  stop_node
done

echo "durability: $((ROUNDS - half)) power cuts during writes"
base="$STATE/base"; basedb="$STATE/base.sqlite"
start_node "$base" && commission "$basedb" || { echo "durability: cannot commission the baseline node" >&2; exit 1; }
stop_node
for round in $(seq $((ROUNDS - half))); do
  node="$STATE/w$round"; db="$STATE/w$round.sqlite"
  rm -rf "$node"; cp -a "$base" "$node"
  # The home database in WAL mode: its -wal and -shm files are part of it.
  for f in "$basedb"*; do cp "$f" "$db${f#"$basedb"}"; done
  start_node "$node" || { fail "write round $round: the node did not start"; continue; }
  : >"$STATE/acked"
  ( for level in $(seq 20 7 250); do
      echo "$level" >"$STATE/inflight"
      on_ctl "$BIN/homectl" level Light "$level" --home "$db" --no-dnssd --timeout 5 >/dev/null 2>&1 || exit 0
      echo "$level" >>"$STATE/acked"
    done ) & writer=$!
  at=$((300 + $(random_ms 2700)))
  sleep "$(seconds "$at")"
  kill_node
  wait "$writer" 2>/dev/null || true
  acked="$(tail -n 1 "$STATE/acked")"; inflight="$(cat "$STATE/inflight" 2>/dev/null || true)"
  start_node "$node" || { fail "write round $round: the node did not start again: $(tail -n 3 "$STATE/node.err")"; kill_node; continue; }
  level="$(level_of "$db")"
  writes=$((writes + $(wc -l <"$STATE/acked")))
  if [ -z "$acked" ]; then
    writeOK=$((writeOK + 1)); echo "write round $round: cut at ${at} ms before any answer; level $level"
  elif [ "$level" = "$acked" ] || [ "$level" = "$inflight" ]; then
    writeOK=$((writeOK + 1)); echo "write round $round: cut at ${at} ms: level $level (last answered $acked, in flight $inflight)"
  else
    fail "write round $round (cut at ${at} ms): level '$level' after the cut; last answered $acked, in flight $inflight"
  fi
  stop_node
done

echo "durability: broken state files"
files=0; clear=0
for file in "$base"/*.json "$base"/*.journal; do
  [ -e "$file" ] || continue
  name="$(basename "$file")"
  for how in truncated garbled; do
    node="$STATE/b-$name-$how"; rm -rf "$node"; cp -a "$base" "$node"
    target="$node/$name"
    if [ "$how" = truncated ]; then head -c "$(( $(wc -c <"$target") / 2 ))" "$target" >"$target.tmp"; else printf '\x00\xffnot json{' >"$target.tmp"; fi
    mv "$target.tmp" "$target"; before="$(sha256sum "$target")"
    files=$((files + 1))
    if start_node "$node"; then
      case "$name" in
        # A journal's torn last line is what a power cut leaves: read up to it, never refused.
        *.journal) clear=$((clear + 1)); echo "$name $how: started (the journal's complete lines kept)" ;;
        # Event numbers only need to grow: past 2^32 they cannot repeat one used before.
        events.json)
          warning="$(grep -F "$target" "$STATE/node.err" | grep -F 'numbers its events from 2^32' | head -n 1 || true)"
          if [ -n "$warning" ]; then clear=$((clear + 1)); echo "$name $how: started, said so: ${warning#*warning }"
          else fail "$name $how: started on a broken $name without a word naming it"; fi ;;
        *) fail "$name $how: the node started on a broken $name" ;;
      esac
      stop_node; continue
    fi
    kill_node
    message="$(grep -v ' notice \| info ' "$STATE/node.err" | tail -n 2 | tr '\n' ' ')"
    if grep -qF "$target" <<<"$message" && [ "$(sha256sum "$target")" = "$before" ]; then
      clear=$((clear + 1)); echo "$name $how: refused: $message"
    else
      fail "$name $how: no clear message naming $target (or the file changed): $message"
    fi
  done
done

echo "durability: commissioning cuts: $onFabric on the fabric, $onNone on none, $lostAnswer on the fabric with the answer lost;" \
  "write cuts: $writeOK of $((ROUNDS - half)) consistent over $writes answered writes; broken files: $clear of $files refused clearly;" \
  "$broken broken"
[ "$broken" = 0 ]
