import MatterModel
import MatterProtocol
import MatterCrypto
import MatterTLV
import Testing

@testable import MatterDevice

/// The generated handlers (Sources/MatterDevice/Generated): a request decoded into its type
/// before the server's method runs, and a field that does not fit its type answered as the
/// cluster's spec says, not always with the generic status. These reach the servers only for
/// the commands whose range errors the node leaves to them (`answersConstraintErrors`).
@Suite struct TypedHandlerTests {
    let clock = ManualClock()

    /// 11.10.7.4: a NewRegulatoryConfig outside RegulatoryLocationTypeEnum, even one wider than
    /// its enum8, is SetRegulatoryConfigResponse's ValueOutsideRange, not a CONSTRAINT_ERROR.
    @Test func aLocationTooWideForItsEnumIsValueOutsideRange() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let pase = paseSession(1)
        for location: UInt64 in [3, 300] {
            let response = try await node.call(
                0, CommissioningIDs.generalCommissioning, 0x02, fields((0, .unsigned(location)), (1, .utf8("DE")), (2, u(3))),
                session: pase)
            #expect(response[context: 0] == u(1), "location \(location)")
        }
        await node.stop()
    }

    /// 11.18.6.3: a CertificateType too wide for its enum8 is INVALID_COMMAND like an unknown one.
    @Test func aCertificateTypeTooWideIsInvalidCommand() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let pase = paseSession(1)
        for type: UInt64 in [0, 3, 300] {
            #expect(
                await node.status(0, CommissioningIDs.operationalCredentials, 0x02, fields((0, .unsigned(type))), session: pase)
                    == .status(InteractionStatus(.invalidCommand)), "type \(type)")
        }
        let dac = try await node.call(0, CommissioningIDs.operationalCredentials, 0x02, fields((0, u(1))), session: pase)
        #expect(dac[context: 0]?.bytesValue?.isEmpty == false)
        await node.stop()
    }

    /// 11.19.8.1: Iterations past UInt32 is PAKEParameterError (cluster status 3), as an
    /// out-of-range count is; a Discriminator past UInt16 is INVALID_COMMAND.
    @Test func openCommissioningWindowFieldsTooWideKeepTheirStatuses() async throws {
        let node = try commissionableNode(stateDirectory: nil, clock: clock)
        let commissioner = try TestCommissioner()
        let fabric = try await commissioner.commission(node, paseID: 1, caseID: 2)
        let admin = commissioner.adminSession(3, fabric: fabric)
        let salt = randomBytes(16)
        let verifier = try Spake2pVerifier(passcode: 20202021, salt: salt, iterations: 1000)
        func open(discriminator: UInt64, iterations: UInt64) async -> InvokeResult {
            await node.status(
                0, CommissioningIDs.administratorCommissioning, 0x00,
                fields(
                    (0, u(180)), (1, .bytes(verifier.serialized)), (2, .unsigned(discriminator)), (3, .unsigned(iterations)),
                    (4, .bytes(salt))),
                session: admin, timed: true)
        }
        #expect(await open(discriminator: 3840, iterations: 1 << 33) == .status(InteractionStatus(.failure, clusterStatus: 3)))
        #expect(await open(discriminator: 1 << 17, iterations: 1000) == .status(InteractionStatus(.invalidCommand)))
        #expect(await open(discriminator: 3840, iterations: 1000) == .success)
        await node.stop()
    }
}
