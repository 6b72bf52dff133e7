import MatterModel
import MatterProtocol
import MatterTLV
import Testing
@testable import MatterDevice

// The node as the Interaction Model sees it: paths, statuses, global attributes,
// Descriptor, data versions and the change stream.
@Suite struct NodeTests {
    let clock = ManualClock()

    @Test func unsupportedPathsGiveTheirStatusCodes() async throws {
        let node = try dimmableLight(clock: clock)
        func readStatus(_ endpoint: EndpointNumber, _ cluster: ClusterID, _ attribute: UInt32) async -> InteractionStatus? {
            if case .failure(let status) = await node.read(
                AttributePath(endpoint: endpoint, cluster: cluster, attribute: AttributeID(attribute)))
            {
                return status
            }
            return nil
        }
        #expect(await readStatus(7, IDs.onOff, 0) == InteractionStatus(.unsupportedEndpoint))
        #expect(await readStatus(1, IDs.windowCovering, 0) == InteractionStatus(.unsupportedCluster))
        #expect(await readStatus(0, IDs.onOff, 0) == InteractionStatus(.unsupportedCluster))
        #expect(await readStatus(1, IDs.onOff, 0x1234) == InteractionStatus(.unsupportedAttribute))
        #expect(await readStatus(1, IDs.onOff, 0) == nil)

        #expect(await node.write(7, IDs.onOff, 0x4001, u(1)) == InteractionStatus(.unsupportedEndpoint))
        #expect(await node.write(1, IDs.basicInformation, 0x0005, .utf8("x")) == InteractionStatus(.unsupportedCluster))
        #expect(await node.write(1, IDs.onOff, 0x1234, u(1)) == InteractionStatus(.unsupportedAttribute))
        #expect(await node.write(1, IDs.onOff, 0x0000, .bool(true)) == InteractionStatus(.unsupportedWrite))

        #expect(await node.invoke(7, IDs.onOff, 0x01) == .status(InteractionStatus(.unsupportedEndpoint)))
        #expect(await node.invoke(1, IDs.windowCovering, 0x00) == .status(InteractionStatus(.unsupportedCluster)))
        #expect(await node.invoke(1, IDs.onOff, 0x33) == .status(InteractionStatus(.unsupportedCommand)))
        #expect(await node.invoke(1, IDs.descriptor, 0x00) == .status(InteractionStatus(.unsupportedCommand)))
        // A CASE subject the ACL grants nothing is refused; only internal requests bypass access control.
        let stranger = SessionContext(subject: SubjectDescriptor(authMode: .case, fabricIndex: 1, subject: 0x77))
        let lowPrivilege = await node.invoke(
            CommandPath(endpoint: 1, cluster: IDs.onOff, command: CommandID(1)),
            fields: .structure([]), session: stranger)
        #expect(lowPrivilege == .status(InteractionStatus(.unsupportedAccess)))
    }

    @Test func globalAttributesFollowTheModelAndFeatures() async throws {
        let node = try dimmableLight(clock: clock)
        let model = MatterModel.standard
        let onOffDefinition = try #require(model.cluster(IDs.onOff))
        #expect(await node.uint(1, IDs.onOff, IDs.clusterRevision.rawValue) == UInt64(onOffDefinition.revision))
        #expect(await node.uint(1, IDs.onOff, IDs.featureMap.rawValue) == 0x01)  // LT
        #expect(await node.uint(1, IDs.levelControl, IDs.featureMap.rawValue) == 0x03)  // OO | LT
        #expect(uintList(await node.value(1, IDs.onOff, IDs.acceptedCommandList.rawValue)) == [0x00, 0x01, 0x02, 0x40, 0x41, 0x42])
        #expect(uintList(await node.value(1, IDs.onOff, IDs.generatedCommandList.rawValue)) == [])
        #expect(uintList(await node.value(1, IDs.levelControl, IDs.acceptedCommandList.rawValue)) == Array(0...7))

        let attributes = uintList(await node.value(1, IDs.onOff, IDs.attributeList.rawValue))
        #expect(attributes == [0x0000, 0x4000, 0x4001, 0x4002, 0x4003, 0xFFF8, 0xFFF9, 0xFFFB, 0xFFFC, 0xFFFD])
        // The list is also what the composition reports for wildcard expansion.
        let expanded = node.composition.expand(endpoint: 1, cluster: IDs.onOff, attribute: nil).map { UInt64($0.attribute.rawValue) }
        #expect(expanded == attributes)
        // Every attribute the list names can be read.
        for attribute in attributes {
            #expect(await node.value(1, IDs.onOff, UInt32(attribute)) != nil)
        }
    }

    @Test func wildcardExpansionSkipsWhatIsNotThere() throws {
        let node = try dimmableLight(clock: clock)
        let onOffEverywhere = node.composition.expand(endpoint: nil, cluster: IDs.onOff, attribute: AttributeID(0))
        #expect(onOffEverywhere == [AttributePath(endpoint: 1, cluster: IDs.onOff, attribute: AttributeID(0))])
        #expect(node.composition.endpoints == [0, 1])
        #expect(node.composition.clusters(on: 1) == [IDs.identify, IDs.onOff, IDs.levelControl, IDs.descriptor].sorted())
        #expect(node.composition.expand(endpoint: 5, cluster: nil, attribute: nil).isEmpty)
    }

