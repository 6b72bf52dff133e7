import Foundation
import Logging
import MatterModel
import MatterProtocol
import Synchronization

/// The group senders' message counters in the node's state directory (issue #37 item 5).
/// Group counters are trust-first (Core spec 4.6.5.2): the first message from a sender sets
/// its counter. Kept only in memory, a restart forgot them, and one captured group message
/// acted again. Kept here, a replay after a restart is a duplicate.
///
/// A snapshot (group-counters.json) and a journal (group-counters.journal, one
/// `FABRIC/SOURCE-NODE/d|c=COUNTER` line per counter that moved, ids in hex), as the
/// attributes are kept: a counter is one append before its message acts, and the snapshot is
/// rewritten once the journal holds `journalLimit` lines. Loading replays the journal over
/// the snapshot.
final class GroupCounterRecord: GroupCounterStore {
    static let name = "group-counters"
    static let journalLimit = 1000

    private struct State {
        var counters: [GroupPeerCounter.Key: UInt32] = [:]
        var journal: Journal?
        var journalLines = 0
    }

    let store: NodeStateStore
    private let logger: Logger
    private let state: Mutex<State>
    /// What the directory held at start-up.
    let restored: [GroupPeerCounter]

    /// Loads the record; a snapshot that cannot be read is an error (starting without it
    /// would take a replayed group message as new).
    init(store: NodeStateStore, logger: Logger) throws {
        self.store = store
        self.logger = logger
        var counters: [GroupPeerCounter.Key: UInt32] = [:]
        for counter in try store.load([GroupPeerCounter].self, Self.name) ?? [] {
            counters[counter.key] = counter.maxCounter
        }
        let journalPath = store.journalURL(Self.name).path
        let lines = try store.journalLines(Self.name)
        for (number, line) in lines.enumerated() {
            guard let counter = Self.counter(line) else {
                logger.warning("\(journalPath) line \(number + 1): not FABRIC/NODE/d|c=COUNTER; skipped")
                continue
            }
            counters[counter.key] = counter.maxCounter
        }
        state = Mutex(State(counters: counters, journal: nil, journalLines: lines.count))
        restored = counters.map { $0.key.counter($0.value) }
    }

    func groupCounterAdvanced(_ counter: GroupPeerCounter) {
        state.withLock { state in
            state.counters[counter.key] = counter.maxCounter
            guard state.journalLines < Self.journalLimit else { return rewrite(&state) }
            do {
                if state.journal == nil { state.journal = try store.openJournal(Self.name) }
                try state.journal!.append(Self.line(counter) + "\n")
                state.journalLines += 1
            } catch {
                logger.error("cannot append to the group counter journal: \(error)")
                rewrite(&state)
            }
        }
    }

    func groupCountersReplaced(_ counters: [GroupPeerCounter]) {
        state.withLock { state in
            state.counters = Dictionary(counters.map { ($0.key, $0.maxCounter) }, uniquingKeysWith: max)
            rewrite(&state)
        }
    }

    /// The whole table as the snapshot, then no journal.
    private func rewrite(_ state: inout State) {
        let table = state.counters.map { $0.key.counter($0.value) }
            .sorted { ($0.fabricIndex, $0.sourceNodeID, $0.isControl ? 1 : 0) < ($1.fabricIndex, $1.sourceNodeID, $1.isControl ? 1 : 0) }
        do {
            try store.save(table, Self.name)
            state.journal?.close()
            state.journal = nil
            state.journalLines = 0
            try store.removeJournal(Self.name)
        } catch {
            logger.error("cannot save the group counters: \(error)")
        }
    }

    static func line(_ counter: GroupPeerCounter) -> String {
        "\(String(counter.fabricIndex, radix: 16))/\(String(counter.sourceNodeID, radix: 16))/\(counter.isControl ? "c" : "d")=\(counter.maxCounter)"
    }

    static func counter(_ line: Substring) -> GroupPeerCounter? {
        let sides = line.split(separator: "=", omittingEmptySubsequences: false)
        guard sides.count == 2, let value = UInt32(sides[1]) else { return nil }
        let ids = sides[0].split(separator: "/", omittingEmptySubsequences: false)
        guard ids.count == 3, let fabric = FabricIndex(ids[0], radix: 16), let node = UInt64(ids[1], radix: 16),
            ids[2] == "c" || ids[2] == "d"
        else { return nil }
        return GroupPeerCounter(fabricIndex: fabric, sourceNodeID: node, isControl: ids[2] == "c", maxCounter: value)
    }
}

extension GroupPeerCounter {
    /// One sender: fabric, source node, data or control.
    struct Key: Hashable {
        var fabricIndex: FabricIndex
        var sourceNodeID: UInt64
        var isControl: Bool

        func counter(_ value: UInt32) -> GroupPeerCounter {
            GroupPeerCounter(fabricIndex: fabricIndex, sourceNodeID: sourceNodeID, isControl: isControl, maxCounter: value)
        }
    }

    var key: Key { Key(fabricIndex: fabricIndex, sourceNodeID: sourceNodeID, isControl: isControl) }
}
