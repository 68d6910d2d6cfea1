"""The operations console (`/console`) in headless Chromium against the real binary: a customer's
token is refused; with an operator's, the page follows a real flow as it happens, over the
native realtime protocol (no reload): a job booked, offered in its round and claimed by a
driver; a ride accepted and the driver moving; the deliveries the offers made; connections per
node; the push queue. Screenshots go to .cache/test-artifacts/console (git-ignored)."""

from __future__ import annotations

import json
import secrets
import time
from pathlib import Path

import pytest

from browser_support import TIMEOUT, browser, page_state  # noqa: F401 (fixtures)
from conftest import issue_token, wait_until

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / ".cache" / "test-artifacts" / "console"
SITE = (37.7749, -122.4194)
DROPOFF = {"latitude": 37.8044, "longitude": -122.2712, "address": "456 Broadway, Oakland", "place_id": "pl_def456"}
PICKUP = {"latitude": SITE[0], "longitude": SITE[1], "address": "123 Market St, San Francisco", "place_id": "pl_abc123"}


@pytest.fixture(scope="module")
def server(module_herald, tmp_path_factory):
    config = tmp_path_factory.mktemp("console") / "herald.json"
    config.write_text(json.dumps({
        "push": {"poll_interval_ms": 100},
        "dispatch": {"radius_km": 30, "index_sync_interval_ms": 200},
        "trips": {"location": {"active_per_second": 50, "burst": 5}},
        "rate_limits": {"authenticated": {"limit": 100000, "window_seconds": 60}},
    }))
    return module_herald.start("--config", str(config))


def shot(browser, name: str) -> Path:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    browser.save_screenshot(str(path))
    assert path.stat().st_size > 10_000, f"{path} looks empty"
    return path


def rows(browser, table: str) -> dict[str, list[str]]:
    """The rows of a console table by their data-id: each row's cells as shown."""
    return browser.execute_script(
        f"return Object.fromEntries([...document.querySelectorAll('#{table} tr')].map("
        "(tr) => [tr.dataset.id || tr.cells[0].textContent, [...tr.cells].map((td) => td.textContent)]));")


def sign_in(browser, server, token: str) -> None:
    browser.set_window_size(1400, 1300)
    browser.get(server.url + "/console")
    browser.execute_script("sessionStorage.clear();")
    browser.get(server.url + "/console")
    browser.find_element("id", "token").send_keys(token)
    browser.find_element("css selector", "#signin button").click()


def test_a_customer_token_does_not_open_the_console(server, browser):
    sign_in(browser, server, issue_token(server.data_dir, user=f"nosy-{secrets.token_hex(3)}"))
    wait_until(lambda: page_state(browser, "document.getElementById('signin-error').hidden") is False, TIMEOUT,
               message="the refusal shown")
    assert page_state(browser, "document.getElementById('signin-error').textContent") == "This token is not an operator's."
    assert page_state(browser, "document.getElementById('board').hidden") is True
    shot(browser, "01-refused")