    @Test func descriptorDescribesTheEndpoints() async throws {
        let node = try dimmableLight(clock: clock)
        #expect(uintList(await node.value(0, IDs.descriptor, 0x0003)) == [1])
        #expect(uintList(await node.value(1, IDs.descriptor, 0x0003)) == [])
        #expect(uintList(await node.value(1, IDs.descriptor, 0x0001)) == [0x0003, 0x0006, 0x0008, 0x001D])
        guard case .array(let deviceTypes)? = await node.value(1, IDs.descriptor, 0x0000) else {
            Issue.record("DeviceTypeList is not a list")
            return
        }
        #expect(deviceTypes.count == 1)
        #expect(deviceTypes.first?.value[context: 0] == u(0x0101))
    }

    @Test func composedDevicesListTheirWholeFamily() async throws {
        let part = { (number: EndpointNumber, parent: EndpointNumber?) in
            EndpointDescription(
                number: number, deviceTypes: [deviceType(IDs.dimmableLight)],
                serverClusters: [ClusterInstanceDescription(id: IDs.onOff)], parent: parent)
        }
        let node = try makeNode([rootEndpoint(), part(1, nil), part(2, 1), part(3, 2), part(4, nil)], clock: clock)
        #expect(uintList(await node.value(0, IDs.descriptor, 0x0003)) == [1, 2, 3, 4])
        #expect(uintList(await node.value(1, IDs.descriptor, 0x0003)) == [2, 3])
        #expect(uintList(await node.value(2, IDs.descriptor, 0x0003)) == [3])
        #expect(uintList(await node.value(4, IDs.descriptor, 0x0003)) == [])
    }

    @Test func readsCarryTheDataVersionAndOnlyChangesBumpIt() async throws {
        let node = try dimmableLight(on: false, clock: clock)
        let path = AttributePath(endpoint: 1, cluster: IDs.onOff, attribute: AttributeID(0))
        let before = try await node.read(path).get()
        #expect(before.value == .bool(false))
        _ = await node.invoke(1, IDs.onOff, 0x01)
        let after = try await node.read(path).get()
        #expect(after.value == .bool(true))
        #expect(after.dataVersion == before.dataVersion &+ 1)
        // Writing the value an attribute already has changes nothing.
        let onTime = AttributePath(endpoint: 1, cluster: IDs.onOff, attribute: AttributeID(0x4001))
        let current = try await node.read(onTime).get()
        #expect(await node.write(onTime, value: current.value) == .success)
        #expect(try await node.read(onTime).get().dataVersion == current.dataVersion)
        // Other clusters keep their own version.
        let level = ClusterPath(endpoint: 1, cluster: IDs.levelControl)
        #expect(await node.dataVersion(of: level) != nil)
    }

    @Test func everySubscriberSeesEveryChange() async throws {
        let node = try dimmableLight(on: false, clock: clock)
        let first = node.changes, second = node.changes
        _ = await node.invoke(1, IDs.onOff, 0x01)
        _ = await node.write(1, IDs.onOff, 0x4001, u(30))
        await node.stop()
        var a: [AttributeChange] = [], b: [AttributeChange] = []
        for await change in first { a.append(change) }
        for await change in second { b.append(change) }
        #expect(a == b)
        #expect(a.bools(IDs.onOff, 0) == [true])
        #expect(a.values(IDs.onOff, 0x4001) == [30])
        #expect(a.map(\.dataVersion) == a.map(\.dataVersion).sorted())
    }

    @Test func badDescriptionsAreRejectedWithTheirPlace() throws {
        func build(_ endpoints: [EndpointDescription]) -> NodeDescriptionError? {
            do {
                _ = try makeNode(endpoints, clock: clock)
                return nil
            } catch {
                return error
            }
        }
        let unknownCluster = build([
            rootEndpoint(),
            EndpointDescription(
                number: 1, deviceTypes: [], serverClusters: [ClusterInstanceDescription(id: ClusterID(0x7FFF_0001))]),
        ])
        #expect(unknownCluster?.path.contains("endpoint 1") == true)

        let unknownFeature = build([
            rootEndpoint(),
            EndpointDescription(
                number: 1, deviceTypes: [], serverClusters: [ClusterInstanceDescription(id: IDs.onOff, features: ["XYZ"])]),
        ])
        #expect(unknownFeature?.message.contains("XYZ") == true)

        let badValue = build([
            rootEndpoint(),
            EndpointDescription(
                number: 1, deviceTypes: [],
                serverClusters: [ClusterInstanceDescription(id: IDs.onOff, attributes: [AttributeID(0): .utf8("on")])]),
        ])
        #expect(badValue?.path.contains("attribute") == true)

        let featureGated = build([
            rootEndpoint(),
            EndpointDescription(
                number: 1, deviceTypes: [],
                serverClusters: [ClusterInstanceDescription(id: IDs.onOff, attributes: [AttributeID(0x4001): u(1)])]),
        ])
        #expect(featureGated != nil)

        #expect(build([rootEndpoint(), rootEndpoint()])?.message.contains("twice") == true)
        let cycle = build([
            rootEndpoint(),
            EndpointDescription(number: 1, deviceTypes: [], serverClusters: [], parent: 2),
            EndpointDescription(number: 2, deviceTypes: [], serverClusters: [], parent: 1),
        ])
        #expect(cycle?.message.contains("cycle") == true)
        let missingParent = build([rootEndpoint(), EndpointDescription(number: 1, deviceTypes: [], serverClusters: [], parent: 9)])
        #expect(missingParent != nil)
    }
}
