"""Tokens as identity providers really issue them, checked against keys Herald fetches from a
JWKS URL (a local provider that rotates its key), and public routes that outlive a lapsed token.

Each provider's token shape is signed with PyJWT the way the provider does:
- Supabase: `role: "authenticated"`, `aud: "authenticated"`, a UUID `sub`, app roles in
  `app_metadata` (set by the backend with the admin API; never `user_metadata`, which the
  user can write);
- Firebase Auth: `iss`/`aud` of the project, custom claims (`role`) at the top level;
- Auth0: roles as a list under a namespaced claim whose name contains dots.
"""

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from conftest import assert_error

ISSUER = "http://127.0.0.1/auth/v1"
AUDIENCE = "authenticated"
AUTH0_ROLES = "https://herald.example.com/roles"
MIN_REFETCH = 1
# The module sends many refused tokens from one address, each counted against it.
LIMITS = "rate_limits:\n  anonymous:\n    limit: 100000\n    window_seconds: 60\n"


class Provider:
    """A JWKS endpoint: the keys it publishes can be rotated, and it can go down."""

    def __init__(self):
        self.keys: dict[str, object] = {}
        self.requests = 0
        self.down = False
        self.max_age = 300
        self.lock = threading.Lock()
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server's name)
                with provider.lock:
                    provider.requests += 1
                    if provider.down:
                        self.send_response(503)
                        self.end_headers()
                        return
                    body = json.dumps(provider.jwks()).encode()
                    max_age = provider.max_age
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Cache-Control", f"public, max-age={max_age}")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/auth/v1/.well-known/jwks.json"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def add_key(self, kid: str, kind: str = "ec"):
        key = ec.generate_private_key(ec.SECP256R1()) if kind == "ec" else rsa.generate_private_key(public_exponent=65537, key_size=2048)
        with self.lock:
            self.keys[kid] = key
        return key

    def remove_key(self, kid: str):
        with self.lock:
            del self.keys[kid]

    def jwks(self) -> dict:
        entries = []
        for kid, key in self.keys.items():
            if isinstance(key, ec.EllipticCurvePrivateKey):
                jwk = jwt.algorithms.ECAlgorithm.to_jwk(key.public_key(), as_dict=True)
                jwk.update(kid=kid, use="sig", alg="ES256")
            else:
                jwk = jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
                jwk.update(kid=kid, use="sig", alg="RS256")
            entries.append(jwk)
        return {"keys": entries}

    def sign(self, kid: str, claims: dict, key=None) -> str:
        key = key or self.keys[kid]
        algorithm = "ES256" if isinstance(key, ec.EllipticCurvePrivateKey) else "RS256"
        return jwt.encode(claims, key, algorithm=algorithm, headers={"kid": kid, "typ": "JWT"})


def supabase_claims(sub=None, app_role=None, **overrides):
    now = int(time.time())
    claims = {
        "iss": ISSUER, "aud": AUDIENCE, "sub": sub or str(uuid.uuid4()), "exp": now + 3600, "iat": now,
        "email": "rider@example.com", "phone": "", "role": "authenticated", "aal": "aal1", "session_id": str(uuid.uuid4()),
        "is_anonymous": False,
        "app_metadata": {"provider": "apple", "providers": ["apple"]},
        "user_metadata": {"role": "operator", "full_name": "Tries To Be An Operator"},
    }
    if app_role:
        claims["app_metadata"]["role"] = app_role
    claims.update(overrides)
    return claims


@pytest.fixture(scope="module")
def provider():
    provider = Provider()
    provider.add_key("key-1")
    yield provider
    provider.server.shutdown()


def start_trusting(module_herald, provider, tmp_path_factory, name: str, auth: str):
    """A server whose `auth` section is the docs' example for `name` (keys from `provider`)."""
    config = tmp_path_factory.mktemp(name) / "herald.yaml"
    config.write_text(f"auth:\n  jwks_url: {provider.url}\n  jwks_min_refetch_seconds: {MIN_REFETCH}\n{auth}{LIMITS}")
    server = module_herald.start("--config", str(config))
    # The node fetched the keys as it started; a token naming a new kid within the minimum
    # interval after that would not fetch again (the rate limit `test_made_up_kids…` tests).
    time.sleep(MIN_REFETCH + 0.2)
    return server


