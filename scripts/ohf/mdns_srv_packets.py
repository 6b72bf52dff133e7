#!/usr/bin/env python3
"""mdns_srv_packets.py: the SRV records of each mDNS response in a capture (issue #43).

connectedhomeip's minimal mDNS resolver (Home Assistant's Matter server, chip-tool) reads at
most two SRV records of a packet (CHIP_CONFIG_MINMDNS_MAX_PARALLEL_RESOLVES); a node whose SRV
comes third is not found from that packet. This lists the responses that carry SRV records,
one line each (time, sender, SRV instance names, "/goodbye" for TTL 0), and ends with how many
carried three or more. Reads a classic pcap of Ethernet frames, as `OHF_CAPTURE=1
scripts/ohf-check.sh --keep DIR` leaves in DIR/mdns.pcap; packets it cannot parse are counted
and skipped.

    scripts/ohf/mdns_srv_packets.py PCAP [--from EPOCH] [--to EPOCH] [--crowded-only]
"""
import argparse
import datetime
import struct
import sys

SRV = 33


def read_name(data, offset):
    """The name at offset (following compression pointers) and the offset after it."""
    labels, end, hops = [], None, 0
    while True:
        length = data[offset]
        if length & 0xC0 == 0xC0:
            if end is None:
                end = offset + 2
            offset = ((length & 0x3F) << 8) | data[offset + 1]
            hops += 1
            if hops > 64:
                raise ValueError("compression loop")
            continue
        if length == 0:
            return ".".join(labels), (end if end is not None else offset + 1)
        labels.append(data[offset + 1:offset + 1 + length].decode("utf-8", "replace"))
        offset += 1 + length


def srv_records(message):
    """(is a response, [(instance, ttl)]) of one DNS message."""
    _, flags, questions, *counts = struct.unpack(">HHHHHH", message[:12])
    offset = 12
    for _ in range(questions):
        _, offset = read_name(message, offset)
        offset += 4
    found = []
    for _ in range(sum(counts)):
        name, offset = read_name(message, offset)
        rtype, _, ttl, length = struct.unpack(">HHIH", message[offset:offset + 10])
        offset += 10 + length
        if rtype == SRV:
            found.append((name.split(".")[0], ttl))
    return bool(flags & 0x8000), found


def udp_payload(frame):
    """(source address in hex, UDP datagram) of an Ethernet frame, or None."""
    ethertype = struct.unpack(">H", frame[12:14])[0]
    ip = frame[14:]
    if ethertype == 0x86DD and ip[6] == 17:
        return ip[8:24].hex(), ip[40:]
    if ethertype == 0x0800 and ip[9] == 17:
        header = (ip[0] & 0x0F) * 4
        return ip[12:16].hex(), ip[header:]
    return None


def packets(path):
    """(time, frame) of each packet of a classic pcap file."""
    data = open(path, "rb").read()
    magic = struct.unpack("<I", data[:4])[0]
    if magic not in (0xA1B2C3D4, 0xA1B23C4D):
        raise SystemExit(f"{path}: not a little-endian classic pcap (magic {magic:#x})")
    scale = 1e9 if magic == 0xA1B23C4D else 1e6
    offset = 24
    while offset + 16 <= len(data):
        seconds, fraction, captured, _ = struct.unpack("<IIII", data[offset:offset + 16])
        offset += 16
        yield seconds + fraction / scale, data[offset:offset + captured]
        offset += captured


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("pcap")
    parser.add_argument("--from", dest="start", type=float, default=0, help="only packets from this time (epoch seconds)")
    parser.add_argument("--to", dest="end", type=float, default=float("inf"), help="only packets up to this time")
    parser.add_argument("--crowded-only", action="store_true", help="list only responses with three or more SRV records")
    args = parser.parse_args()
    responses = crowded = damaged = 0
    for at, frame in packets(args.pcap):
        if not args.start <= at <= args.end:
            continue
        try:
            parsed = udp_payload(frame)
            if parsed is None:
                continue
            source, udp = parsed
            is_response, srvs = srv_records(udp[8:])
        except (IndexError, ValueError, struct.error):
            damaged += 1
            continue
        if not is_response or not srvs:
            continue
        responses += 1
        crowded += len(srvs) >= 3
        if args.crowded_only and len(srvs) < 3:
            continue
        when = datetime.datetime.fromtimestamp(at, datetime.timezone.utc).strftime("%H:%M:%S.%f")[:-3]
        names = " ".join(f"{name}{'/goodbye' if ttl == 0 else ''}" for name, ttl in srvs)
        print(f"{when} from …{source[-6:]} {len(srvs)} SRV: {names}")
    print(f"mdns: {responses} responses with SRV records, {crowded} with three or more"
          f"{f', {damaged} packets not parsed' if damaged else ''}")


if __name__ == "__main__":
    sys.exit(main())
