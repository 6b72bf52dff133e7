// The guide to monitoring home state with Combine (seeds/002, Chinese), every Swift block
// as the guide prints it, between `guide-block` markers (scripts/check-guide-code.py
// checks them against the seeds; three of its lines carry the typo fixes listed there).
//
// Wrapped: the first two blocks are members of `MonitoringGuide`, the app type that holds
// `structures` and `var home: Home?`; the unwrapping block opens `track`, and each
// publisher chain after it is kept alive by a `keep(` … `)` around it (the guide drops the
// AnyCancellable, which would cancel at once). The event block's closing brace closes the
// method `subscribeToFan` opened around it, inside `FanTile`, the class its `[weak self]`
// needs. Supplied: the app's `Logger`; `print`, a member that also records each line
// (`printed`) for the tests; `import Foundation` and `Synchronization`; `myStructureID` and `levelControlTrait` (the one the block
// prints; the guide names no other) as parameters; `device`, `cancellable`,
// `fanDeviceType` and `updateTileInfo()` on `FanTile`.
import Foundation
import GoogleHomeSDK
import Synchronization

/// The app's logger (the guide leaves it to the app).
private enum Logger {
    static func error(_ message: String) { Swift.print("error: \(message)") }
}

/// The lines the guide's code printed, in order.
public final class PrintedLines: Sendable {
    private struct State {
        var lines: [String] = []
        var watchers: [Int: AsyncStream<Void>.Continuation] = [:]
        var nextID = 0
    }
    private let state = Mutex(State())
    public var all: [String] { state.withLock { $0.lines } }

    func append(_ line: String) {
        let watchers = state.withLock { s in
            s.lines.append(line)
            return Array(s.watchers.values)
        }
        for watcher in watchers { watcher.yield() }
    }

    /// Yields after each line printed from now on, for a caller that waits for one.
    public func changes() -> AsyncStream<Void> {
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let id = state.withLock { s in
            s.nextID += 1
            s.watchers[s.nextID] = continuation
            return s.nextID
        }
        continuation.onTermination = { [weak self] _ in _ = self?.state.withLock { $0.watchers.removeValue(forKey: id) } }
        return stream
    }
}

/// The app of the monitoring guide.
public struct MonitoringGuide {
// guide-block: monitoring-02
var home: Home?
// end guide-block: monitoring-02
    public var structures: [Structure] = []
    public let printed = PrintedLines()

    public init(home: Home?) { self.home = home }

// guide-block: monitoring-01
func structure(structureID: String?) -> Structure? {
guard let structureID else { return nil }
return structures.first { $0.id == structureID }
}
// end guide-block: monitoring-01

    /// The app's `print`: the console, and `printed`.
    func print(_ line: String) {
        printed.append(line)
        Swift.print(line)
    }

    /// Starts the guide's publishers; nil when there is no home.
    public func track(myStructureID: String, device: HomeDevice, levelControlTrait: Matter.LevelControlTrait?) -> [AnyCancellable]? {
        var cancellables: [AnyCancellable] = []
        func keep(_ cancellable: AnyCancellable) { cancellables.append(cancellable) }
// guide-block: monitoring-03
guard let home else { return nil }
// end guide-block: monitoring-03
        keep(
// guide-block: monitoring-04
home.structures().batched()
.map { $0.first(where: { $0.id == myStructureID}) }
.removeDuplicates()
.sink { structure in
if let structure = structure {
print("Structure \(structure.id) updated to \(structure.name)")
}
}
// end guide-block: monitoring-04
        )
        keep(
// guide-block: monitoring-05
home.devices().batched()
.compactMap { deviceList -> HomeDevice? in
deviceList.filter { $0.name == "Bedroom Lamp"}.first
}
.removeDuplicates()
.sink { lampDevice in
if lampDevice != nil {
print("The bedroom lamp has changed!")
}
}
// end guide-block: monitoring-05
        )
        keep(
// guide-block: monitoring-06
device.types.subscribe(OnOffLightDeviceType.self)
.map { $0.matterTraits.onOffTrait }
.removeDuplicates()
.sink { onOffState in
if let onOffState = onOffState {
print("Got new state update: \(onOffState.onOff)")
}
}
// end guide-block: monitoring-06
        )
        if let levelControlTrait {
            keep(
// guide-block: monitoring-07
device.types.subscribe(DimmableLightDeviceType.self)
.map { $0.matterTraits.levelControlTrait }
.removeDuplicates()
.sink { dimmableLightDevice in
if let dimmableLightDevice = dimmableLightDevice {
print("Got new state update! \(levelControlTrait.currentLevel)")
}
}
// end guide-block: monitoring-07
            )
        }
        keep(
// guide-block: monitoring-08
home.rooms().batched()
.sink { rooms in
print("Got a new updated set of rooms!")
for room in rooms {
print("Got room #\(room.name)")
}
}
// end guide-block: monitoring-08
        )
        return cancellables
    }
}

/// A fan's tile: the class the event block's `[weak self]` belongs to.
public final class FanTile {
    let device: HomeDevice
    var cancellable: AnyCancellable?
    public private(set) var fanDeviceType: FanDeviceType?
    public private(set) var tileUpdates = 0

    public init(device: HomeDevice) { self.device = device }

    func updateTileInfo() { tileUpdates += 1 }

    public func subscribeToFan() {
// guide-block: monitoring-09
self.cancellable = self.device.types.subscribe(FanDeviceType.self)
.receive(on: DispatchQueue.main)
.catch { error in
Logger.error("Error getting FanDeviceType: \(error)")
return Empty<FanDeviceType, Never>().eraseToAnyPublisher()
}
.sink { [weak self] fanDeviceType in
self?.fanDeviceType = fanDeviceType
self?.updateTileInfo()
}
}
// end guide-block: monitoring-09
}
