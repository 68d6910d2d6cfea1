"""One HS256 token per benchmark user, a line each: sub = <prefix><n>, role customer, valid an
hour (Herald's `herald token` claims, signed with the cluster's HERALD_JWT_SECRET). The
generator's --tokens-file gives client n line n; the python peer reads the sub to join the
user's room as Herald does.

    python bench_tokens.py --secret S --users 20000 --prefix bench- > tokens.txt
"""

import argparse
import sys
import time

import jwt


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--secret", required=True)
    parser.add_argument("--users", type=int, required=True)
    parser.add_argument("--prefix", default="bench-")
    args = parser.parse_args()
    now = int(time.time())
    out = sys.stdout
    for n in range(args.users):
        claims = {"sub": f"{args.prefix}{n}", "role": "customer", "iat": now, "exp": now + 3600}
        out.write(jwt.encode(claims, args.secret, algorithm="HS256") + "\n")


if __name__ == "__main__":
    main()
