// `scripts/fuzz.sh`: coverage-guided fuzzing (libFuzzer, built with -sanitize=fuzzer,address)
// of everything that reads bytes or text from outside: TLV, message headers and secured
// messages, Interaction Model requests, PASE and CASE messages, certificates (Matter TLV and
// X.509), YAML profiles and scenarios, and cloud relay frames. One binary; the harness is
// chosen by MATTERSIM_FUZZ_TARGET. `matter-fuzz --make-seeds DIR` writes the seed corpus.
import CFuzzerDriver
import DeviceProfile
import Foundation
import MatterCrypto
import MatterModel
import MatterProtocol
import MatterTLV
import RelayProtocol

/// One harness: feeds an input to a decoder, which must return or throw, never trap.
struct Harness: Sendable {
    var name: String
    /// Largest input worth trying (libFuzzer's -max_len).
    var maxLength: Int
    var run: @Sendable ([UInt8]) -> Void
}

// The harness libFuzzer's C callback calls: chosen once in LLVMFuzzerInitialize, before fuzzing starts.
nonisolated(unsafe) var selected: Harness?

/// libFuzzer calls this once with the command line: `--make-seeds DIR` and `--list` do their
/// job and exit; otherwise MATTERSIM_FUZZ_TARGET picks the harness.
@_cdecl("LLVMFuzzerInitialize")
public func fuzzerInitialize(_ argc: UnsafeMutablePointer<Int32>, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>) -> Int32 {
    let arguments = CommandLine.arguments
    if arguments.count == 3, arguments[1] == "--make-seeds" {
        exit(Seeds.write(to: arguments[2]) ? 0 : 1)
    }
    if arguments.count == 2, arguments[1] == "--list" {
        for harness in Harnesses.all { print("\(harness.name) \(harness.maxLength)") }
        exit(0)
    }
    let name = ProcessInfo.processInfo.environment["MATTERSIM_FUZZ_TARGET"] ?? ""
    guard let harness = Harnesses.all.first(where: { $0.name == name }) else {
        FileHandle.standardError.write(
            Data("MATTERSIM_FUZZ_TARGET='\(name)': expected one of \(Harnesses.all.map(\.name).joined(separator: ", "))\n".utf8))
        exit(2)
    }
    selected = harness
    return 0
}

/// The program's main (SwiftPM links an executable's entry point as main): libFuzzer's driver.
@_cdecl("matter_fuzz_main")
public func matterFuzzMain(_ argc: Int32, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Int32 {
    var count = argc
    var arguments: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = argv
    return LLVMFuzzerRunDriver(&count, &arguments) { data, size in fuzzerTestOneInput(data, size) }
}

/// Each input libFuzzer makes.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzerTestOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    let bytes = data.map { Array(UnsafeBufferPointer(start: $0, count: size)) } ?? []
    selected?.run(bytes)
    return 0
}

enum Harnesses {
    static let all: [Harness] = [tlv, message, interactionModel, secureChannel, certificate, profile, relay]

    /// The TLV reader: whole elements, and the element-by-element reader to the end.
    static let tlv = Harness(name: "tlv", maxLength: 4096) { bytes in
        if let element = try? TLVElement.decode(bytes) { _ = element.value.description }
        _ = try? TLVElement.decodeAll(bytes)
    }

    /// A datagram: the message header, the protocol header, and AES-CCM opening with a known
    /// key; and the input sealed with that key as a protocol message, opened and decoded again
    /// (so the fuzzer reaches what comes after the MIC check).
    static let message = Harness(name: "message", maxLength: 1280) { bytes in
        let cipher = Fixtures.cipher
        if let (header, length) = try? MessageHeader.decode(bytes) {
            if let opened = try? cipher.open(datagram: bytes, header: header, headerLength: length) {
                _ = try? ProtocolHeader.decode(opened)
            }
            _ = try? ProtocolHeader.decode(Array(bytes[length...]))
        }
        let header = MessageHeader(sessionID: 0x1234, messageCounter: UInt32(bytes.count))
        if let sealed = try? Fixtures.peer.seal(header: header, protocolMessage: bytes),
            let (decoded, length) = try? MessageHeader.decode(sealed),
            let opened = try? cipher.open(datagram: sealed, header: decoded, headerLength: length),
            let (protocolHeader, payload) = try? ProtocolHeader.decode(opened)
        {
            _ = protocolHeader
            _ = try? StatusReport.decode(payload)
        }
    }

