"""An OTLP/HTTP receiver that accepts and discards `POST /v1/traces`, for the durable-path
benchmark's traced legs (Benchmarks/durable-run.sh): it counts requests and bytes (printed as one
JSON line at SIGTERM) so a run shows the spans left the server, without decoding them.

    python3 Benchmarks/otlp_sink.py --port 4318
"""

from __future__ import annotations

import argparse
import http.server
import json
import signal
import sys
import threading

counts = {"requests": 0, "bytes": 0}
lock = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        with lock:
            counts["requests"] += 1
            counts["bytes"] += len(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), Handler)

    def stop(*_):
        print(json.dumps({"otlp_sink": counts}), flush=True)
        threading.Thread(target=server.shutdown, daemon=True).start()

    signal.signal(signal.SIGTERM, stop)
    print(f"otlp sink listening on {args.port}", file=sys.stderr, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
