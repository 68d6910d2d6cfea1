"""The on-site price adjustment end to end with python-socketio clients as the
driver and the customer: a higher volume reaches the customer as a `VOLUME_ADJUSTMENT` push
(with its actions) on their iPhone and as `volume:proposed` on their socket; approval reaches
the driver as `volume:approved` and raises the hold; a decline ends the job with the trip fee;
a lower volume is approved without asking. Once on one SQLite node, once on two PostgreSQL
nodes (sockets on one node, REST calls on the other)."""

from __future__ import annotations

import secrets

from conftest import WAIT, wait_until
from test_dispatch import SITE, Client, deployment, make_driver  # noqa: F401  (deployment is a fixture)


class AdjustmentClient(Client):
    EVENTS = Client.EVENTS + ("volume:proposed", "volume:approved", "volume:declined")


def arrive(d, customer_token: str, driver_token: str) -> str:
    booked = d.front.request("POST", "/api/v1/jobs", customer_token, json={
        "address": "9 Mission St", "lat": SITE[0], "lng": SITE[1], "volume_estimate": 4, "items": [{"category": "furniture", "quantity": 1}]})
    assert booked.status_code == 201, booked.text
    job_id = booked.json()["data"]["id"]
    assert d.front.request("POST", f"/api/v1/drivers/jobs/{job_id}/accept", driver_token).status_code == 200
    for step in ("en_route", "arrived"):
        moved = d.front.request("POST", f"/api/v1/drivers/jobs/{job_id}/status", driver_token, json={"status": step})
        assert moved.status_code == 200, moved.text
    return job_id


