#!/usr/bin/env python3
"""The dashboard in a real browser (Debian's chromium, headless, driven by selenium).

Run on the fake LAN's phone host by scripts/dashboard-check.sh, against `matter-sim home
--dashboard` on the home host: commission a node with homectl and see the page show it
commissioned; toggle it with homectl and see the page change; press the page's button and
see `homectl watch` report it; pull the LAN from the page and see the route go red. Also: the
QR code decodes (zbarimg) to the device's payload, the traffic log shows the commissioning and
the invoke, and the page refuses a request without its token, from another origin or naming
another host. Prints PASS/FAIL lines with figures and saves screenshots.

Every browser step finds its element afresh by key (the device's data-serial, a data-key,
data-route or data-fault) at the moment it reads or clicks, and reads in the page's own
JavaScript: the page patches its elements as the home changes, and no step holds one across
a change.
"""
import argparse
import json
import os
import queue
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By

FOLLOW_S = 1.0  # "see the page change within 1 s"

results = []


def record(name, ok, **figures):
    results.append(ok)
    detail = " ".join(f"{k}={json.dumps(v) if not isinstance(v, str) else v}" for k, v in figures.items())
    print(f"{'PASS' if ok else 'FAIL'} {name}" + (f" ({detail})" if detail else ""), flush=True)
    return ok


