"""python -m test.fuzz: a fuzzing campaign, the CI sample, the corpus
replay, or random graphs through the differential check.

    python -m test.fuzz --minutes 15            # mutants; new failures -> corpus/
    python -m test.fuzz --sample 500            # the fixed-seed CI sample
    python -m test.fuzz --replay                # every corpus file
    python -m test.fuzz --random-graphs 1000    # generated graphs vs the reference
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from graphcompiler.test.fuzz import campaign


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m test.fuzz", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--minutes", type=float, default=15.0, help="campaign length (default 15)")
    mode.add_argument("--sample", type=int, metavar="N", help="run the first N mutants and report")
    mode.add_argument("--replay", action="store_true", help="replay every corpus file")
    mode.add_argument("--random-graphs", type=int, metavar="N", help="check N random graphs")
    parser.add_argument("--seed", type=int, default=0, help="campaign / first graph seed")
    parser.add_argument("--workers", type=int, default=1, help="worker processes (default 1)")
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per case (default 10)")
    parser.add_argument("--minimize-seconds", type=float, default=60.0,
                        help="time to minimize each new failure (default 60)")  # fmt: skip
    parser.add_argument("--corpus", type=Path, default=campaign.CORPUS, help="corpus folder")
    parser.add_argument(
        "--findings", type=Path, help="append each new failure to this markdown file"
    )
    args = parser.parse_args(argv)

    if args.replay:
        results = campaign.replay_corpus(args.workers, args.timeout, args.corpus)
        for path, outcome in results:
            print(f"{'FAIL' if outcome.failed else 'ok  '} {path.name}: {outcome.describe()[:200]}")
        return int(any(outcome.failed for _, outcome in results))
    if args.random_graphs is not None:
        report = campaign.run_random_graphs(
            args.random_graphs, args.seed, args.workers, max(args.timeout, 60.0)
        )
    elif args.sample is not None:
        report = campaign.run_sample(args.sample, args.seed, args.workers, args.timeout)
    else:
        report = campaign.fuzz(args.minutes, args.seed, args.workers, args.timeout,
                               args.minimize_seconds, args.corpus, args.findings)  # fmt: skip
    print(report.summary())
    return int(bool(report.failures))


if __name__ == "__main__":
    sys.exit(main())
