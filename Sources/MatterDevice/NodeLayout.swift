import MatterModel

/// The node's endpoint structure, as the Descriptor cluster reports it.
struct NodeLayout: Sendable {
    struct Endpoint: Sendable {
        var number: EndpointNumber
        var deviceTypes: [DeviceTypeInstance]
        var serverClusters: [ClusterID]
        var clientClusters: [ClusterID]
        /// nil for the root node (endpoint 0) and for endpoints directly under it.
        var parent: EndpointNumber?
    }

    /// Ascending by endpoint number.
    let endpoints: [Endpoint]

    init(endpoints: [Endpoint]) {
        self.endpoints = endpoints.sorted { $0.number < $1.number }
    }

    func endpoint(_ number: EndpointNumber) -> Endpoint? {
        endpoints.first { $0.number == number }
    }

    /// The PartsList of an endpoint (Core spec 9.5.6.4): the root node lists every
    /// other endpoint; any other endpoint lists all its descendants (the "full-family"
    /// pattern of 9.2.1.1), ascending.
    func parts(of number: EndpointNumber) -> [EndpointNumber] {
        if number == 0 {
            return endpoints.map(\.number).filter { $0 != 0 }
        }
        var result: [EndpointNumber] = []
        var frontier = [number]
        // Parents were checked for cycles when the node was built; the bound is a second guard.
        var budget = endpoints.count
        while let current = frontier.popLast(), budget >= 0 {
            budget -= 1
            let children = endpoints.filter { $0.parent == current && $0.number != current }.map(\.number)
            result.append(contentsOf: children)
            frontier.append(contentsOf: children)
        }
        return Array(Set(result)).sorted()
    }
}
