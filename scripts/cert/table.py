"""The table of a cert.sh run: case x profile -> pass / FAIL / n/a / harness, and the counts.

    python3 table.py OUT_DIR [PROFILE...]

Reads OUT_DIR/<profile>/results.tsv (case<TAB>result, as cert.sh records them; a case listed
twice, e.g. run on two endpoints, keeps its worst result). Writes OUT_DIR/table.tsv, prints it
aligned (without the cases that apply to no profile, which are only counted) and ends with "N passed, M failed" (exit status 1 when anything failed).
"""
import os
import re
import sys

RANK = {"n/a": 0, "pass": 1, "harness": 2, "FAIL": 3}


def main() -> None:
    out = sys.argv[1]
    profiles = sys.argv[2:] or sorted(p for p in os.listdir(out) if os.path.exists(os.path.join(out, p, "results.tsv")))
    table: dict[str, dict[str, str]] = {}
    for profile in profiles:
        path = os.path.join(out, profile, "results.tsv")
        if not os.path.exists(path):
            continue
        for line in open(path):
            case, result = line.rstrip("\n").split("\t")[:2]
            row = table.setdefault(case, {})
            if RANK.get(result, 3) >= RANK.get(row.get(profile, "n/a"), 0):
                row[profile] = result
    key = lambda case: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", case)]
    rows = [["case"] + profiles] + [[case] + [table[case].get(p, "n/a") for p in profiles] for case in sorted(table, key=key)]
    # Cases no profile serves are counted, not listed.
    hidden = [r for r in rows[1:] if all(c == "n/a" for c in r[1:])]
    rows = [rows[0]] + [r for r in rows[1:] if r not in hidden]
    with open(os.path.join(out, "table.tsv"), "w") as f:
        f.writelines("\t".join(r) + "\n" for r in rows)
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    counts = {k: sum(r[1:].count(k) for r in rows[1:]) for k in RANK}
    print(f"cert: {counts['harness']} harness limits, {counts['n/a']} not applicable; {len(hidden)} cases apply to no profile")
    print(f"cert: {counts['pass']} passed, {counts['FAIL']} failed")
    sys.exit(1 if counts["FAIL"] else 0)


if __name__ == "__main__":
    main()