def test_price_adjustment_between_a_driver_and_a_customer(deployment):
    d = deployment
    tag = secrets.token_hex(3)
    operator = d.token(f"ops-{tag}", "operator")
    driver, customer = f"drv-{tag}", f"cust-{tag}"
    driver_token = make_driver(d, driver, 3, operator)
    customer_token = d.token(customer)
    device = d.front.request("POST", "/api/v1/push/register", customer_token,
                             json={"token": secrets.token_hex(32), "provider": "apns", "platform": "ios"})
    assert device.status_code == 201, device.text
    device_id = device.json()["data"]["id"]
    clients = {driver: AdjustmentClient(d.sockets, driver_token), customer: AdjustmentClient(d.sockets, customer_token)}
    try:
        # 1. More than booked: the customer is asked, on the lock screen and on the socket.
        job_ids = []
        job_id = arrive(d, customer_token, driver_token)
        job_ids.append(job_id)
        booked_price = d.front.get(f"/api/v1/jobs/{job_id}", token=customer_token).json()["data"]["price"]["amount_minor"]
        proposed = d.front.request("POST", f"/api/v1/drivers/jobs/{job_id}/volume", driver_token, json={"actual_volume": 6.5})
        assert proposed.status_code == 201, proposed.text
        adjustment = proposed.json()["data"]["adjustment"]
        new_price = adjustment["new_price_minor"]
        assert adjustment["status"] == "pending" and new_price >= booked_price + 2.5 * 3500, adjustment
        asked = clients[customer].next("volume:proposed", where=lambda p: p["job_id"] == job_id)
        assert asked["new_price_minor"] == new_price and asked["actual_volume"] == 6.5 and asked["deadline_at"], asked
        told = clients[driver].next("volume:proposed", where=lambda p: p["job_id"] == job_id)
        assert told["new_price"] == new_price / 100 and told["status"] == "pending", told
        # The push for the customer's iPhone, even though their app holds a socket.
        pushes = wait_until(lambda: [p for p in d.pushes() if p["user_id"] == customer and p["category"] == "VOLUME_ADJUSTMENT"],
                            WAIT, message="the VOLUME_ADJUSTMENT push")
        push = pushes[0]
        assert push["device_id"] == device_id and push["provider"] == "apns", push
        dollars = f"${new_price // 100}.{new_price % 100:02d}"
        assert push["body"] == f"Volume increased to 6.5 cu yd. New price: {dollars}", push
        assert push["interruption_level"] == "time-sensitive", push
        assert push["data"]["actions"] == ["APPROVE_VOLUME", "DECLINE_VOLUME"] and push["data"]["job_id"] == job_id, push
        aps = push["request"]["payload"]["aps"]
        assert aps["category"] == "VOLUME_ADJUSTMENT" and aps["interruption-level"] == "time-sensitive", aps

        # The customer approves (twice: the lock screen's button and the app); the driver hears it once decided.
        for _ in range(2):
            approved = d.front.request("POST", f"/api/v1/jobs/{job_id}/volume/approve", customer_token)
            assert approved.status_code == 200 and approved.json()["data"]["adjustment"]["status"] == "approved", approved.text
        yes = clients[driver].next("volume:approved", where=lambda p: p["job_id"] == job_id)
        assert yes["new_price_minor"] == new_price and yes["automatic"] is False, yes
        view = d.front.get(f"/api/v1/jobs/{job_id}", token=customer_token).json()["data"]
        assert view["price"]["amount_minor"] == new_price and view["payment"]["amount_minor"] == new_price, view
        assert view["payment"]["status"] == "authorized", view
        for step in ("started", "completed"):
            assert d.front.request("POST", f"/api/v1/drivers/jobs/{job_id}/status", driver_token, json={"status": step}).status_code == 200
        paid = d.front.get(f"/api/v1/operators/jobs/{job_id}/payment", token=operator).json()["data"]
        assert paid["payment"]["status"] == "captured" and paid["payment"]["captured_minor"] == new_price, paid
        assert [e["operation"] for e in paid["events"]] and all(e["outcome"] == "ok" for e in paid["events"]), paid

        # 2. A decline: the job ends, the driver is paid the trip fee from the hold.
        job_id = arrive(d, customer_token, driver_token)
        job_ids.append(job_id)
        assert d.front.request("POST", f"/api/v1/drivers/jobs/{job_id}/volume", driver_token, json={"actual_volume": "8"}).status_code == 201
        clients[customer].next("volume:proposed", where=lambda p: p["job_id"] == job_id)
        declined = d.front.request("POST", f"/api/v1/jobs/{job_id}/volume/decline", customer_token)
        assert declined.status_code == 200, declined.text
        no = clients[driver].next("volume:declined", where=lambda p: p["job_id"] == job_id)
        assert no == {"job_id": job_id, "trip_fee": 50.0, "trip_fee_minor": 5000, "currency": "USD", "proceed_at_original_price": False}, no
        gone = clients[customer].next("job:status", where=lambda p: p["job_id"] == job_id and p["status"] == "cancelled")
        assert gone["previous_status"] == "arrived", gone
        view = d.front.get(f"/api/v1/jobs/{job_id}", token=customer_token).json()["data"]
        assert view["status"] == "cancelled" and view["payment"]["captured_minor"] == 5000 and view["payment"]["status"] == "captured", view
        late = d.front.request("POST", f"/api/v1/jobs/{job_id}/volume/approve", customer_token)
        assert late.status_code == 409 and late.json()["error"]["code"] == "ADJUSTMENT_ALREADY_DECIDED", late.text

        # 3. Less than booked: approved at once, nobody is asked.
        job_id = arrive(d, customer_token, driver_token)
        job_ids.append(job_id)
        lowered = d.front.request("POST", f"/api/v1/drivers/jobs/{job_id}/volume", driver_token, json={"actual_volume": 2})
        assert lowered.status_code == 201 and lowered.json()["data"]["adjustment"]["automatic"] is True, lowered.text
        fine = clients[driver].next("volume:approved", where=lambda p: p["job_id"] == job_id)
        assert fine["automatic"] is True and fine["new_price_minor"] < booked_price, fine
        view = d.front.get(f"/api/v1/jobs/{job_id}", token=customer_token).json()["data"]
        assert view["payment"]["amount_minor"] == fine["new_price_minor"], view
        clients[customer].nothing("volume:proposed", 0.5)
        # One actionable push per higher proposal (jobs 1 and 2), none for the lower one.
        volume_pushes = [p for p in d.pushes() if p["user_id"] == customer and p["category"] == "VOLUME_ADJUSTMENT"]
        assert sorted(p["data"]["job_id"] for p in volume_pushes) == sorted(job_ids[:2]), volume_pushes
    finally:
        for client in clients.values():
            client.close()