def test_the_console_follows_a_job_and_a_trip_as_they_happen(server, browser):
    tag = secrets.token_hex(3)
    operator = issue_token(server.data_dir, user=f"ops-{tag}", role="operator")
    sign_in(browser, server, operator)
    wait_until(lambda: page_state(browser, "document.getElementById('status').textContent") == "live", TIMEOUT,
               message="the console live on the realtime channel")
    first = page_state(browser, "window.heraldConsole.updates")
    wait_until(lambda: page_state(browser, "window.heraldConsole.updates") > first, TIMEOUT, message="a pushed update")
    shot(browser, "02-empty")

    # Dispatch: a driver online near the site, a job booked there: offered in round 1.
    truck, customer = f"truck-{tag}", f"cust-{tag}"
    truck_token = issue_token(server.data_dir, user=truck, role="driver")
    assert server.put("/api/v1/drivers/me", truck_token, json={"name": "Sam", "truck_type": "box_truck"}).status_code == 201
    assert server.request("POST", f"/api/v1/operators/drivers/{truck}/approval", operator, json={"status": "approved"}).status_code == 200
    assert server.request("POST", "/api/v1/drivers/online", truck_token, json={"online": True}).status_code == 200
    moved = server.request("POST", "/api/v1/drivers/location", truck_token,
                           json={"lat": SITE[0] + 3 / 111.2, "lng": SITE[1], "accuracy": 8, "sequence": 1})
    assert moved.status_code == 200, moved.text
    # The driver's app is closed: its offer goes as a push (to the log sender: no APNs here).
    registered = server.request("POST", "/api/v1/push/register", truck_token,
                                json={"token": secrets.token_hex(32), "provider": "apns", "platform": "ios"})
    assert registered.status_code == 201, registered.text
    # The position reached the database (written behind, every 200 ms) once the console draws
    # the driver: booking before that could find nobody on a loaded machine.
    wait_until(lambda: any(p["kind"] == "driver" and p["id"] == truck for p in page_state(browser, "window.heraldConsole.drawn")),
               TIMEOUT, message="the driver drawn on the console")
    booked = server.request("POST", "/api/v1/jobs", issue_token(server.data_dir, user=customer), json={
        "address": "1 Market St, San Francisco", "lat": SITE[0], "lng": SITE[1], "volume_estimate": 2,
        "items": [{"category": "furniture", "quantity": 1}]})
    assert booked.status_code == 201, booked.text
    job = booked.json()["data"]["id"]
    wait_until(lambda: (rows(browser, "jobs").get(job) or [None])[1:4] == ["pending", "1", "1"], TIMEOUT,
               message="the job shown pending in round 1, offered to one driver")
    assert any(p["kind"] == "driver" and p["id"] == truck for p in page_state(browser, "window.heraldConsole.drawn"))
    assert any(p["kind"] == "job" and p["id"] == job for p in page_state(browser, "window.heraldConsole.drawn"))
    shot(browser, "03-job-offered")
    claimed = server.request("POST", f"/api/v1/drivers/jobs/{job}/accept", truck_token)
    assert claimed.status_code == 200, claimed.text
    wait_until(lambda: (rows(browser, "jobs").get(job) or [None])[1::3] == ["accepted", truck], TIMEOUT,
               message="the job shown claimed by the driver")

    # The offer's push: its delivery is counted by channel, provider and status.
    wait_until(lambda: any(row[:3] == ["push", "apns", "sent"] for row in rows(browser, "deliveries").values()), TIMEOUT,
               message="the offer's push shown sent")
    assert page_state(browser, "document.getElementById('queue-depth').textContent").isdigit()
    nodes = rows(browser, "nodes")
    assert len(nodes) == 1 and int(next(iter(nodes.values()))[1]) >= 1, nodes  # the console's own connection at least

    # Trips: a ride accepted, then the driver moves; the console shows the last position.
    sedan, rider = f"sedan-{tag}", f"rider-{tag}"
    sedan_token = issue_token(server.data_dir, user=sedan, role="driver")
    assert server.put("/api/v1/drivers/me", sedan_token, json={"name": "Alex", "truck_type": "sedan"}).status_code == 201
    assert server.request("POST", f"/api/v1/operators/drivers/{sedan}/approval", operator, json={"status": "approved"}).status_code == 200
    assert server.request("POST", "/api/v1/drivers/online", sedan_token, json={"online": True}).status_code == 200
    assert server.put("/api/v1/drivers/me/vehicle", sedan_token, json={
        "make": "Toyota", "model": "Camry", "color": "Silver", "license_plate": "ABC123", "capacity": 4}).status_code == 200
    latitude = SITE[0] + 600 / 111_200
    assert server.request("POST", "/api/v1/drivers/location", sedan_token, json={
        "latitude": latitude, "longitude": SITE[1], "accuracy_meters": 5, "sequence": 1}).status_code == 200
    wait_until(lambda: any(p["kind"] == "driver" and p["id"] == sedan for p in page_state(browser, "window.heraldConsole.drawn")),
               TIMEOUT, message="the sedan drawn on the console")
    request = server.request("POST", "/api/v1/ride-requests", issue_token(server.data_dir, user=rider),
                             headers={"Idempotency-Key": secrets.token_hex(8)},
                             json={"pickup": PICKUP, "dropoff": DROPOFF, "ride_type": "STANDARD", "passenger_count": 1})
    assert request.status_code == 201, request.text
    accepted = server.request("POST", f"/api/v1/drivers/ride-requests/{request.json()['data']['request_id']}/accept", sedan_token)
    assert accepted.status_code == 200, accepted.text
    trip = accepted.json()["data"]["trip_id"]
    wait_until(lambda: (rows(browser, "trips").get(trip) or [None])[1:3] == ["ACCEPTED", sedan], TIMEOUT, message="the trip shown")
    for sequence in range(2, 6):
        latitude -= 50 / 111_200
        moved = server.request("POST", "/api/v1/drivers/location", sedan_token, json={
            "latitude": latitude, "longitude": SITE[1], "accuracy_meters": 5, "sequence": sequence})
        assert moved.status_code == 200, moved.text
        time.sleep(0.15)

    def driver_drawn_at_last_position():
        points = [p for p in page_state(browser, "window.heraldConsole.drawn") if p["kind"] == "trip" and p["id"] == trip]
        return points and abs(points[0]["lat"] - latitude) < 1e-7

    wait_until(driver_drawn_at_last_position, TIMEOUT, message="the trip's driver drawn at the last position")
    assert rows(browser, "trips")[trip][3].endswith("s ago")
    shot(browser, "04-job-claimed-trip-moving")
