// dnssd-probe: publishes or browses DNS-SD services through the Avahi daemon it finds on
// the system bus, printing one JSON object per line on stdout. The MatterDNSSD tests and
// benchmark run it on hosts of the fake LAN (scripts/fakelan.sh), where the Avahi daemon is
// private to a network namespace.
//
//   dnssd-probe publish --name NAME --type TYPE --port PORT [--subtype S]... [--txt K=V]...
//   dnssd-probe publish-commissionable --discriminator D [--vendor V] [--product P]
//       [--device-type T] [--device-name N] [--cm 0|1|2] [--sii MS] [--sai MS] [--sat MS]
//       [--tcp T] [--ph N] [--pi TEXT] [--instance HEX] [--port P] [--count N]
//   dnssd-probe publish-operational --fabric HEX --node HEX [--sii MS] [--sai MS] [--sat MS]
//       [--tcp T] [--port P] [--count N]
//   dnssd-probe browse --type TYPE [--subtype S] [--until-count N] [--timeout SECONDS]
//       [--extra-browses N] [--after-ms N] [--tick-ms N] [--follow N]
//   dnssd-probe resolve --name NAME --type TYPE [--timeout SECONDS]
//
// publish* print {"event":"published",...} per service and {"event":"ready",...} when all
// are established, then read commands from stdin until EOF or "quit" (or, with
// --duration SECONDS, just stay up that long):
//   update INDEX KEY=VALUE... (KEY alone removes it)   subtypes INDEX [SUBTYPE...]
//   withdraw INDEX   state   quit
// With --count N, service i gets discriminator D+i (mod 4096) / node ID NODE+i and a name of
// its own. browse prints added / updated / removed events; with --until-count N it exits 0
// (after {"event":"complete"}) once N distinct services were added, and exits 3 on timeout.
// browse --follow N: the first N services announced are followed (updated events), the rest
// resolved once (default 256: DNSSDBrowser.browse(following:)).
// resolve prints {"event":"resolved",...} (exit 0) or {"event":"timeout"} (exit 3).
// publish* and browse: --after-ms N waits N ms after connecting (printing {"event":"connected"}) before
// publishing; --tick-ms N prints {"event":"tick"} every N ms from a task of its own, so a test
// sees whether the process's tasks still run while the daemon is slow to answer; once the
// first service is published each tick carries its name and whether it is established, read
// through its registration as an app would. The stdin command `more N` publishes N more
// services (the same verb, the next indexes): {"event":"more"} at once, {"event":"more-ready"}
// when they are established.
// --verbose logs the library's debug messages on stderr.
import Foundation
import Logging
import MatterDNSSD
import Synchronization

struct UsageError: Error, CustomStringConvertible {
    var description: String
}

/// Command-line options: `--key value` pairs, repeatable, plus bare flags.
struct Options {
    private var values: [String: [String]] = [:]
    private var flags: Set<String> = []
    static let bareFlags: Set<String> = ["--verbose"]

    init(_ arguments: ArraySlice<String>) throws {
        var iterator = arguments.makeIterator()
        while let argument = iterator.next() {
            guard argument.hasPrefix("--") else { throw UsageError(description: "unexpected argument \(argument)") }
            if Self.bareFlags.contains(argument) {
                flags.insert(argument)
                continue
            }
            guard let value = iterator.next() else { throw UsageError(description: "\(argument) needs a value") }
            values[argument, default: []].append(value)
        }
    }

    func has(_ flag: String) -> Bool { flags.contains(flag) }
    mutating func set(_ key: String, to value: String) { values[key] = [value] }
    func all(_ key: String) -> [String] { values[key] ?? [] }
    func string(_ key: String) -> String? { values[key]?.last }

    func required(_ key: String) throws -> String {
        guard let value = string(key) else { throw UsageError(description: "missing \(key)") }
        return value
    }

    func integer<T: FixedWidthInteger>(_ key: String, as: T.Type = T.self) throws -> T? {
        guard let text = string(key) else { return nil }
        guard let value = T(text) else { throw UsageError(description: "\(key) \(text) is not a number in range") }
        return value
    }

    func hex(_ key: String) throws -> UInt64? {
        guard let text = string(key) else { return nil }
        guard let value = UInt64(text, radix: 16) else { throw UsageError(description: "\(key) \(text) is not hex") }
        return value
    }
}

// real time: benchmark: how long the probe took.
let started = ContinuousClock.now
let output = NSLock()

