import Foundation
import MatterModel
import MatterProtocol
import MatterTLV
import Testing

@testable import MatterDevice

/// Quieter reporting (quality Q, Core spec 7.7.9): during a 10 s transition CurrentLevel and
/// ColorTemperatureMireds are reported at most once a second plus the start and the end (the
/// certification cases TC_LVL_2_3 and TC_CC_2_2 allow 12 reports), where every 100 ms tick used to
/// be reported (about 100); RemainingTime only at its start and when it reaches 0. Counted by a
/// real subscription over UDP, on a Color Temperature Light whose colour follows its level.
@Suite struct QuieterReportingTests {
    static let level = ClusterID(0x0008), color = ClusterID(0x0300)
    static let currentLevel = AttributePath(endpoint: 1, cluster: level, attribute: AttributeID(0x0000))
    static let levelRemaining = AttributePath(endpoint: 1, cluster: level, attribute: AttributeID(0x0001))
    static let mireds = AttributePath(endpoint: 1, cluster: color, attribute: AttributeID(0x0007))
    static let colorRemaining = AttributePath(endpoint: 1, cluster: color, attribute: AttributeID(0x0002))

    /// Every value reported for each path, in order, until no report comes for `quiet` (a
    /// collector ends with the wait that runs out, so each call registers a new one).
    static func collect(_ commissioner: LoopbackCommissioner, quiet: Duration, after action: () async throws -> Void) async throws
        -> [AttributePath: [TLVValue]]
    {
        let collector = ReportCollector()
        await commissioner.manager.register(collector, for: .interactionModel)
        try await action()
        var seen: [AttributePath: [TLVValue]] = [:]
        while let report = await collector.next(within: quiet) {
            for case .data(let data) in report.attributeReports {
                if let path = data.path.concretePath { seen[path, default: []].append(data.data) }
            }
        }
        return seen
    }

