// `homectl soak --minutes M`: the controller side of scripts/soak.sh (#17 item 4). Opens the
// home live (a subscription per device and route) and, until the time is up, sends random
// commands (On, Off, Toggle, MoveToLevel) to random devices, reads some, switches the routing
// policy to the cloud relay and back, and now and then closes the home and opens it again (new
// sessions, new subscriptions). Prints one JSON line per failed operation, one per minute with
// its own figures, its heap in use every 10 s and between each close and the next open (no
// home held), and after its last close the closed homes it still holds; the script adds RSS
// and file descriptors and judges growth.
import ArgumentParser
import CMalloc
import DeviceProfile
import Foundation
import HomeAPI
import MatterProtocol

struct Soak: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run random commands, reads, route switches and reconnects against a home for a while (soak test).")
    @OptionGroup var global: GlobalOptions
    @Option(help: "How long to run, in minutes.") var minutes: Double = 3
    @Option(help: "Operations started per second.") var rate: Double = 5
    @Option(help: "Seconds between closing the home and opening it again (0: never).") var reconnectEvery: Double = 45
    @Option(help: "Seed of the random choices (the same seed makes the same run).") var seed: UInt64 = 1

    func validate() throws {
        guard minutes > 0, minutes <= 24 * 60 else { throw ValidationError("--minutes must be in (0, 1440]") }
        guard rate > 0, rate <= 1000 else { throw ValidationError("--rate must be in (0, 1000]") }
        guard reconnectEvery >= 0, reconnectEvery <= 86400 else { throw ValidationError("--reconnect-every must be 0...86400") }
    }

    /// One line of output: a failed operation, a minute's figures, the heap every 10 s, the
    /// heap between a close and the next open, or what is left after the last close.
    struct Line: Encodable {
        var kind: String
        var t: Double
        var minute: Int?
        var op: String?
        var device: String?
        var error: String?
        var operations: Int?
        var failures: Int?
        var reconnects: Int?
        var home: HomeDiagnostics?
        /// Bytes this process's allocator has handed out and not had back (glibc mallinfo2:
        /// arena chunks in use plus mmapped blocks): what a leak grows.
        var heapInUse: Int?
        /// Homes closed and still alive: at the end, those before the last one (a leak); in a
        /// "heapWithoutHome" line, those not yet freed 5 s after the close.
        var earlierHomesAlive: Int?
    }

    func run() async throws {
        try await HomeAPIRun.run {
            // Soak figures, on the real clock: the devices are processes of their own.
            let clock = SystemClock()
            let started = clock.now
            let end = started + .milliseconds(Int64(minutes * 60_000))
            var random = SplitMix64(seed: seed)
            // nil only between a close and the next open, while the heap is measured without a home.
            var home: Home! = try await global.open(live: true)
            var devices = try await home.devices().list().sorted { $0.id < $1.id }
            var operations = 0, failures = 0, reconnects = 0, minute = 0
            var lastReconnect = clock.now, lastHeap = clock.now
            let period = Duration.milliseconds(Int64(1000 / rate))
            var next = clock.now
            func seconds() -> Double {
                Double((clock.now - started).components.seconds) + Double((clock.now - started).components.attoseconds) / 1e18
            }
            func emit(_ line: Line) {
                let encoder = JSONEncoder()
                encoder.outputFormatting = [.sortedKeys]
                if let data = try? encoder.encode(line) { FileHandle.standardOutput.write(data + Data("\n".utf8)) }
            }
            /// Counts a finished operation; a failed one is printed.
            func record(_ done: (op: String, device: String, error: String?)) {
                operations += 1
                guard let error = done.error else { return }
                failures += 1
                emit(Line(kind: "error", t: seconds(), op: done.op, device: done.device, error: error))
            }
            // Warm-up: a Toggle to every device first (a change each node keeps, so its state
            // journal is open), once more where it failed, so that every node has its session,
            // subscription and files in place before anything is measured.
            var warmFailures: [HomeDevice] = devices
            for _ in 0..<2 where !warmFailures.isEmpty {
                let h: Home = home  // this home only, not past the warm-up: a later reopening frees it
                let batch = warmFailures
                warmFailures = await withTaskGroup(of: HomeDevice?.self) { group in
                    var failed: [HomeDevice] = []
                    for (i, device) in batch.enumerated() {
                        if i >= 32, let done = await group.next(), let device = done { failed.append(device) }
                        group.addTask { await Self.operate(choice: 50, level: 1, on: device, in: h).2 == nil ? nil : device }
                    }
                    for await done in group { if let device = done { failed.append(device) } }
                    return failed
                }
            }
            emit(Line(kind: "warm", t: seconds(), operations: devices.count, failures: warmFailures.count))
            warmFailures = []  // devices hold the home they came from
            // Operations run concurrently (a slow device does not hold the others), at most 32 at once.
            try await withThrowingTaskGroup(of: (String, String, String?).self) { group in
                var inFlight = 0
                while clock.now < end {
                    if Int(seconds() / 60) > minute {
                        minute = Int(seconds() / 60)
                        emit(
                            Line(
                                kind: "figures", t: seconds(), minute: minute, operations: operations, failures: failures,
                                reconnects: reconnects, home: await home.diagnostics()))
                    }
                    // The heap every 10 s, as the script samples the processes.
                    if clock.now - lastHeap >= .seconds(10) {
                        lastHeap = clock.now
                        emit(Line(kind: "heap", t: seconds(), heapInUse: Self.heapInUse()))
                    }
                    if reconnectEvery > 0, clock.now - lastReconnect >= .milliseconds(Int64(reconnectEvery * 1000)) {
                        // Let what is in flight finish on the old home first.
                        while inFlight > 0, let done = try await group.next() {
                            inFlight -= 1
                            record(done)
                        }
                        await home.close()
                        // The heap with no home held: the process's floor, which a leak
                        // raises. A live home's working set churns too much to judge by
                        // (each opening subscribes to every device at once).
                        home = nil
                        devices = []
                        let closedAt = clock.now
                        while Home.alive > 0, clock.now - closedAt < .seconds(5) {
                            try await clock.sleep(until: clock.now + .milliseconds(20))
                        }
                        emit(Line(kind: "heapWithoutHome", t: seconds(), heapInUse: Self.heapInUse(), earlierHomesAlive: Home.alive))
                        home = try await global.open(live: true)
                        devices = try await home.devices().list().sorted { $0.id < $1.id }
                        reconnects += 1
                        lastReconnect = clock.now
                    }
                    while inFlight >= 32, let done = try await group.next() {
                        inFlight -= 1
                        record(done)
                    }
                    if !devices.isEmpty {
                        let device = devices[Int(random.next() % UInt64(devices.count))]
                        let choice = random.next() % 100
                        let level = UInt8(1 + random.next() % 254)
                        let h: Home = home
                        group.addTask { await Self.operate(choice: choice, level: level, on: device, in: h) }
                        inFlight += 1
                    }
                    next += period
                    if next > clock.now {
                        try await clock.sleep(until: next)
                    } else {
                        next = clock.now
                    }
                }
                while let done = try await group.next() { record(done) }
            }
            emit(
                Line(
                    kind: "figures", t: seconds(), minute: minute + 1, operations: operations, failures: failures,
                    reconnects: reconnects, home: await home.diagnostics()))
            await home.setRoutingPolicy(.preferLocal)
            await home.close()
            // Every home closed before this last one is freed once its last tasks end (each
            // within a response timeout); one still held after that leaks its state with it.
            let closedAt = clock.now
            while Home.alive > 1, clock.now - closedAt < .seconds(30) {
                try await clock.sleep(until: clock.now + .milliseconds(100))
            }
            emit(Line(kind: "closed", t: seconds(), earlierHomesAlive: Home.alive - 1))
        }
    }

    /// Nil where glibc's mallinfo2 is missing (the package builds on Linux only; see Package.swift).
    static func heapInUse() -> Int? {
        #if canImport(Glibc)
        let info = mallinfo2()
        return Int(info.uordblks + info.hblkhd)
        #else
        return nil
        #endif
    }

    /// One random operation; returns its name, the device and the error text if it failed.
    static func operate(choice: UInt64, level: UInt8, on device: HomeDevice, in home: Home) async -> (String, String, String?) {
        let traits = device.types.all.all
        let onOff = traits.lazy.compactMap { $0.traits[Matter.OnOffTrait.self] }.first
        let dimmer = traits.lazy.compactMap { $0.traits[Matter.LevelControlTrait.self] }.first
        var op = "read"
        do {
            switch choice {
            case 0..<25 where onOff != nil:
                op = "on"
                try await onOff!.on()
            case 25..<50 where onOff != nil:
                op = "off"
                try await onOff!.off()
            case 50..<65 where onOff != nil:
                op = "toggle"
                try await onOff!.toggle()
            case 65..<85 where dimmer != nil:
                op = "moveToLevel"
                try await dimmer!.moveToLevelWithOnOff(level: level, transitionTime: 0)
            case 85..<88:
                // A while through the relay only, then back (the relay's sessions and
                // subscriptions come and go with it).
                op = "cloudOnly"
                await home.setRoutingPolicy(.cloudOnly)
            case 88..<91:
                op = "preferLocal"
                await home.setRoutingPolicy(.preferLocal)
            default:
                op = "read"
                try await home.refresh(deviceID: device.id)
            }
            return (op, device.name, nil)
        } catch let error as HomeError {
            return (op, device.name, "\(error.code.rawValue): \(error.message)")
        } catch {
            return (op, device.name, "\(error)")
        }
    }
}
