"""Tokens from an external identity provider: RS256 and ES256 verified through a JWKS file,
with issuer and audience checks, and the classic JWT attacks refused."""

import base64
import hashlib
import hmac
import json
import time

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from conftest import assert_error, issue_token

ISSUER = "https://issuer.e2e.example/"
AUDIENCE = "herald-e2e"
OCT_SECRET = b"a-symmetric-key-that-must-be-ignored-by-herald!!"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


class Keys:
    def __init__(self):
        self.rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.ec = ec.generate_private_key(ec.SECP256R1())
        self.unknown_rsa = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.rsa_public_pem = self.rsa.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)

    def jwks(self) -> dict:
        rsa_jwk = jwt.algorithms.RSAAlgorithm.to_jwk(self.rsa.public_key(), as_dict=True)
        rsa_jwk.update(kid="rsa-1", use="sig", alg="RS256")
        ec_jwk = jwt.algorithms.ECAlgorithm.to_jwk(self.ec.public_key(), as_dict=True)
        ec_jwk.update(kid="ec-1", use="sig", alg="ES256")
        # A symmetric key in the JWKS must never be used: it would let anyone who can read
        # the (public) JWKS forge tokens.
        oct_jwk = {"kty": "oct", "kid": "oct-1", "alg": "HS256", "use": "sig", "k": b64url(OCT_SECRET)}
        return {"keys": [rsa_jwk, ec_jwk, oct_jwk]}


@pytest.fixture(scope="module")
def keys() -> Keys:
    return Keys()


@pytest.fixture(scope="module")
def idp_server(module_herald, keys, tmp_path_factory):
    jwks_path = tmp_path_factory.mktemp("jwks") / "jwks.json"
    jwks_path.write_text(json.dumps(keys.jwks()))
    env = {"HERALD_JWKS_FILE": str(jwks_path), "HERALD_JWT_ISSUER": ISSUER, "HERALD_JWT_AUDIENCE": AUDIENCE}
    server = module_herald.start(env=env)
    server.env = env
    return server


def claims(sub="idp-user-1", role="customer", **overrides):
    now = int(time.time())
    values = {"sub": sub, "role": role, "iat": now, "exp": now + 600, "iss": ISSUER, "aud": AUDIENCE}
    values.update(overrides)
    return {k: v for k, v in values.items() if v is not None}


def rs256(keys, payload, kid="rsa-1", key=None):
    return jwt.encode(payload, key or keys.rsa, algorithm="RS256", headers={"kid": kid})


def es256(keys, payload, kid="ec-1"):
    return jwt.encode(payload, keys.ec, algorithm="ES256", headers={"kid": kid})


def handmade(header: dict, payload: dict, sign=None) -> str:
    signing_input = f"{b64url(json.dumps(header).encode())}.{b64url(json.dumps(payload).encode())}"
    signature = b64url(sign(signing_input.encode())) if sign else ""
    return f"{signing_input}.{signature}"


def assert_refused(server, token, reason: str):
    response = server.get("/api/v1/me", token=token)
    error = assert_error(response, 401, "UNAUTHORIZED")
    assert reason in error["message"].lower(), f"refused for another reason than {reason!r}: {error}"
    assert response.headers.get("WWW-Authenticate", "").startswith("Bearer")


def test_rs256_token_is_accepted(idp_server, keys):
    response = idp_server.get("/api/v1/me", token=rs256(keys, claims(sub="rsa-user", role="driver")))
    assert response.status_code == 200, response.text
    assert response.json()["data"]["id"] == "rsa-user"
    assert response.json()["data"]["role"] == "driver"


def test_es256_token_is_accepted(idp_server, keys):
    response = idp_server.get("/api/v1/me", token=es256(keys, claims(sub="ec-user", role="operator")))
    assert response.status_code == 200, response.text
    assert response.json()["data"]["id"] == "ec-user"
    assert response.json()["data"]["role"] == "operator"


def test_audience_list_containing_ours_is_accepted(idp_server, keys):
    token = rs256(keys, claims(sub="aud-list", aud=["other-api", AUDIENCE]))
    response = idp_server.get("/api/v1/me", token=token)
    assert response.status_code == 200, response.text
    assert response.json()["data"]["id"] == "aud-list"


