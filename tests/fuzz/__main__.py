"""`make fuzz`: every reader's fuzz target for ``--inputs`` inputs (default 10^6), a table of what was run.

    python -m tests.fuzz [--inputs N] [--seconds S] [--only NAME ...] [--seed N]

Exits 1 when any target crashed, printing each crash's shortest input and traceback.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from tests.fuzz.engine import fuzz
from tests.fuzz.targets import all_targets


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.splitlines()[0])
    parser.add_argument("--inputs", type=int, default=1_000_000, help="inputs per target (default 10^6)")
    parser.add_argument("--seconds", type=float, default=None, help="at most this long per target")
    parser.add_argument("--only", nargs="*", default=None, help="these targets only")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="gpy-fuzz-") as folder:
        targets = [t for t in all_targets(Path(folder)) if not args.only or t.name in args.only]
        header = f"{'target':<14} {'inputs':>10} {'seconds':>9} {'inputs/s':>9} {'outcomes':>8} {'crashes':>7}"
        print(header, flush=True)
        failed = []
        for target in targets:
            report = fuzz(target, args.inputs, args.seconds, seed=args.seed)
            print(f"{target.name:<14} {report.inputs:>10} {report.seconds:>9.1f} "
                  f"{report.inputs / max(report.seconds, 1e-9):>9.0f} {report.outcomes:>8} {len(report.crashes):>7}",
                  flush=True)
            if report.crashes:
                failed.append(report)
        for report in failed:
            print("\n" + report.describe(), file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
