// The status a cluster server answers with. `StatusCode` itself (Matter Core spec 8.10) is
// generated from the spec data: Generated/StatusCode.swift.

/// A status with an optional cluster-specific status (spec 8.10: StatusIB).
public struct InteractionStatus: Error, Sendable, Hashable, CustomStringConvertible {
    public var status: StatusCode
    public var clusterStatus: UInt8?

    public init(_ status: StatusCode, clusterStatus: UInt8? = nil) {
        self.status = status
        self.clusterStatus = clusterStatus
    }

    public static let success = InteractionStatus(.success)

    public var description: String {
        clusterStatus.map { "\(status) (cluster status \($0))" } ?? "\(status)"
    }
}
