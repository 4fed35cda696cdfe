"""``verify check`` as a whole process against the same command of an earlier source tree.

Both run the full plan from an empty output directory each time (the kept evidence of a
finished run would otherwise make the next one instant), in turn, side by side
(:mod:`pairs`); the baseline is the source tree given by ``--baseline`` (a checkout of an
earlier commit).

    python benchmarks/speed_check.py --baseline ../main [--quick] [--runs 2] [--busy]
"""

from __future__ import annotations

from pairs import arguments, save, short_commit, versus_tree


def main() -> None:
    parser = arguments(__doc__.splitlines()[0])
    parser.add_argument("--baseline", required=True, help="source tree of the baseline")
    parser.add_argument("--quick", action="store_true", help="the quick plan")
    args = parser.parse_args()
    record = versus_tree(["check", *(["--quick"] if args.quick else [])], args.baseline, args)
    record["what"] = f"verify check ({'quick' if args.quick else 'full'}, 2 workers)"
    record["baseline_what"] = f"the same command at commit {short_commit(record, args.baseline)}"
    save("check_quick" if args.quick else "check", record)


if __name__ == "__main__":
    main()
