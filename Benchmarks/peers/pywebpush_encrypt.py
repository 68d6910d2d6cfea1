"""pywebpush's per-message work without the network: the peer of `PushLoad webpush-encrypt`.

    taskset -c 1 Benchmarks/.venv/bin/python Benchmarks/peers/pywebpush_encrypt.py --seconds 10

One message is what `pywebpush.webpush()` does before its HTTP request: the VAPID claims
(aud from the endpoint, exp = now + 12 h), `Vapid.sign` (an ES256 JWT, py_vapid's
`vapid t=…, k=…` header), then `WebPusher(subscription)._prepare_send_data(…)` (decoding
the subscription keys, a fresh P-256 key, http_ece aes128gcm encryption). The Vapid key is
loaded once (passing a Vapid instance, pywebpush's cheapest way). Modes, one after the other:
- sign-each: a signature per message, as webpush() does;
- cached: one signature reused (what an application caching the header would do);
- string-key (not in "both"): as sign-each, but the key is passed as text and parsed
  for every message, as webpush(..., vapid_private_key="<base64url>") does.
The plaintext is byte-identical to PushLoad's. Prints one JSON line per mode.
"""

import argparse
import base64
import json
import os
import sys
import time
from importlib.metadata import version
from urllib.parse import urlparse

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from py_vapid import Vapid
from pywebpush import WebPusher

PLAINTEXT = (
    '{"badge":3,"data":{"conversation_id":"conversation-42","notification_id":"ntf_01JD5R8Y4W2KQ7X9ABCDEF",'
    '"type":"chat.message"},"notification":{"body":"Are we still on for lunch tomorrow? I booked the place near '
    'the station for 12:30.","tag":"conversation-42","title":"New message from Alice"}}'
).encode()
SUBJECT = "mailto:ops@example.com"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def subscription(i: int) -> dict:
    key = ec.generate_private_key(ec.SECP256R1())
    public = key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
    return {
        "endpoint": "https://fcm.googleapis.com/fcm/send/sub-%d" % i,
        "keys": {"p256dh": b64url(public), "auth": b64url(os.urandom(16))},
    }


def vapid_headers(vapid: Vapid, endpoint: str) -> dict:
    # What webpush() does with vapid_claims for each call.
    claims = {"sub": SUBJECT}
    url = urlparse(endpoint)
    claims["aud"] = "%s://%s" % (url.scheme, url.netloc)
    claims["exp"] = int(time.time()) + 12 * 60 * 60
    return vapid.sign(claims)


def run(mode: str, seconds: float, subs: list, vapid: Vapid, key_text: str) -> dict:
    cached = vapid_headers(vapid, subs[0]["endpoint"])
    messages = 0
    body_bytes = 0
    measuring = False
    phase_end = time.monotonic() + 0.5
    cpu0 = t0 = 0.0
    while True:
        for _ in range(50):
            sub = subs[messages % len(subs)]
            if mode == "sign-each":
                headers = dict(vapid_headers(vapid, sub["endpoint"]))
            elif mode == "string-key":
                headers = dict(vapid_headers(Vapid.from_string(private_key=key_text), sub["endpoint"]))
            else:
                headers = dict(cached)
            prepared = WebPusher(sub)._prepare_send_data(PLAINTEXT, headers, ttl=2419200, content_encoding="aes128gcm")
            body_bytes += len(prepared["data"])
            messages += 1
        if time.monotonic() >= phase_end:
            if measuring:
                break
            measuring = True
            messages = 0
            body_bytes = 0
            cpu0 = time.process_time()
            t0 = time.monotonic()
            phase_end = t0 + seconds
    elapsed = time.monotonic() - t0
    cpu = time.process_time() - cpu0
    return {
        "bench": "webpush-encrypt",
        "impl": "pywebpush",
        "mode": mode,
        "versions": "pywebpush %s, py-vapid %s, http-ece %s, cryptography %s, python %s"
        % (version("pywebpush"), version("py-vapid"), version("http-ece"), version("cryptography"), sys.version.split()[0]),
        "cpus": ",".join(str(c) for c in sorted(os.sched_getaffinity(0))),
        "duration_s": round(elapsed, 3),
        "messages": messages,
        "messages_per_s": round(messages / elapsed, 3),
        "cpu_us_per_message": round(cpu * 1e6 / max(1, messages), 3),
        "messages_per_cpu_s": round(messages / cpu, 3) if cpu > 0 else None,
        "plaintext_bytes": len(PLAINTEXT),
        "body_bytes": body_bytes // max(1, messages),
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--mode", choices=["sign-each", "cached", "string-key", "both"], default="both")
    parser.add_argument("--subscriptions", type=int, default=100)
    args = parser.parse_args()
    subs = [subscription(i) for i in range(args.subscriptions)]
    vapid = Vapid()
    vapid.generate_keys()
    key_text = b64url(vapid.private_key.private_numbers().private_value.to_bytes(32, "big"))
    for mode in ["sign-each", "cached"] if args.mode == "both" else [args.mode]:
        print(json.dumps(run(mode, args.seconds, subs, vapid, key_text)), flush=True)
