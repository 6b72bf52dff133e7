import MatterModel
import MatterTLV

/// General Commissioning cluster (Core spec 11.10): the fail-safe, the regulatory
/// configuration and the end of commissioning.
final class GeneralCommissioningServer: GeneralCommissioningHandler {
    static let clusterID = Clusters.GeneralCommissioning.id

    typealias Attribute = Clusters.GeneralCommissioning.Attribute
    typealias Command = Clusters.GeneralCommissioning.Command
    typealias Commands = Clusters.GeneralCommissioning.Commands

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

    /// A NewRegulatoryConfig outside RegulatoryLocationTypeEnum (or too wide for it): the
    /// response's ValueOutsideRange.
    func reply(to error: TLVDecodingError, decoding command: CommandID, fields: CommandFields, context: ClusterContext) -> InvokeResult {
        guard command == Command.setRegulatoryConfig, error.concerns(field: "NewRegulatoryConfig"), error.status == .constraintError else {
            return .failure(error.status)
        }
        let response = Commands.SetRegulatoryConfigResponse(errorCode: .valueOutsideRange, debugText: Self.debugText("\(error)"))
        return .response(Command.setRegulatoryConfigResponse, response.tlv)
    }

    /// 11.10.7.2: ExpiryLengthSeconds (default 900 when a legacy client omits it), Breadcrumb.
    func armFailSafe(_ request: Commands.ArmFailSafe, context: ClusterContext) -> CommandReply<Commands.ArmFailSafeResponse> {
        // The commissioning commands only make sense from a commissioner's session.
        guard let session = context.session else { return .failure(.unsupportedAccess) }
        let error = context.commissioning.armFailSafe(
            expiryLengthSeconds: request.expiryLengthSeconds, breadcrumb: request.breadcrumb, session: session)
        return .response(Commands.ArmFailSafeResponse(errorCode: error))
    }

    func commissioningComplete(
        _ request: Commands.CommissioningComplete, context: ClusterContext
    ) -> CommandReply<Commands.CommissioningCompleteResponse> {
        guard let session = context.session else { return .failure(.unsupportedAccess) }
        // The state could not be saved: FAILURE, the fail-safe still armed.
        guard let error = try? context.commissioning.completeCommissioning(session: session) else { return .failure(.failure) }
        return .response(Commands.CommissioningCompleteResponse(errorCode: error))
    }

    /// 11.10.7.4: the new location must be one LocationCapability allows; the country
    /// code becomes Basic Information's Location.
    func setRegulatoryConfig(
        _ request: Commands.SetRegulatoryConfig, context: ClusterContext
    ) -> CommandReply<Commands.SetRegulatoryConfigResponse> {
        guard context.session != nil else { return .failure(.unsupportedAccess) }
        let countryCode = request.countryCode
        guard countryCode.utf8.count == 2 else { return .failure(.constraintError) }
        let capability =
            RegulatoryLocation(rawValue: UInt8(clamping: context.unsigned(Attribute.locationCapability) ?? 2)) ?? .indoorOutdoor
        guard let location = RegulatoryLocation(rawValue: request.newRegulatoryConfig.rawValue),
            capability == .indoorOutdoor || location == capability
        else {
            return .response(Commands.SetRegulatoryConfigResponse(errorCode: .valueOutsideRange, debugText: countryCode))
        }
        context.set(Attribute.regulatoryConfig, .uint(location.rawValue))
        if let basic = context.peer(BasicInformationServer.self) {
            basic.context.set(BasicInformationServer.Attribute.location, .utf8(countryCode))
        }
        context.commissioning.setBreadcrumb(request.breadcrumb)
        return .response(Commands.SetRegulatoryConfigResponse(errorCode: .ok))
    }

    /// DebugText is at most 128 bytes (11.10.7.3).
    private static func debugText(_ text: String) -> String { String(text.prefix(128)) }
}
