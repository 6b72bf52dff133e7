# scripts/lib/common.sh: what every script of the harness shares. Source it first thing:
#
#     . "$(dirname "${BASH_SOURCE[0]}")/lib/common.sh"      (from scripts/)
#
# It turns on `set -euo pipefail`, sets ROOT to the repository and changes to it (not with
# LIB_KEEP_CWD=1), and gives:
#   die MESSAGE              the script's name and MESSAGE on stderr, exit 2
#   need_root                die unless root (network namespaces, apt)
#   on_exit COMMAND          run COMMAND (a string, eval'd) when the script ends, whatever ends
#                            it: the last registered runs first; INT exits 130, TERM 143
#   unblock_signals "$@"     start the script again with every signal unblocked and default
#   build_products P...      `swift build --product P` for each, unless the test command already
#                            built everything (MATTERSIM_BUILT=1); sets BIN to the bin path
# Nothing here starts a daemon on a real interface: fake LANs are network namespaces.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
SCRIPT_PATH="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
[ -n "${LIB_KEEP_CWD:-}" ] || cd "$ROOT"
SCRIPT_NAME="$(basename "$0" .sh)"
FAKELAN="$ROOT/scripts/fakelan.sh"

die() { echo "$SCRIPT_NAME: $*" >&2; exit 2; }
need_root() { [ "$(id -u)" = 0 ] || die "needs root (network namespaces)"; }

# One EXIT trap runs every registered command, newest first, each with errors ignored, so a
# failing cleanup never hides another and the script's own status is kept.
_ON_EXIT=()
_run_on_exit() {
  local rc=$? i
  trap - EXIT
  set +e
  for ((i = ${#_ON_EXIT[@]} - 1; i >= 0; i--)); do eval "${_ON_EXIT[$i]}"; done
  exit "$rc"
}
on_exit() { _ON_EXIT+=("$*"); }
trap _run_on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A caller may start us with signals blocked or ignored (a Swift test runner's threads block
# nearly all of them, and children inherit the mask): then neither traps nor `kill` on what we
# start would work. Start again with every signal unblocked and default (perl-base is part of
# every Debian system). Call as `unblock_signals bash "$SCRIPT_PATH" "$@"`.
unblock_signals() {
  local key value blocked=""
  while read -r key value; do
    [ "$key" = "SigBlk:" ] && blocked="$value"
  done </proc/$$/status
  if [ -n "$blocked" ] && [ "$blocked" != "0000000000000000" ] && [ -z "${FAKELAN_SIGNALS_RESET:-}" ]; then
    FAKELAN_SIGNALS_RESET=1 exec perl -MPOSIX -e \
      'sigprocmask(SIG_SETMASK, POSIX::SigSet->new) or die "sigprocmask: $!"; $SIG{$_} = "DEFAULT" for qw(PIPE QUIT INT TERM HUP); exec { $ARGV[0] } @ARGV or die "exec: $!"' \
      -- "$@"
  fi
}

# The test command builds every product once and exports MATTERSIM_BUILT=1: a script it runs
# then skips its own `swift build` (each no-op build still plans the whole package).
build_products() {
  local product
  if [ "${MATTERSIM_BUILT:-}" != 1 ]; then
    for product in "$@"; do
      swift build --product "$product" >"${BUILD_LOG:-/dev/null}" 2>&1 \
        || { swift build --product "$product" 2>&1 | tail -n 30 >&2; die "swift build --product $product failed"; }
    done
  fi
  BIN="${MATTERSIM_BIN:-$ROOT/.build/debug}"
}
