import MatterModel

/// Cluster, command and attribute numbers the controller itself uses
/// (Matter Core spec chapter 11; Application Cluster spec chapter 1).
public enum ControllerIDs {
    public static let descriptor = ClusterID(0x001D)
    public static let basicInformation = ClusterID(0x0028)
    public static let generalCommissioning = ClusterID(0x0030)
    public static let operationalCredentials = ClusterID(0x003E)

    public enum GeneralCommissioning {
        public static let armFailSafe = CommandID(0x00)
        public static let setRegulatoryConfig = CommandID(0x02)
        public static let commissioningComplete = CommandID(0x04)
    }

    public enum OperationalCredentials {
        public static let attestationRequest = CommandID(0x00)
        public static let certificateChainRequest = CommandID(0x02)
        public static let csrRequest = CommandID(0x04)
        public static let addNOC = CommandID(0x06)
        public static let addTrustedRootCertificate = CommandID(0x0B)
        public static let removeFabric = CommandID(0x0A)
        /// CurrentFabricIndex attribute.
        public static let currentFabricIndex = AttributeID(0x0005)
    }

    public enum Descriptor {
        public static let deviceTypeList = AttributeID(0x0000)
        public static let serverList = AttributeID(0x0001)
        public static let partsList = AttributeID(0x0003)
    }
}