func elapsedMilliseconds() -> Int {
    let elapsed = ContinuousClock.now - started
    return Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
}

/// Writes one JSON line straight to fd 1 (no stdio buffering: the reader waits on it).
func emit(_ event: String, _ fields: [String: Any] = [:]) {
    var object = fields
    object["event"] = event
    object["ms"] = elapsedMilliseconds()
    object["t"] = Int((Date().timeIntervalSince1970 * 1000).rounded())
    guard var data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
    data.append(0x0A)
    output.lock()
    FileHandle.standardOutput.write(data)
    output.unlock()
}

func txtObject(_ txt: DNSSDTXTRecord) -> [String: String] {
    var object: [String: String] = [:]
    for entry in txt.entries {
        object[entry.key] = entry.value.map { String(decoding: $0, as: UTF8.self) } ?? ""
    }
    return object
}

func serviceObject(_ service: DNSSDResolvedService) -> [String: Any] {
    [
        "name": service.instanceName, "type": service.type, "domain": service.domain, "host": service.hostName,
        "port": Int(service.port), "txt": txtObject(service.txt),
        "addresses": service.addresses.map { address in
            ["ip": address.text, "interface": Int(address.interfaceIndex), "family": address.family.rawValue] as [String: Any]
        },
    ]
}

/// Lines from stdin, read on a thread of their own (reading blocks).
func standardInputLines() -> AsyncStream<String> {
    AsyncStream { continuation in
        let thread = Thread {
            while let line = readLine() { continuation.yield(line) }
            continuation.finish()
        }
        thread.start()
    }
}

func parseTXT(_ pairs: [String]) throws -> DNSSDTXTRecord {
    var txt = DNSSDTXTRecord()
    for pair in pairs {
        if let equals = pair.firstIndex(of: "=") {
            txt[String(pair[..<equals])] = String(pair[pair.index(after: equals)...])
        } else {
            txt.setValue(nil, forKey: pair)
        }
    }
    return txt
}

func services(verb: String, options: Options) throws -> [DNSSDService] {
    let count = try options.integer("--count", as: Int.self) ?? 1
    guard count >= 1 && count <= 10_000 else { throw UsageError(description: "--count must be 1...10000") }
    switch verb {
    case "publish":
        let name = try options.required("--name")
        let base = DNSSDService(
            instanceName: name, type: try options.required("--type"),
            port: try options.integer("--port", as: UInt16.self) ?? 5540, subtypes: options.all("--subtype"),
            txt: try parseTXT(options.all("--txt")))
        return (0..<count).map { index in
            var service = base
            if count > 1 { service.instanceName = "\(name)-\(index)" }
            return service
        }
    case "publish-commissionable":
        let discriminator = try options.integer("--discriminator", as: UInt16.self) ?? 3840
        let instance = try options.hex("--instance")
        return try (0..<count).map { index in
            let mode = try options.integer("--cm", as: UInt8.self) ?? 1
            guard let commissioningMode = MatterCommissionableRecord.CommissioningMode(rawValue: mode) else {
                throw UsageError(description: "--cm must be 0, 1 or 2")
            }
            var record = MatterCommissionableRecord(
                longDiscriminator: UInt16((Int(discriminator) + index) % 4096),
                vendorID: try options.integer("--vendor"), productID: try options.integer("--product"),
                deviceType: try options.integer("--device-type"), deviceName: options.string("--device-name"),
                commissioningMode: commissioningMode, sessionIdleInterval: try options.integer("--sii"),
                sessionActiveInterval: try options.integer("--sai"),
                sessionActiveThreshold: try options.integer("--sat"), tcpSupport: try options.integer("--tcp"),
                pairingHint: try options.integer("--ph"), pairingInstruction: options.string("--pi"),
                port: try options.integer("--port") ?? MatterCommissionableRecord.defaultPort)
            if let instance { record.instanceID = instance &+ UInt64(index) }
            return try record.service()
        }
    case "publish-operational":
        let fabric = try options.hex("--fabric") ?? 0x87E1_B004_E235_A130
        let node = try options.hex("--node") ?? 1
        return try (0..<count).map { index in
            try MatterOperationalRecord(
                compressedFabricID: fabric, nodeID: node &+ UInt64(index),
                sessionIdleInterval: try options.integer("--sii"), sessionActiveInterval: try options.integer("--sai"),
                sessionActiveThreshold: try options.integer("--sat"), tcpSupport: try options.integer("--tcp"),
                port: try options.integer("--port") ?? MatterOperationalRecord.defaultPort
            ).service()
        }
    default:
        throw UsageError(description: "unknown verb \(verb)")
    }
}

