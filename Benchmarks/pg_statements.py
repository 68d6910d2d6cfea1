#!/usr/bin/env python3
"""Statements PostgreSQL ran in a time window, per notification (notify-run.sh with PG_STATEMENTS=1).

    python pg_statements.py POSTGRES_LOG START_NS END_NS NOTIFICATIONS [TOP]

Reads a server log written with `log_min_duration_statement = 0` (default log_line_prefix
'%m [%p] '), keeps the `execute`/`statement` entries whose timestamp falls inside the window,
normalizes literals, and prints the statements by count: count per notification and server
time (the logged duration) per notification. Statement logging costs PostgreSQL CPU itself, so
a run that collects it is a diagnosis, not a measurement."""

import re
import sys
from collections import defaultdict
from datetime import datetime

ENTRY = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) (\w+) \[(\d+)\] (\w+):\s+(.*)$")
DURATION = re.compile(r"^duration: ([\d.]+) ms\s+(execute [^:]*|statement|parse [^:]*|bind [^:]*):\s*(.*)$", re.S)


def entries(path):
    current = None
    with open(path, errors="replace") as f:
        for line in f:
            m = ENTRY.match(line)
            if m:
                if current:
                    yield current
                stamp = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp()  # the log is in UTC (TZ below)
                current = [stamp, m.group(4), m.group(5)]
            elif current:
                current[2] += " " + line.strip()
    if current:
        yield current


def normalize(sql: str) -> str:
    sql = re.sub(r"\s+", " ", sql).strip()
    sql = re.sub(r"'(?:[^']|'')*'", "'?'", sql)
    sql = re.sub(r"\b\d+\b", "N", sql)
    sql = re.sub(r"(\$N(, )?)+", "$…", sql)
    sql = re.sub(r"(\('\?'(, '\?')*\)(, )?)+", "(…)", sql)
    return sql[:220]


def main() -> None:
    import os
    import time
    os.environ["TZ"] = "UTC"
    time.tzset()
    path, start_ns, end_ns, notifications = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    top = int(sys.argv[5]) if len(sys.argv) > 5 else 25
    start, end = start_ns / 1e9, end_ns / 1e9
    count = defaultdict(int)
    millis = defaultdict(float)
    for stamp, level, text in entries(path):
        if not (start <= stamp <= end) or level != "LOG":
            continue
        m = DURATION.match(text)
        if not m or m.group(2).startswith(("parse", "bind")):
            continue
        key = normalize(m.group(3))
        count[key] += 1
        millis[key] += float(m.group(1))
    total = sum(count.values())
    total_ms = sum(millis.values())
    n = max(1, notifications)
    print(f"{total:,} statements in the window, {total / n:.1f} per notification; "
          f"{total_ms / 1000:.2f} s logged duration, {total_ms * 1000 / n:.0f} µs per notification\n")
    print("| per notification | µs per notification | statement |")
    print("|---:|---:|---|")
    for key in sorted(count, key=lambda k: -count[k])[:top]:
        print(f"| {count[key] / n:.2f} | {millis[key] * 1000 / n:.0f} | `{key.replace('|', '¦')}` |")


if __name__ == "__main__":
    main()