@pytest.fixture(scope="module")
def supabase_server(module_herald, provider, tmp_path_factory):
    """Herald configured as docs/identity-providers.md's Supabase example says."""
    return start_trusting(module_herald, provider, tmp_path_factory, "supabase", f"""\
  issuer: {ISSUER}
  audience: {AUDIENCE}
  role_claim: [app_metadata.role, role]
  role_map:
    authenticated: customer
""")


def me(server, token):
    return server.get("/api/v1/me", token=token)


def test_a_supabase_session_is_a_customer_and_app_metadata_names_other_roles(supabase_server, provider):
    rider = str(uuid.uuid4())
    response = me(supabase_server, provider.sign("key-1", supabase_claims(sub=rider)))
    assert response.status_code == 200, response.text
    assert response.json()["data"]["id"] == rider
    # user_metadata says operator: the user can write it, so it is never read.
    assert response.json()["data"]["role"] == "customer"
    driver = me(supabase_server, provider.sign("key-1", supabase_claims(app_role="driver")))
    assert driver.status_code == 200, driver.text
    assert driver.json()["data"]["role"] == "driver"


def test_a_token_no_role_mapping_accepts_is_refused(supabase_server, provider):
    # Supabase's anon key has role "anon": not mapped, not a Herald role, no default.
    assert_error(me(supabase_server, provider.sign("key-1", supabase_claims(role="anon"))), 401, "UNAUTHORIZED")


def test_the_provider_rotates_its_key_and_no_restart_is_needed(supabase_server, provider):
    before = provider.requests
    provider.add_key("key-2")
    token = provider.sign("key-2", supabase_claims(sub="rotated-user"))
    # Herald fetches the set again at once for the unknown kid (the cache was fresh for 5 minutes).
    response = me(supabase_server, token)
    assert response.status_code == 200, response.text
    assert response.json()["data"]["id"] == "rotated-user"
    assert provider.requests == before + 1
    # The old key is withdrawn: tokens it signed stop working at the next fetch of the set.
    old = provider.sign("key-1", supabase_claims(sub="old-key-user"))
    assert me(supabase_server, old).status_code == 200
    provider.remove_key("key-1")
    time.sleep(MIN_REFETCH + 0.2)
    # A token naming a kid nobody has causes the fetch that learns key-1 is gone.
    stranger = provider.sign("key-9", supabase_claims(), key=ec.generate_private_key(ec.SECP256R1()))
    assert_error(me(supabase_server, stranger), 401, "UNAUTHORIZED")
    assert_error(me(supabase_server, old), 401, "UNAUTHORIZED")
    assert me(supabase_server, provider.sign("key-2", supabase_claims())).status_code == 200


def test_made_up_kids_cost_the_provider_one_fetch_per_interval(supabase_server, provider):
    time.sleep(MIN_REFETCH + 0.2)
    before = provider.requests
    stranger_key = ec.generate_private_key(ec.SECP256R1())
    started = time.monotonic()
    for index in range(40):
        token = jwt.encode(supabase_claims(), stranger_key, algorithm="ES256", headers={"kid": f"made-up-{index}"})
        assert_error(me(supabase_server, token), 401, "UNAUTHORIZED")
    elapsed = time.monotonic() - started
    fetches = provider.requests - before
    # At most one fetch per interval started (plus the first), however many tokens came.
    assert 1 <= fetches <= 2 + int(elapsed / MIN_REFETCH), (fetches, elapsed)


def test_the_last_good_keys_stay_while_the_provider_is_down(supabase_server, provider):
    token = provider.sign("key-2", supabase_claims(sub="while-down"))
    provider.down = True
    try:
        time.sleep(MIN_REFETCH + 0.2)
        stranger_key = ec.generate_private_key(ec.SECP256R1())
        before = provider.requests
        # An unknown kid makes Herald ask the provider, which fails...
        assert_error(me(supabase_server, jwt.encode(supabase_claims(), stranger_key, algorithm="ES256", headers={"kid": "x"})),
                     401, "UNAUTHORIZED")
        assert provider.requests > before
        # ...and the keys it had still verify.
        response = me(supabase_server, token)
        assert response.status_code == 200, response.text
    finally:
        provider.down = False