    /// Interaction Model messages: the first byte picks the opcode, the rest is its payload.
    static let interactionModel = Harness(name: "im", maxLength: 2048) { bytes in
        guard let first = bytes.first else { return }
        let payload = Array(bytes.dropFirst())
        switch first % 10 {
        case 0: _ = try? ReadRequestMessage(payload: payload)
        case 1: _ = try? SubscribeRequestMessage(payload: payload)
        case 2: _ = try? WriteRequestMessage(payload: payload)
        case 3: _ = try? InvokeRequestMessage(payload: payload)
        case 4: _ = try? TimedRequestMessage(payload: payload)
        case 5: _ = try? ReportDataMessage(payload: payload)
        case 6: _ = try? StatusResponseMessage(payload: payload)
        case 7: _ = try? InvokeResponseMessage(payload: payload)
        case 8: _ = try? WriteResponseMessage(payload: payload)
        default: _ = try? SubscribeResponseMessage(payload: payload)
        }
    }

    /// PASE and CASE messages and status reports: the first byte picks which.
    static let secureChannel = Harness(name: "securechannel", maxLength: 2048) { bytes in
        guard let first = bytes.first else { return }
        let payload = Array(bytes.dropFirst())
        switch first % 10 {
        case 0: _ = try? PBKDFParamRequest(decoding: payload)
        case 1: _ = try? PBKDFParamResponse(decoding: payload)
        case 2: _ = try? Pake1(decoding: payload)
        case 3: _ = try? Pake2(decoding: payload)
        case 4: _ = try? Pake3(decoding: payload)
        case 5: _ = try? Sigma1(decoding: payload)
        case 6: _ = try? Sigma2(decoding: payload)
        case 7: _ = try? Sigma3(decoding: payload)
        case 8: _ = try? Sigma2Resume(decoding: payload)
        default: _ = try? StatusReport.decode(payload)
        }
    }

    /// Certificates: Matter TLV (first byte even) or X.509 DER (odd), and each converted to the other.
    static let certificate = Harness(name: "certificate", maxLength: 2048) { bytes in
        guard let first = bytes.first else { return }
        let payload = Array(bytes.dropFirst())
        if first % 2 == 0 {
            if let certificate = try? MatterCertificate(tlv: payload) { _ = try? certificate.x509DER() }
        } else if let certificate = try? MatterCertificate(x509DER: payload) {
            _ = certificate.tlvEncoded
        }
    }

    /// YAML: a device profile, a home (its references resolve to nothing) and a scenario.
    static let profile = Harness(name: "profile", maxLength: 4096) { bytes in
        let text = String(decoding: bytes, as: UTF8.self)
        let loader = ProfileLoader(model: .standard, fileSystem: .memory([:]))
        _ = loader.load(yaml: text, file: "fuzz.yaml").diagnostics
        _ = try? loader.loadScenario(yaml: text, file: "fuzz.yaml")
    }

    /// Cloud relay frames, as both ends read them.
    static let relay = Harness(name: "relay", maxLength: 4096) { bytes in
        if let frame = try? RelayFrame(decoding: bytes) { _ = frame.encoded() }
    }
}

enum Fixtures {
    static let keys = SessionKeys(
        i2rKey: Array(repeating: 0x11, count: 16), r2iKey: Array(repeating: 0x22, count: 16), attestationChallenge: Array(repeating: 0, count: 16))
    /// The receiving side (responder) and the sending side (initiator) of one session.
    static let cipher = try! SessionCipher(keys: keys, role: .responder, localNodeID: 0, peerNodeID: 0)
    static let peer = try! SessionCipher(keys: keys, role: .initiator, localNodeID: 0, peerNodeID: 0)
}