def wait_until(predicate, limit):
    """Seconds until predicate() held (checked every 20 ms), or None within limit."""
    start = time.monotonic()
    while time.monotonic() - start < limit:
        try:
            if predicate():
                return time.monotonic() - start
        except Exception:
            pass
        time.sleep(0.02)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the dashboard URL matter-sim printed (with its token)")
    parser.add_argument("--homectl", required=True)
    parser.add_argument("--database", required=True)
    parser.add_argument("--trust", required=True)
    parser.add_argument("--device", default="Floor Lamp", help="the device to commission and drive")
    parser.add_argument("--screenshots", required=True)
    args = parser.parse_args()
    os.makedirs(args.screenshots, exist_ok=True)
    base = args.url.split("?")[0].rstrip("/")
    token = args.url.split("token=")[1] if "token=" in args.url else None

    def status(path, method="GET", **headers):
        try:
            return urllib.request.urlopen(urllib.request.Request(base + path, method=method, headers=headers), timeout=5).status
        except urllib.error.HTTPError as error:
            return error.code

    # The token, the Host and the Origin: another web page in the same browser is refused.
    record("without the token the dashboard refuses", status("/api/home") == 401, status=status("/api/home"))
    home = json.load(urllib.request.urlopen(f"{base}/api/home?token={token}", timeout=10))
    device = next(d for d in home["devices"] if d["name"] == args.device)
    serial = device["serial"]
    rebound = status(f"/api/home?token={token}", Host="rebound.example:" + base.rsplit(":", 1)[1])
    record("a request naming another host (DNS rebinding) is refused", rebound == 403, status=rebound)
    foreign = status(f"/api/devices/{serial}/lan-down", method="POST", Origin="http://evil.example",
                     Authorization=f"Bearer {token}")
    lan = json.load(urllib.request.urlopen(f"{base}/api/home?token={token}", timeout=10))
    lan = next(d for d in lan["devices"] if d["serial"] == serial)["node"]["route"]["lan"]
    record("a button pressed from another origin is refused and changes nothing", foreign == 403 and lan, status=foreign, lanUp=lan)

    options = Options()
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1500,1000",
                 "--no-first-run", "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-default-apps", "--metrics-recording-only", "--no-pings"):
        options.add_argument(flag)
    options.binary_location = "/usr/bin/chromium"
    browser = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    try:
        browser.get(args.url)
        took = wait_until(lambda: browser.find_element(By.ID, "connection").text == "live"
                          and len(browser.find_elements(By.CSS_SELECTOR, ".device")) == len(home["devices"]), 15)
        rooms = [e.text for e in browser.find_elements(By.CSS_SELECTOR, ".room > h3")]
        record("the page shows the home: structures, rooms, devices, live", took is not None,
               devices=len(browser.find_elements(By.CSS_SELECTOR, ".device")), rooms=rooms, loadS=round(took or -1, 2))
        card = f'.device[data-serial="{serial}"]'

        def read(selector, attribute=None):
            """What the page shows now at selector (its text, or an attribute), read in one go."""
            return browser.execute_script(
                "const e = document.querySelector(arguments[0]);"
                "return e === null ? null : arguments[1] === null ? e.textContent : e.getAttribute(arguments[1]);",
                selector, attribute)

        def click(selector):
            """Clicks what selector finds now; found again if the page changed it in between."""
            for _ in range(20):
                try:
                    browser.find_element(By.CSS_SELECTOR, selector).click()
                    return
                except StaleElementReferenceException:
                    time.sleep(0.05)
            raise RuntimeError(f"{selector}: stale on every try")

        # The QR code, as the browser draws it, decodes to the device's payload.
        click(card)
        wait_until(lambda: browser.find_element(By.ID, "qr").get_attribute("complete") == "true"
                   and browser.execute_script("return document.getElementById('qr').naturalWidth") > 0, 5)
        qr_png = os.path.join(args.screenshots, "qr.png")
        browser.find_element(By.ID, "qr").screenshot(qr_png)
        decoded = subprocess.run(["zbarimg", "--raw", "-q", qr_png], capture_output=True, text=True).stdout.strip()
        record("the pairing QR code decodes to the device's MT: payload", decoded == device["qrPayload"],
               decoded=decoded, payload=device["qrPayload"], manual=device["manualCode"])

        # Commission from homectl: the card says commissioned.
        started = time.monotonic()
        done = subprocess.run([args.homectl, "commission", "--code", device["manualCode"].replace("-", ""),
                               "--home", args.database, "--paa-trust-store", args.trust, "--name", args.device,
                               "--timeout", "30"], capture_output=True, text=True, timeout=120)
        commissioned_s = time.monotonic() - started
        if done.returncode != 0:
            print(done.stdout[-2000:], done.stderr[-3000:], file=sys.stderr)
        seen = wait_until(lambda: read(f"{card} [data-commissioned]", "data-commissioned") == "yes", FOLLOW_S)
        record("homectl commissions the node and the page shows it commissioned", done.returncode == 0 and seen is not None,
               homectlExit=done.returncode, commissionS=round(commissioned_s, 2), pageAfterS=round(seen if seen is not None else -1, 3))
        browser.save_screenshot(os.path.join(args.screenshots, "dashboard-commissioned.png"))

        def onoff():
            return read(f'{card} [data-key="1/OnOff.OnOff"] b')

        # Toggle from homectl: the page's state follows within a second.
        before = onoff()
        done = subprocess.run([args.homectl, "toggle", args.device, "--home", args.database], capture_output=True, text=True,
                              timeout=60)
        seen = wait_until(lambda: onoff() != before, FOLLOW_S)
        record("homectl toggle: the page changes within 1 s", done.returncode == 0 and seen is not None,
               before=before, after=onoff(), pageAfterS=round(seen if seen is not None else -1, 3))
        # The toggle's datagrams (CASE handshake, invoke, acks) show in the next second's figure.
        rates = []
        wait_until(lambda: rates.append(float(read("#fig-rate") or 0)) or max(rates) > 0, 2.5)
        record("the header's messages per second counts that traffic", max(rates, default=0) > 0, maxRate=max(rates, default=0))

        # The page's button: `homectl watch` reports the change.
        watch = subprocess.Popen([args.homectl, "watch", "--home", args.database, "--json"], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, text=True)
        lines = queue.Queue()
        threading.Thread(target=lambda: [lines.put(l) for l in watch.stdout], daemon=True).start()
        try:
            # Let the watch subscribe first: it prints the devices' state when it starts.
            wait_until(lambda: not lines.empty(), 15)
            time.sleep(2)
            while not lines.empty():
                lines.get()
            before = onoff()
            clicked = time.monotonic()
            click(f'{card} button[data-act="button"]')
            reported, seen_line = None, None
            while time.monotonic() - clicked < 10:
                try:
                    line = lines.get(timeout=0.2)
                except queue.Empty:
                    continue
                try:
                    change = json.loads(line)
                except ValueError:
                    continue
                # The page says "on"/"off" as homectl does.
                if change.get("name") == args.device and change.get("state", {}).get("onOff") not in (None, before):
                    reported, seen_line = time.monotonic() - clicked, json.dumps(change.get("state"))
                    break
            record("the page's button: homectl watch reports the change", reported is not None,
                   before=before, watchAfterS=round(reported if reported is not None else -1, 3), watchState=seen_line or "")
        finally:
            watch.terminate()
            watch.wait(timeout=10)

        # Pull the LAN from the page: its route goes red.
        click(f'{card} button[data-fault="lan-down"]')
        lan_route = f'{card} [data-route="lan"]'
        seen = wait_until(lambda: "down" in read(lan_route, "class").split(), FOLLOW_S)
        colour = browser.execute_script("return getComputedStyle(document.querySelector(arguments[0])).backgroundColor", lan_route)
        browser.save_screenshot(os.path.join(args.screenshots, "dashboard-lan-down.png"))
        record("pull LAN on the page: the route goes red", seen is not None and colour.startswith(("rgb(217, 48, 37", "rgba(217, 48, 37")),
               pageAfterS=round(seen if seen is not None else -1, 3), colour=colour)
        done = subprocess.run([args.homectl, "toggle", args.device, "--home", args.database, "--timeout", "3", "--no-dnssd"],
                              capture_output=True, text=True, timeout=60)
        record("with the LAN pulled homectl cannot reach it", done.returncode != 0, homectlExit=done.returncode)
        click(f'{card} button[data-fault="lan-up"]')
        seen = wait_until(lambda: "up" in read(lan_route, "class").split(), FOLLOW_S)
        record("plug LAN: the route is green again", seen is not None, pageAfterS=round(seen if seen is not None else -1, 3))

        # The detail panel: fabrics, sessions, subscriptions, and the traffic log.
        click(card)
        log = browser.execute_script("return document.getElementById('log').innerText")
        wanted = ["PBKDFParamRequest", "invoke 0/GeneralCommissioning.ArmFailSafe", "CASE session", "invoke 1/OnOff.Toggle"]
        record("the traffic log shows the commissioning, the sessions and the invokes", all(w in log for w in wanted),
               missing=[w for w in wanted if w not in log], lines=len(log.splitlines()))
        figures = {i: read("#" + i) for i in ("fig-nodes", "fig-commissioned", "fig-sessions", "fig-subscriptions", "fig-rate")}
        record("fleet figures", figures["fig-nodes"] == str(len(home["devices"])) and figures["fig-commissioned"] == "1", **figures)
        browser.save_screenshot(os.path.join(args.screenshots, "dashboard-detail.png"))
        errors = [e for e in browser.get_log("browser") if e.get("level") == "SEVERE"]
        record("no error in the browser's console", not errors, errors=[e.get("message", "")[:200] for e in errors[:5]])
    finally:
        browser.quit()
    failed = results.count(False)
    print(f"dashboard: {results.count(True)} passed, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
