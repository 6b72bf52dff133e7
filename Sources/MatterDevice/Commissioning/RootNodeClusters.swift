import MatterModel

extension ClusterInstanceDescription {
    /// The commissioning clusters of a root node endpoint (Root Node device type 0x0016)
    /// on Ethernet: General Commissioning, Network Commissioning (ET), General Diagnostics,
    /// Administrator Commissioning (with BC), Operational Credentials, Group Key
    /// Management and Access Control. Basic Information and Descriptor are left to the description.
    public static var rootNodeCommissioningClusters: [ClusterInstanceDescription] {
        [
            ClusterInstanceDescription(id: AccessControlServer.clusterID),
            ClusterInstanceDescription(id: GeneralCommissioningServer.clusterID),
            ClusterInstanceDescription(id: NetworkCommissioningServer.clusterID, features: ["ET"]),
            ClusterInstanceDescription(id: GeneralDiagnosticsServer.clusterID),
            ClusterInstanceDescription(id: AdministratorCommissioningServer.clusterID, features: ["BC"]),
            ClusterInstanceDescription(id: OperationalCredentialsServer.clusterID),
            ClusterInstanceDescription(id: GroupKeyManagementServer.clusterID),
        ]
    }
}
