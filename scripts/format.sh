#!/usr/bin/env bash
# Formats Sources/ and Tests/ with the checked-in .swift-format (the toolchain's `swift format`).
# The GuideCode/ links are the guides' own code, kept exactly as the guides print it.
#   scripts/format.sh          rewrite the files in place
#   scripts/format.sh --check  list what would change, exit 1 if anything would
. "$(dirname "$0")/lib/common.sh"
mapfile -t files < <(find Sources Tests -name '*.swift' ! -type l ! -path '*/GuideCode/*' | sort)
if [[ "${1:-}" == "--check" ]]; then
  changed=0
  for f in "${files[@]}"; do
    if ! swift format format "$f" | cmp -s - "$f"; then echo "not formatted: $f"; changed=1; fi
  done
  echo "format: ${#files[@]} files checked"
  exit "$changed"
fi
swift format format -i "${files[@]}"
echo "format: ${#files[@]} files formatted"
