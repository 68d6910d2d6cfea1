#!/usr/bin/env python3
"""Where one broadcast's CPU goes: reads `perf script -F comm,time,ip,sym,dso` of a server
recorded by Benchmarks/perf-fanout.sh (call graphs on) and prints, for the broadcasts it
finds, the CPU milliseconds per broadcast and each part's share of it.

    perf script -F comm,time,ip,sym,dso -i OUT/perf.data | Benchmarks/fanout_breakdown.py

A broadcast is a stretch of 5 ms bins with at least a quarter of a core busy, separated
from the next by more than 40 ms, a third of it socket writes. The parts are read from each sample's call chain: the
kernel's share of write(2) (what the kernel floor program also pays), NIO's write and flush
path in user space, retains and releases (mostly first touches of a connection's objects),
Herald's drain, write scheduler and fan-out, the heartbeat sweeps, the event loop's waits
and reads.
"""
import collections
import statistics
import sys

SAMPLE_HZ = 4000
BIN_S = 0.005


def samples(lines):
    current = None
    for line in lines:
        if not line.strip():
            if current:
                yield current
            current = None
        elif not line[0].isspace():
            head = line.split()
            current = (" ".join(head[:-1]), float(head[-1].rstrip(":")), [])
        elif current is not None:
            frame = line.strip().split(None, 1)
            if len(frame) == 2:
                current[2].append(frame[1])
    if current:
        yield current


def part(comm, frames):
    chain = " | ".join(frames)
    leaf = frames[0] if frames else ""
    if comm == "swapper":
        return "idle"
    if "qos" in comm or "dispatch" in chain:
        if "sweep" in chain:
            return "pool: heartbeat and token sweeps"
        if "fanOut" in chain or "deliver" in chain or "enqueue" in chain:
            return "pool: fan-out (deliver, enqueue, needsDrain)"
        return "pool: other"
    if "__GI___libc_write" in chain and "kernel" in leaf:
        return "loop: write(2), kernel"
    if "whenReady" in chain:
        return "loop: epoll_wait and reads"
    if leaf.startswith(("swift_retain", "swift_release")):
        return "loop: retain/release"
    if "WebSocketConnectionHandlerC5drain" in chain:
        if "ChannelHandlerContext" in chain:
            return "loop: NIO write and flush (user space)"
        return "loop: Herald drain (queue, frame, buffer)"
    if "WebSocketWriteScheduler" in chain:
        return "loop: Herald write scheduler"
    return "other"


def main():
    taken = list(samples(sys.stdin))
    if not taken:
        sys.exit("no samples")
    start = taken[0][1]
    busy = collections.Counter()
    for comm, time, _ in taken:
        if comm != "swapper":
            busy[int((time - start) / BIN_S)] += 1
    threshold = SAMPLE_HZ * BIN_S / 4
    groups = []
    for index in sorted(b for b, n in busy.items() if n >= threshold):
        if groups and index - groups[-1][-1] <= 8:
            groups[-1].append(index)
        else:
            groups.append([index])
    # A stretch is a broadcast when socket writes are a third of it (a sweep is not).
    writes = collections.Counter()
    for comm, time, frames in taken:
        if part(comm, frames) == "loop: write(2), kernel":
            writes[int((time - start) / BIN_S)] += 1
    groups = [
        g for g in groups
        if len(g) >= 10 and 3 * sum(writes[b] for b in range(g[0], g[-1] + 1)) >= sum(busy[b] for b in range(g[0], g[-1] + 1))
    ]
    windows = {b for g in groups for b in range(g[0], g[-1] + 1)}
    parts = collections.Counter()
    for comm, time, frames in taken:
        if int((time - start) / BIN_S) in windows:
            parts[part(comm, frames)] += 1
    per_broadcast = [sum(busy[b] for b in range(g[0], g[-1] + 1)) / SAMPLE_HZ * 1e3 for g in groups]
    total = sum(parts.values())
    print(f"broadcasts: {len(groups)}; CPU per broadcast (median): {statistics.median(per_broadcast):.1f} ms")
    for name, count in parts.most_common():
        print(f"{100 * count / total:6.1f} %  {name}")


if __name__ == "__main__":
    main()