def test_an_expired_token_on_a_public_route_is_served_as_anonymous(supabase_server, provider):
    now = int(time.time())
    expired = provider.sign("key-2", supabase_claims(exp=now - 120, iat=now - 3720))
    response = supabase_server.get("/api/v1/routes", token=expired)
    # The sample feed may not be loaded on this server: either answer is the public one.
    assert response.status_code in (200, 503), response.text
    assert response.headers.get("Herald-Token-Ignored") == "expired"
    # A malformed token likewise, and the header names why.
    garbled = supabase_server.get("/api/v1/alerts", token="not-a-token")
    assert garbled.status_code in (200, 503), garbled.text
    assert garbled.headers.get("Herald-Token-Ignored") == "malformed"
    # A valid token sets nothing aside.
    assert "Herald-Token-Ignored" not in supabase_server.get("/api/v1/alerts", token=provider.sign("key-2", supabase_claims())).headers
    # A route that needs the caller still says 401.
    assert_error(supabase_server.get("/api/v1/favorites", token=expired), 401, "UNAUTHORIZED")


@pytest.fixture(scope="module")
def firebase_server(module_herald, provider, tmp_path_factory):
    return start_trusting(module_herald, provider, tmp_path_factory, "firebase", """\
  issuer: https://securetoken.google.com/herald-e2e
  audience: herald-e2e
  role_claim: role
  default_role: customer
""")


def firebase_claims(uid, **custom):
    now = int(time.time())
    claims = {
        "iss": "https://securetoken.google.com/herald-e2e", "aud": "herald-e2e", "auth_time": now, "user_id": uid, "sub": uid,
        "iat": now, "exp": now + 3600, "email": "driver@example.com", "email_verified": True,
        "firebase": {"identities": {"apple.com": ["001234.abcd"]}, "sign_in_provider": "apple.com"},
    }
    claims.update(custom)
    return claims


def test_firebase_id_tokens_with_and_without_a_custom_role_claim(firebase_server, provider):
    provider.add_key("fb-rsa", kind="rsa")
    uid = "kJ3nWqL0aXYZ1234567890abcdE2"
    plain = me(firebase_server, provider.sign("fb-rsa", firebase_claims(uid)))
    assert plain.status_code == 200, plain.text
    assert plain.json()["data"] == {**plain.json()["data"], "id": uid, "role": "customer"}
    driver = me(firebase_server, provider.sign("fb-rsa", firebase_claims("driver-uid-1", role="driver")))
    assert driver.status_code == 200, driver.text
    assert driver.json()["data"]["role"] == "driver"
    # Another project's token is refused.
    other = provider.sign("fb-rsa", firebase_claims(uid, aud="someone-elses-project"))
    assert_error(me(firebase_server, other), 401, "UNAUTHORIZED")


@pytest.fixture(scope="module")
def auth0_server(module_herald, provider, tmp_path_factory):
    return start_trusting(module_herald, provider, tmp_path_factory, "auth0", f"""\
  issuer: https://herald-e2e.eu.auth0.com/
  audience: https://api.herald.example.com
  role_claim: "{AUTH0_ROLES}"
  role_map:
    Driver: driver
    Dispatcher: operator
  default_role: customer
""")


def auth0_claims(sub, roles=None):
    now = int(time.time())
    claims = {
        "iss": "https://herald-e2e.eu.auth0.com/", "sub": sub,
        "aud": ["https://api.herald.example.com", "https://herald-e2e.eu.auth0.com/userinfo"],
        "iat": now, "exp": now + 86400, "scope": "openid profile email", "azp": "AbCdEf123",
    }
    if roles is not None:
        claims[AUTH0_ROLES] = roles
    return claims


def test_auth0_access_tokens_with_namespaced_role_lists(auth0_server, provider):
    provider.add_key("a0-rsa", kind="rsa")
    dispatcher = me(auth0_server, provider.sign("a0-rsa", auth0_claims("auth0|64f0c0ffee", ["Beta tester", "Dispatcher"])))
    assert dispatcher.status_code == 200, dispatcher.text
    assert dispatcher.json()["data"]["id"] == "auth0|64f0c0ffee"
    assert dispatcher.json()["data"]["role"] == "operator"
    driver = me(auth0_server, provider.sign("a0-rsa", auth0_claims("apple|000123.abc", ["Driver"])))
    assert driver.json()["data"]["role"] == "driver"
    nobody = me(auth0_server, provider.sign("a0-rsa", auth0_claims("google-oauth2|1234", [])))
    assert nobody.json()["data"]["role"] == "customer"


def test_a_jwks_url_in_the_clear_to_another_host_is_a_configuration_error(herald, tmp_path):
    config = tmp_path / "herald.yaml"
    config.write_text("auth:\n  jwks_url: http://idp.example.com/jwks.json\n")
    server = herald.start("--config", str(config), wait=False)
    with pytest.raises(AssertionError, match="auth.jwks_url"):
        server.wait_listening()
    assert server.proc.returncode != 0