/// --tick-ms N: a tick event with `fields()` every N ms, from a task of its own.
func startTicking(_ options: Options, _ fields: @escaping @Sendable () -> [String: any Sendable]) throws {
    guard let tick = try options.integer("--tick-ms", as: Int.self) else { return }
    guard tick >= 1 else { throw UsageError(description: "--tick-ms must be at least 1") }
    Task.detached {
        // real time: user: --tick-ms.
        while (try? await Task.sleep(for: .milliseconds(tick))) != nil { emit("tick", fields()) }
    }
}

/// --after-ms N: says "connected", then waits N ms.
func waitAfterConnecting(_ options: Options) async throws {
    guard let after = try options.integer("--after-ms", as: Int.self) else { return }
    emit("connected", [:])
    // real time: user: --after-ms.
    try await Task.sleep(for: .milliseconds(max(0, after)))
}

/// The first service's registration, once published, for the ticker.
final class FirstRegistration: Sendable {
    private let registration = Mutex<DNSSDRegistration?>(nil)
    var value: DNSSDRegistration? {
        get { registration.withLock { $0 } }
        set { registration.withLock { $0 = newValue } }
    }
}

func runPublish(verb: String, options: Options, logger: Logger) async throws -> Int32 {
    let wanted = try services(verb: verb, options: options)
    let publisher = try DNSSDPublisher(logger: logger)
    defer { publisher.shutdown() }
    let first = FirstRegistration()
    try startTicking(options) {
        guard let registration = first.value else { return [:] }
        return ["name": registration.instanceName, "established": registration.isEstablished]
    }
    try await waitAfterConnecting(options)
    emit("publishing", ["count": wanted.count])
    // All at once: Avahi probes the names in parallel.
    let registrations = try await withThrowingTaskGroup(of: (Int, DNSSDRegistration).self) { group in
        for (index, service) in wanted.enumerated() {
            group.addTask {
                let registration = try await publisher.publish(service)
                if index == 0 { first.value = registration }
                emit(
                    "published",
                    [
                        "index": index, "name": registration.instanceName, "type": service.type,
                        "subtypes": service.subtypes, "port": Int(service.port), "txt": txtObject(service.txt),
                    ])
                return (index, registration)
            }
        }
        var done: [Int: DNSSDRegistration] = [:]
        for try await (index, registration) in group { done[index] = registration }
        return (0..<wanted.count).compactMap { done[$0] }
    }
    emit("ready", ["count": registrations.count])

    if let duration = try options.integer("--duration", as: Int.self) {
        // real time: user: --duration.
        try await Task.sleep(for: .seconds(duration))
        return 0
    }
    // Services published so far: each `more` takes the next indexes.
    var total = wanted.count
    for await line in standardInputLines() {
        let words = line.split(separator: " ").map(String.init)
        guard let command = words.first else { continue }
        if command == "quit" { break }
        if command == "more" {
            guard words.count == 2, let more = Int(words[1]), more >= 1, total + more <= 10_000 else {
                emit("error", ["message": "more takes a count of 1 or more, up to 10,000 services in all"])
                continue
            }
            var widened = options
            widened.set("--count", to: String(total + more))
            let extra = try services(verb: verb, options: widened).suffix(more)
            total += more
            emit("more", ["count": more])
            Task {
                do {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for service in extra { group.addTask { _ = try await publisher.publish(service) } }
                        try await group.waitForAll()
                    }
                    emit("more-ready", ["count": more])
                } catch {
                    emit("error", ["message": "\(error)"])
                }
            }
            continue
        }
        if command == "state" {
            emit(
                "state",
                [
                    "registrations": registrations.enumerated().map { index, registration in
                        ["index": index, "name": registration.instanceName, "established": registration.isEstablished] as [String: Any]
                    }
                ])
            continue
        }
        guard words.count >= 2, let index = Int(words[1]), registrations.indices.contains(index) else {
            emit("error", ["message": "bad command: \(line)"])
            continue
        }
        let registration = registrations[index]
        switch command {
        case "update":
            var txt = registration.currentService.txt
            let changes = try parseTXT(Array(words.dropFirst(2)))
            for entry in changes.entries {
                if entry.value == nil { txt.removeValue(forKey: entry.key) } else { txt.setValue(entry.value, forKey: entry.key) }
            }
            do {
                try registration.update(txt: txt)
                emit("updated", ["index": index, "name": registration.instanceName, "txt": txtObject(txt)])
            } catch {
                emit("error", ["message": "\(error)"])
            }
        case "subtypes":
            var service = registration.currentService
            service.subtypes = Array(words.dropFirst(2))
            do {
                try registration.update(service: service)
                emit("resubtyped", ["index": index, "name": registration.instanceName, "subtypes": service.subtypes])
            } catch {
                emit("error", ["message": "\(error)"])
            }
        case "withdraw":
            registration.withdraw()
            emit("withdrawn", ["index": index, "name": registration.instanceName])
        default:
            emit("error", ["message": "unknown command: \(command)"])
        }
    }
    return 0
}

