import DeviceProfile
import Foundation
import MatterDevice
import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import matter_sim

/// Issue #40: the shipped Dimmable Plug-in Unit and Speaker, on the node clock. The plug's
/// Level Control has the OnOff feature (the device type requires it): turning it on fades up
/// to its last level, and MoveToLevelWithOnOff turns it on. The speaker's has not: its On/Off
/// is mute, which leaves the volume (CurrentLevel) where it is.
@Suite struct PlugInDimmerAndSpeakerTests {
    let clock = ManualClock()
    typealias OnOff = Clusters.OnOff
    typealias Level = Clusters.LevelControl

    func node(_ profile: String) throws -> MatterNode {
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("DeviceProfiles/devices/\(profile)").path
        let device = try ProfileLoader().loadDevice(file: file)
        return try MatterNode(description: device.nodeDescription(model: .standard), clock: clock, logger: quietLogger)
    }

    func invoke(_ node: MatterNode, _ cluster: ClusterID, _ command: CommandID, _ fields: [(UInt8, TLVValue)] = []) async -> Bool {
        let path = CommandPath(endpoint: 1, cluster: cluster, command: command)
        return await node.invoke(path, fields: .structure(fields.map { TLVElement(tag: .context($0.0), $0.1) })) == .success
    }

    func onOff(_ node: MatterNode) async -> TLVValue? {
        (try? await node.read(AttributePath(endpoint: 1, cluster: OnOff.id, attribute: OnOff.Attribute.onOff)).get())?.value
    }

    func level(_ node: MatterNode) async -> TLVValue? {
        (try? await node.read(AttributePath(endpoint: 1, cluster: Level.id, attribute: Level.Attribute.currentLevel)).get())?.value
    }

    @Test func theDimmablePlugFadesUpToItsLastLevelAndMoveToLevelWithOnOffTurnsItOn() async throws {
        let plug = try node("dimmable-plug.yaml")
        #expect(await onOff(plug) == .bool(false))
        #expect(await level(plug) == .unsigned(200))
        // On: from the minimum up to the level it had, over OnOffTransitionTime (0.5 s).
        #expect(await invoke(plug, OnOff.id, OnOff.Command.on))
        #expect(await onOff(plug) == .bool(true))
        #expect(await level(plug) != .unsigned(200))
        await clock.advance(by: .milliseconds(500))
        #expect(await level(plug) == .unsigned(200))
        // Off, then MoveToLevelWithOnOff (at once): on again, at the new level.
        #expect(await invoke(plug, OnOff.id, OnOff.Command.off))
        await clock.advance(by: .milliseconds(500))
        #expect(await onOff(plug) == .bool(false))
        let withOnOff: [(UInt8, TLVValue)] = [(0, .unsigned(100)), (1, .unsigned(0)), (2, .unsigned(0)), (3, .unsigned(0))]
        #expect(await invoke(plug, Level.id, Level.Command.moveToLevelWithOnOff, withOnOff))
        #expect(await onOff(plug) == .bool(true))
        #expect(await level(plug) == .unsigned(100))
        await plug.stop()
    }

    @Test func muteLeavesTheSpeakersVolumeAndAVolumeStepIsImmediate() async throws {
        let speaker = try node("speaker.yaml")
        #expect(await onOff(speaker) == .bool(true))
        #expect(await level(speaker) == .unsigned(80))
        // Muted: the volume stays where it was, now and after any fade a light would run.
        #expect(await invoke(speaker, OnOff.id, OnOff.Command.off))
        await clock.advance(by: .seconds(2))
        #expect(await onOff(speaker) == .bool(false))
        #expect(await level(speaker) == .unsigned(80))
        #expect(await invoke(speaker, OnOff.id, OnOff.Command.on))
        #expect(await onOff(speaker) == .bool(true))
        #expect(await level(speaker) == .unsigned(80))
        // A volume change with no transition time given takes the default (0): at once.
        let toLevel: [(UInt8, TLVValue)] = [(0, .unsigned(120)), (1, .null), (2, .unsigned(0)), (3, .unsigned(0))]
        #expect(await invoke(speaker, Level.id, Level.Command.moveToLevel, toLevel))
        #expect(await level(speaker) == .unsigned(120))
        await speaker.stop()
    }
}
