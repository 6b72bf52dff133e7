"""An on/off light made with CircuitMatter (a third-party Python Matter device), for the
HomeAPI interop test. Runs in the current directory (its state file lands there) and
advertises through avahi-publish-service, so it needs a host with an Avahi daemon.
Prints one line per state change ("light on" / "light off") so the test can check the
device itself, not only what the controller reads back."""

import sys
import time

import circuitmatter as cm
from circuitmatter.device_types.lighting import on_off


class Light(on_off.OnOffLight):
    def on(self):
        print("light on", flush=True)

    def off(self):
        print("light off", flush=True)


def main():
    matter = cm.CircuitMatter()
    matter.add_device(Light("light1"))
    print("ready", flush=True)
    while True:
        matter.process_packets()
        time.sleep(0.005)


if __name__ == "__main__":
    sys.exit(main())