func runBrowse(options: Options, logger: Logger) async throws -> Int32 {
    let type = try options.required("--type")
    let untilCount = try options.integer("--until-count", as: Int.self)
    let timeout = try options.integer("--timeout", as: Int.self) ?? 30
    let browser = try DNSSDBrowser(logger: logger)
    defer { browser.shutdown() }
    try startTicking(options) { [:] }
    try await waitAfterConnecting(options)
    // --extra-browses N: as many more browses of the type, started at once from tasks of
    // their own (a controller looking up many nodes), their events read and dropped.
    let extra = try options.integer("--extra-browses", as: Int.self) ?? 0
    guard (0...1000).contains(extra) else { throw UsageError(description: "--extra-browses must be 0...1000") }
    await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<extra {
            group.addTask {
                let events = try browser.browse(type: type)
                Task { for await _ in events {} }
            }
        }
    }
    let following = try options.integer("--follow", as: Int.self) ?? BrowseModel.defaultFollowLimit
    guard following >= 0 else { throw UsageError(description: "--follow must be 0 or more") }
    let events = try browser.browse(type: type, subtype: options.string("--subtype"), following: following)
    emit("browsing", ["type": type, "subtype": options.string("--subtype") ?? "", "count": extra + 1])
    return try await withThrowingTaskGroup(of: Int32.self) { group in
        group.addTask {
            var seen: Set<String> = []
            for await event in events {
                switch event {
                case let .added(service):
                    seen.insert(service.instanceName)
                    emit("added", serviceObject(service))
                case let .updated(service):
                    emit("updated", serviceObject(service))
                case let .removed(name):
                    emit("removed", ["name": name])
                }
                if let untilCount, seen.count >= untilCount {
                    emit("complete", ["count": seen.count])
                    return 0
                }
            }
            return 1
        }
        group.addTask {
            // real time: external: the Avahi daemon's answer.
            try await Task.sleep(for: .seconds(timeout))
            if untilCount != nil {
                emit("timeout", [:])
                return 3
            }
            return 0
        }
        let status = try await group.next() ?? 1
        group.cancelAll()
        return status
    }
}

func runResolve(options: Options, logger: Logger) async throws -> Int32 {
    let browser = try DNSSDBrowser(logger: logger)
    defer { browser.shutdown() }
    let timeout = try options.integer("--timeout", as: Int.self) ?? 10
    do {
        let service = try await browser.resolve(
            instanceName: try options.required("--name"), type: try options.required("--type"),
            timeout: .seconds(timeout))
        emit("resolved", serviceObject(service))
        return 0
    } catch DNSSDError.timedOut {
        emit("timeout", [:])
        return 3
    }
}

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: dnssd-probe publish|publish-commissionable|publish-operational|browse ...\n".utf8))
    exit(2)
}
signal(SIGPIPE, SIG_IGN)
do {
    let verb = arguments[1]
    let options = try Options(arguments.dropFirst(2))
    let verbose = options.has("--verbose")
    LoggingSystem.bootstrap { label in
        var handler = StreamLogHandler.standardError(label: label)
        handler.logLevel = verbose ? .debug : .info
        return handler
    }
    let logger = Logger(label: "dnssd-probe")
    let status: Int32
    if verb == "browse" {
        status = try await runBrowse(options: options, logger: logger)
    } else if verb == "resolve" {
        status = try await runResolve(options: options, logger: logger)
    } else {
        status = try await runPublish(verb: verb, options: options, logger: logger)
    }
    exit(status)
} catch let error as UsageError {
    FileHandle.standardError.write(Data("dnssd-probe: \(error)\n".utf8))
    exit(2)
} catch {
    emit("error", ["message": "\(error)"])
    exit(1)
}
