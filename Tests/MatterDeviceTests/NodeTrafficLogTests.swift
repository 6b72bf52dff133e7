@testable import MatterDevice
import MatterModel
@testable import MatterProtocol
import Testing

/// The traffic log keeps requests as they came and words them when read, or at once for a
/// follower of `updates()`.
@Suite("Node traffic log")
struct NodeTrafficLogTests {
    static func toggle(endpoint: EndpointNumber = 1, fabric: FabricIndex = 1) -> InteractionRequest {
        let message = InvokeRequestMessage(
            suppressResponse: false, timedRequest: false,
            invokeRequests: [CommandDataIB(path: CommandPathIB(endpoint: endpoint, cluster: ClusterID(6), command: CommandID(2)))])
        return InteractionRequest(
            opcode: .invokeRequest, payload: message.encoded(),
            subject: SubjectDescriptor(authMode: .case, fabricIndex: fabric, subject: 0x1234), timed: false)
    }

    @Test func aRequestSeenIsWordedWhenTheLogIsRead() {
        let log = NodeTrafficLog(model: .standard)
        log.requestSeen(Self.toggle())
        let entries = log.recent
        #expect(entries.count == 1)
        #expect(entries.first?.kind == .invoke)
        #expect(entries.first?.summary == "invoke 1/OnOff.Toggle")
        #expect(entries.first?.peer == "fabric 1 node 0x1234")
        // Read again: the same entry, worded once.
        #expect(log.recent == entries)
    }

    @Test func aFollowerGetsEachRequestWorded() async {
        let log = NodeTrafficLog(model: .standard)
        let updates = log.updates()
        log.requestSeen(Self.toggle(endpoint: 2))
        var iterator = updates.makeAsyncIterator()
        let entry = await iterator.next()
        #expect(entry?.summary == "invoke 2/OnOff.Toggle")
        #expect(log.recent == [entry].compactMap { $0 })
    }

    @Test func onlyTheLastKeptStay() {
        let log = NodeTrafficLog(model: .standard)
        for fabric in 1...(NodeTrafficLog.kept + 5) { log.requestSeen(Self.toggle(fabric: FabricIndex(fabric))) }
        let entries = log.recent
        #expect(entries.count == NodeTrafficLog.kept)
        #expect(entries.first?.peer == "fabric 6 node 0x1234")
        #expect(entries.last?.peer == "fabric \(NodeTrafficLog.kept + 5) node 0x1234")
    }
}