    /// A node of the shipped profile, commissioned by a loopback commissioner, for `body`.
    static func commissioned(_ profile: String, _ body: (LoopbackCommissioner, SessionInfo) async throws -> Void) async throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let node = try await ProfileNode.start(profile: profile, stateDirectory: directory)
        let commissioner = try await LoopbackCommissioner.start()
        do {
            try await body(commissioner, try await commissioner.commission(try node.address, passcode: node.passcode).caseSession)
        } catch {
            await commissioner.stop()
            await node.stop()
            throw error
        }
        await commissioner.stop()
        await node.stop()
    }

    @Test func aTenSecondTransitionIsReportedAboutOnceASecond() async throws {
        try await Self.commissioned("devices/color-temperature-light.yaml") { commissioner, session in
            let paths = [Self.currentLevel, Self.levelRemaining, Self.mireds, Self.colorRemaining].map { AttributePathIB($0) }
            _ = try await commissioner.subscribe(session, paths, minInterval: 0, maxInterval: 60)

            // MoveToLevelWithOnOff to 20 over 100 tenths: the colour temperature follows the level.
            // real time: external: the node runs on the real clock; a real transition's reports are what is counted.
            let start = ContinuousClock.now
            var seen = try await Self.collect(commissioner, quiet: .seconds(3)) {
                _ = try await commissioner.invoke(session, 1, Self.level, 0x04, fields((0, u(20)), (1, u(100)), (2, u(0)), (3, u(0))))
            }
            let took = ContinuousClock.now - start
            let levels = seen[Self.currentLevel] ?? [], coupled = seen[Self.mireds] ?? []
            #expect(levels.last == u(20), "the end is reported: \(levels)")
            #expect((6...12).contains(levels.count), "CurrentLevel reported \(levels.count) times in \(took): \(levels)")
            #expect((6...12).contains(coupled.count), "ColorTemperatureMireds reported \(coupled.count) times: \(coupled)")
            let remaining = seen[Self.levelRemaining] ?? []
            #expect(remaining.first == u(100) && remaining.last == u(0) && remaining.count <= 3, "RemainingTime: \(remaining)")

            // MoveToColorTemperature to 300 mireds over 100 tenths, on its own.
            seen = try await Self.collect(commissioner, quiet: .seconds(3)) {
                _ = try await commissioner.invoke(session, 1, Self.color, 0x0A, fields((0, u(300)), (1, u(100)), (2, u(0)), (3, u(0))))
            }
            let mireds = seen[Self.mireds] ?? []
            #expect(mireds.last == u(300), "the end is reported: \(mireds)")
            #expect((6...12).contains(mireds.count), "ColorTemperatureMireds reported \(mireds.count) times: \(mireds)")
            let colorRemaining = seen[Self.colorRemaining] ?? []
            #expect(colorRemaining.last == u(0) && colorRemaining.count <= 3, "RemainingTime: \(colorRemaining)")

        }
    }

    /// A fade shorter than a second (Off over the light's OnOffTransitionTime, 0.5 s) reports no
    /// step: its start counts as a report, so a step's report cannot make the subscriber's
    /// MinInterval (1 s here) hold back what follows.
    @Test func aFadeShorterThanASecondReportsNoStep() async throws {
        try await Self.commissioned("devices/dimmable-light.yaml") { commissioner, session in
            let onOff = AttributePath(endpoint: 1, cluster: ClusterID(0x0006), attribute: AttributeID(0x0000))
            _ = try await commissioner.subscribe(
                session, [AttributePathIB(onOff), AttributePathIB(Self.currentLevel)], minInterval: 1, maxInterval: 60)
            // real time: external: the node's subscription runs on the real clock.
            try await Task.sleep(for: .milliseconds(1100))  // past the priming report's MinInterval

            var reports: [ReportDataMessage] = []
            let collector = ReportCollector()
            await commissioner.manager.register(collector, for: .interactionModel)
            _ = try await commissioner.invoke(session, 1, ClusterID(0x0006), 0x00)  // Off
            while let report = await collector.next(within: .seconds(3)) { reports.append(report) }
            // The first report carries the OnOff FALSE the Off set at once; no report carries a step
            // of the fade, only the level restored at its end (128) for the next On.
            let carrying = reports.filter { $0.result(Self.currentLevel) != nil || $0.result(onOff) != nil }
            let seen = "\(carrying.map { ($0.result(onOff), $0.result(Self.currentLevel)) })"
            #expect(carrying.first?.result(onOff) == .success(.bool(false)), "\(seen)")
            #expect(carrying.compactMap { $0.result(Self.currentLevel) }.allSatisfy { $0 == .success(u(128)) }, "\(seen)")
        }
    }

    /// A Stop ends the movement: the level it stopped at is reported although the step that set
    /// it was not (a read and the last report agree).
    @Test func aStoppedTransitionReportsWhereItStopped() async throws {
        try await Self.commissioned("devices/dimmable-light.yaml") { commissioner, session in
            _ = try await commissioner.subscribe(session, [AttributePathIB(Self.currentLevel)], minInterval: 0, maxInterval: 60)

            let seen = try await Self.collect(commissioner, quiet: .seconds(3)) {
                _ = try await commissioner.invoke(session, 1, Self.level, 0x04, fields((0, u(254)), (1, u(100)), (2, u(0)), (3, u(0))))
                // real time: external: the node's transition runs on the real clock; stop it midway.
                try await Task.sleep(for: .milliseconds(2500))
                _ = try await commissioner.invoke(session, 1, Self.level, 0x07, fields((0, u(0)), (1, u(0))))  // StopWithOnOff
            }
            let read = try await commissioner.read(session, paths: [AttributePathIB(Self.currentLevel)]).result(Self.currentLevel)
            guard case .success(let stoppedAt) = read else {
                Issue.record("no CurrentLevel: \(String(describing: read))")
                return
            }
            #expect(seen[Self.currentLevel]?.last == stoppedAt, "reported \(seen[Self.currentLevel] ?? []), read \(stoppedAt)")
            #expect(stoppedAt != u(254))
        }
    }
}
