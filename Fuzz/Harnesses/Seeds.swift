// The seed corpus (`matter-fuzz --make-seeds Fuzz/corpus`, checked in): a few real inputs per
// harness, made with the project's own encoders and the shipped files, for the fuzzer to mutate.
import Foundation
import MatterCrypto
import MatterModel
import MatterProtocol
import MatterTLV
import RelayProtocol

enum Seeds {
    static func write(to directory: String) -> Bool {
        let root = URL(fileURLWithPath: directory)
        var written = 0
        func save(_ harness: String, _ name: String, _ bytes: [UInt8]) {
            let dir = root.appendingPathComponent(harness)
            try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
            if (try? Data(bytes).write(to: dir.appendingPathComponent(name))) != nil { written += 1 }
        }
        let onOff = AttributePathIB(endpoint: 1, cluster: ClusterID(0x0006), attribute: AttributeID(0))
        let wildcard = AttributePathIB(endpoint: 1)
        let read = ReadRequestMessage(attributeRequests: [onOff, wildcard])
        let subscribe = SubscribeRequestMessage(minIntervalFloor: 1, maxIntervalCeiling: 60, attributeRequests: [onOff])
        let write = WriteRequestMessage(
            writeRequests: [
                AttributeDataIB(path: AttributePathIB(endpoint: 0, cluster: ClusterID(0x0028), attribute: AttributeID(5)), data: .utf8("Kitchen"))
            ])
        let invoke = InvokeRequestMessage(
            invokeRequests: [
                CommandDataIB(
                    path: CommandPathIB(endpoint: 1, cluster: ClusterID(0x0008), command: CommandID(4)),
                    fields: .structure([TLVElement(tag: .context(0), .unsigned(128)), TLVElement(tag: .context(1), .unsigned(10))]))
            ])
        for (name, bytes) in [("read", read.encoded()), ("invoke", invoke.encoded()), ("write", write.encoded())] {
            save("tlv", name, bytes)
        }
        save("im", "read", [0] + read.encoded())
        save("im", "subscribe", [1] + subscribe.encoded())
        save("im", "write", [2] + write.encoded())
        save("im", "invoke", [3] + invoke.encoded())
        save("im", "timed", [4] + TimedRequestMessage(timeout: 1000).encoded())
        save("im", "status", [6] + StatusResponseMessage(status: .success).encoded())

        let header = MessageHeader(sessionID: 0x1234, messageCounter: 7, sourceNodeID: 0x1122_3344)
        if let headerBytes = try? header.encoded(),
            let protocolMessage = try? ProtocolHeader(
                isInitiator: true, needsAcknowledgement: true, opcode: 0x02, exchangeID: 9, protocolID: .interactionModel
            ).encoded(payload: read.encoded())
        {
            save("message", "header", headerBytes + protocolMessage)
            save("message", "protocol-message", protocolMessage)
            if let sealed = try? Fixtures.peer.seal(header: header, protocolMessage: protocolMessage) { save("message", "sealed", sealed) }
        }

        let random = Array(repeating: UInt8(0x5A), count: 32)
        save("securechannel", "pbkdf-param-request", [0] + PBKDFParamRequest(initiatorRandom: random, initiatorSessionID: 1).encoded())
        save("securechannel", "pake1", [2] + Pake1(pA: [0x04] + Array(repeating: 1, count: 64)).encoded())
        save("securechannel", "pake3", [4] + Pake3(cA: random).encoded())
        save(
            "securechannel", "sigma1",
            [5]
                + Sigma1(
                    initiatorRandom: random, initiatorSessionID: 2, destinationID: random,
                    initiatorEphemeralPublicKey: [0x04] + Array(repeating: 2, count: 64), initiatorSessionParameters: nil
                ).encoded())
        save("securechannel", "status-busy", [9] + StatusReport.busy(retryAfter: .milliseconds(500)).encoded())

        // The published test PAA (DeviceProfiles/credentials), as DER and as Matter TLV.
        let paaDirectory = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("DeviceProfiles/credentials/paa")
        for file in (try? FileManager.default.contentsOfDirectory(atPath: paaDirectory.path)) ?? [] where file.hasSuffix(".pem") {
            guard let pem = try? String(contentsOf: paaDirectory.appendingPathComponent(file), encoding: .utf8) else { continue }
            let base64 = pem.split(separator: "\n").filter { !$0.hasPrefix("-----") }.joined()
            guard let der = Data(base64Encoded: base64) else { continue }
            save("certificate", file + ".der", [1] + [UInt8](der))
            if let certificate = try? MatterCertificate(x509DER: [UInt8](der)) { save("certificate", file + ".tlv", [0] + certificate.tlvEncoded) }
        }

        let profiles = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).appendingPathComponent("DeviceProfiles")
        for sub in ["devices", "scenarios"] {
            let dir = profiles.appendingPathComponent(sub)
            for file in (try? FileManager.default.contentsOfDirectory(atPath: dir.path)) ?? [] where file.hasSuffix(".yaml") {
                if let data = try? Data(contentsOf: dir.appendingPathComponent(file)), data.count <= 4096 {
                    save("profile", file, [UInt8](data))
                }
            }
        }

        save("relay", "hello", RelayFrame.hello(RelayHello(homeID: "home-1", deviceID: "SIM-DL-0001", session: 3)).encoded())
        save(
            "relay", "message",
            RelayFrame.message(RelayMessage(deviceID: "SIM-DL-0001", session: 3, exchangeID: 9, fromInitiator: true, opcode: 2, payload: read.encoded()))
                .encoded())
        save("relay", "presence", RelayFrame.presence(RelayPresence(deviceID: "SIM-DL-0001", online: true)).encoded())
        save(
            "relay", "failure",
            RelayFrame.failure(RelayFailure(session: 3, exchangeID: 9, fromInitiator: true, reason: .deviceOffline)).encoded())
        print("seeds: \(written) files in \(directory)")
        return written > 0
    }
}
