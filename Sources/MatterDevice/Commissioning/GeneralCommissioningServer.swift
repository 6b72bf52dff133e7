import MatterModel
import MatterTLV

/// General Commissioning cluster (Core spec 11.10): the fail-safe, the regulatory
/// configuration and the end of commissioning.
final class GeneralCommissioningServer: StandardClusterServer {
    static let clusterID = Clusters.GeneralCommissioning.id

    typealias Attribute = Clusters.GeneralCommissioning.Attribute
    typealias Command = Clusters.GeneralCommissioning.Command

    private let configuration: CommissioningConfiguration

    init(configuration: CommissioningConfiguration) {
        self.configuration = configuration
    }

    func initialValue(for attribute: AttributeID) -> TLVValue? {
        switch attribute {
        case Attribute.breadcrumb: .uint(0)
        // BasicCommissioningInfoStruct: FailSafeExpiryLengthSeconds [0], MaxCumulativeFailsafeSeconds [1].
        case Attribute.basicCommissioningInfo:
            .contextStructure([
                (0, .uint(configuration.failSafeExpiryLengthSeconds)),
                (1, .uint(max(configuration.maxCumulativeFailsafeSeconds, configuration.failSafeExpiryLengthSeconds))),
            ])
        case Attribute.locationCapability: .uint(configuration.locationCapability.rawValue)
        // Until a commissioner sets it, the configuration is what the device can be.
        case Attribute.regulatoryConfig: .uint(configuration.locationCapability.rawValue)
        case Attribute.supportsConcurrentConnection: .bool(true)
        default: nil
        }
    }

    /// The breadcrumb starts at 0 on every boot (11.10.6.1).
    func startUp(_ context: ClusterContext) {
        context.set(Attribute.breadcrumb, .uint(0))
    }

    func handles(_ command: CommandID) -> Bool {
        [Command.armFailSafe, Command.setRegulatoryConfig, Command.commissioningComplete].contains(command)
    }

    /// A NewRegulatoryConfig outside RegulatoryLocationTypeEnum is answered in the
    /// response's ErrorCode as ValueOutsideRange (11.10.7.4), not with an IM status
    /// (TC-CGEN-2.4 step 19); the CountryCode length stays a CONSTRAINT_ERROR below.
    func answersConstraintErrors(_ command: CommandID) -> Bool { command == Command.setRegulatoryConfig }

    func invoke(_ command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult {
        guard let session = context.session else {
            // The commissioning commands only make sense from a commissioner's session.
            return .failure(.unsupportedAccess)
        }
        switch command {
        case Command.armFailSafe:
            // 11.10.7.2: ExpiryLengthSeconds (default 900 when a legacy client omits it), Breadcrumb.
            let expiry = UInt16(clamping: fields.unsigned(0) ?? 900)
            guard let breadcrumb = fields.unsigned(1) else { return .failure(.invalidCommand) }
            let error = context.commissioning.armFailSafe(expiryLengthSeconds: expiry, breadcrumb: breadcrumb, session: session)
            return Self.response(Command.armFailSafeResponse, error)
        case Command.setRegulatoryConfig:
            return setRegulatoryConfig(fields, context: context)
        case Command.commissioningComplete:
            // The state could not be saved: FAILURE, the fail-safe still armed.
            guard let error = try? context.commissioning.completeCommissioning(session: session) else { return .failure(.failure) }
            return Self.response(Command.commissioningCompleteResponse, error)
        default:
            return .failure(.unsupportedCommand)
        }
    }

    /// 11.10.7.4: the new location must be one LocationCapability allows; the country
    /// code becomes Basic Information's Location.
    private func setRegulatoryConfig(_ fields: CommandFields, context: ClusterContext) -> InvokeResult {
        guard let raw = fields.unsigned(0), let countryCode = fields.field(1)?.stringValue,
            let breadcrumb = fields.unsigned(2)
        else { return .failure(.invalidCommand) }
        guard countryCode.utf8.count == 2 else { return .failure(.constraintError) }
        let capability =
            RegulatoryLocation(rawValue: UInt8(clamping: context.unsigned(Attribute.locationCapability) ?? 2)) ?? .indoorOutdoor
        guard let location = RegulatoryLocation(rawValue: UInt8(clamping: raw)),
            capability == .indoorOutdoor || location == capability
        else {
            return Self.response(Command.setRegulatoryConfigResponse, .valueOutsideRange, debugText: countryCode)
        }
        context.set(Attribute.regulatoryConfig, .uint(location.rawValue))
        if let basic = context.peer(BasicInformationServer.self) {
            basic.context.set(BasicInformationServer.Attribute.location, .utf8(countryCode))
        }
        context.commissioning.setBreadcrumb(breadcrumb)
        return Self.response(Command.setRegulatoryConfigResponse, .ok)
    }

    /// ErrorCode [0], DebugText [1]: the shape of all three responses.
    private static func response(_ id: CommandID, _ error: CommissioningError, debugText: String = "") -> InvokeResult {
        .response(id, .contextStructure([(0, .uint(error.rawValue)), (1, .utf8(String(debugText.prefix(128))))]))
    }
}
