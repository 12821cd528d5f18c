"""What a server's live heap grew by between two moments, by the code that allocated it,
from a memray capture (issue 29: the slow growth of a long club night).

    .venv/bin/pip install memray      # not a dependency of the project
    .venv/bin/python benchmarks/club_night.py --long --scale 0.03 --tables 10 --watchers 5 \\
        --step-seconds 1000000 --backends embedded --memray /tmp/night.bin
    .venv/bin/python benchmarks/memory_growth.py /tmp/night.bin.embedded.0 --from 20 --to 90

It prints the resident size and the live heap over the capture, then, for each allocating
place (the innermost Python frames, or the native ones where no Python frame is on the
stack, as for pymalloc's arenas), the bytes alive at `--from` and at `--to` seconds, largest
growth first. Memory that is alive at both moments and grew is what a ceiling must bound."""

from __future__ import annotations

import argparse
import collections
import sys
from typing import Any


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else "")
    parser.add_argument("capture", help="a memray capture (run --native)")
    parser.add_argument("--from", dest="start", type=float, default=20.0, help="seconds")
    parser.add_argument("--to", dest="end", type=float, default=90.0, help="seconds")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--frames", type=int, default=5, help="frames that name a place")
    args = parser.parse_args()
    try:
        import memray
    except ImportError:
        print("memray is not installed: .venv/bin/pip install memray", file=sys.stderr)
        return 2
    reader: Any = memray.FileReader(args.capture)
    snapshots = list(reader.get_memory_snapshots())
    if not snapshots:
        print("the capture holds no memory snapshots", file=sys.stderr)
        return 1
    first = snapshots[0].time

    def at(seconds: float) -> int:
        for index, snapshot in enumerate(snapshots):
            if (snapshot.time - first) / 1000 >= seconds:
                return index
        return len(snapshots) - 1

    step = max(1, len(snapshots) // 20)
    print("seconds: resident MiB / live heap MiB")
    for snapshot in snapshots[::step]:
        print(
            f"  {(snapshot.time - first) / 1000:6.1f}: {snapshot.rss / 2**20:6.1f} / "
            f"{snapshot.heap / 2**20:6.1f}"
        )
    moments = (at(args.start), at(args.end))
    alive: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for record in reader.get_temporal_allocation_records(merge_threads=True):
        stack = record.hybrid_stack_trace(max_stacks=16)
        python = [f"{f[0]}:{f[1].split('/')[-1]}:{f[2]}" for f in stack if f[1].endswith(".py")]
        place = " <- ".join(python[: args.frames]) or "native: " + " <- ".join(
            str(f[0]) for f in stack[: args.frames]
        )
        for interval in record.intervals:
            for which, moment in enumerate(moments):
                freed = interval.deallocated_before_snapshot
                if interval.allocated_before_snapshot <= moment and (
                    freed is None or freed > moment
                ):
                    alive[place][which] += interval.n_bytes
    before = sum(v[0] for v in alive.values()) / 2**20
    after = sum(v[1] for v in alive.values()) / 2**20
    print(f"live heap: {before:.1f} MiB at {args.start:g} s, {after:.1f} MiB at {args.end:g} s")
    ranked = sorted(alive.items(), key=lambda item: item[1][1] - item[1][0], reverse=True)
    for place, (then, now) in ranked[: args.top]:
        growth, then_mib, now_mib = (now - then) / 2**20, then / 2**20, now / 2**20
        print(f"{growth:+7.2f} MiB ({then_mib:.2f} -> {now_mib:.2f})  {place}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