def test_development_token_with_configured_issuer_and_audience(idp_server):
    # `herald token` signs HS256 with the data dir's secret and the configured iss/aud.
    token = issue_token(idp_server.data_dir, user="dev-user", role="service", env=idp_server.env)
    payload = jwt.decode(token, options={"verify_signature": False})
    assert payload["iss"] == ISSUER and payload["aud"] == AUDIENCE
    response = idp_server.get("/api/v1/me", token=token)
    assert response.status_code == 200, response.text
    assert response.json()["data"]["id"] == "dev-user"


def test_expired_token_is_refused(idp_server, keys):
    now = int(time.time())
    assert_refused(idp_server, rs256(keys, claims(iat=now - 7200, exp=now - 3600)), "expired")


def test_wrong_audience_is_refused(idp_server, keys):
    assert_refused(idp_server, rs256(keys, claims(aud="someone-else")), "audience")


def test_missing_audience_is_refused(idp_server, keys):
    assert_refused(idp_server, es256(keys, claims(aud=None)), "audience")


def test_wrong_issuer_is_refused(idp_server, keys):
    assert_refused(idp_server, es256(keys, claims(iss="https://evil.example/")), "issuer")


def test_missing_expiry_is_refused(idp_server, keys):
    assert_refused(idp_server, rs256(keys, claims(exp=None)), "exp")


def test_alg_none_is_refused(idp_server):
    token = handmade({"alg": "none", "typ": "JWT", "kid": "rsa-1"}, claims(sub="none-user"))
    assert_refused(idp_server, token, "not accepted")


def test_hs256_signed_with_the_rsa_public_key_is_refused(idp_server, keys):
    # Algorithm confusion: a verifier that feeds the RSA public key to HMAC would accept this.
    token = handmade({"alg": "HS256", "typ": "JWT", "kid": "rsa-1"}, claims(sub="confused", role="operator"),
                     sign=lambda data: hmac.new(keys.rsa_public_pem, data, hashlib.sha256).digest())
    assert_refused(idp_server, token, "signature")


def test_hs256_signed_with_a_symmetric_jwks_key_is_refused(idp_server):
    token = handmade({"alg": "HS256", "typ": "JWT", "kid": "oct-1"}, claims(sub="oct-user", role="operator"),
                     sign=lambda data: hmac.new(OCT_SECRET, data, hashlib.sha256).digest())
    assert_refused(idp_server, token, "signature")


def test_token_signed_by_an_unknown_key_is_refused(idp_server, keys):
    assert_refused(idp_server, rs256(keys, claims(), kid="rsa-unknown", key=keys.unknown_rsa), "signature")


def test_token_signed_by_another_key_under_a_known_kid_is_refused(idp_server, keys):
    assert_refused(idp_server, rs256(keys, claims(), kid="rsa-1", key=keys.unknown_rsa), "signature")


def test_tampered_payload_is_refused(idp_server, keys):
    header, _, signature = rs256(keys, claims(role="customer")).split(".")
    forged_payload = b64url(json.dumps(claims(role="operator")).encode())
    assert_refused(idp_server, f"{header}.{forged_payload}.{signature}", "signature")


def test_unknown_role_is_refused(idp_server, keys):
    assert_refused(idp_server, rs256(keys, claims(role="admin")), "role")


def test_malformed_tokens_are_refused(idp_server):
    for token in ("not-a-jwt", "a.b.c", "eyJhbGciOiJIUzI1NiJ9.e30"):
        assert_error(idp_server.get("/api/v1/me", token=token), 401, "UNAUTHORIZED")
    response = idp_server.get("/api/v1/me", headers={"Authorization": "Basic dXNlcjpwYXNz"})
    assert_error(response, 401, "UNAUTHORIZED")


def test_a_server_trusting_an_identity_provider_allows_no_page_by_default(idp_server):
    """A JWKS file means a real deployment: without cors.allowed_origins no browser page, not
    even a loopback one (as in development), may call it."""
    preflight = {"Origin": "http://localhost:5173", "Access-Control-Request-Method": "GET",
                 "Access-Control-Request-Headers": "authorization"}
    assert_error(idp_server.request("OPTIONS", "/api/v1/me", headers=preflight), 403, "ORIGIN_NOT_ALLOWED")
