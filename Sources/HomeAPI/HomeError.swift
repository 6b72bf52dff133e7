import Foundation
import MatterController
import MatterModel
import MatterProtocol
import NIOConcurrencyHelpers
import RelayProtocol

/// The error every HomeAPI call throws (as the Google Home APIs' `HomeError`): a code
/// from the gRPC status space and a message for a person.
public struct HomeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// Error codes, consistent with gRPC status codes.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        case cancelled, unknown, invalidArgument, deadlineExceeded, notFound, alreadyExists, permissionDenied
        case resourceExhausted, failedPrecondition, aborted, outOfRange, unimplemented, `internal`, unavailable
        case dataLoss, unauthenticated
    }

    public let code: Code
    public let message: String

    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(code): \(message)" }
    public var localizedDescription: String { description }

    public static func cancelled(_ message: String = "") -> HomeError { HomeError(code: .cancelled, message: message) }
    public static func unknown(_ message: String = "") -> HomeError { HomeError(code: .unknown, message: message) }
    public static func invalidArgument(_ message: String) -> HomeError { HomeError(code: .invalidArgument, message: message) }
    public static func notFound(_ message: String) -> HomeError { HomeError(code: .notFound, message: message) }
    public static func deadlineExceeded(_ message: String) -> HomeError { HomeError(code: .deadlineExceeded, message: message) }
    public static func unavailable(_ message: String) -> HomeError { HomeError(code: .unavailable, message: message) }
    public static func failedPrecondition(_ message: String) -> HomeError { HomeError(code: .failedPrecondition, message: message) }
    public static func internalError(_ message: String) -> HomeError { HomeError(code: .internal, message: message) }

    /// Maps anything thrown below HomeAPI.
    static func from(_ error: any Error, _ context: String) -> HomeError {
        if let e = error as? HomeError { return e }
        if error is CancellationError { return .cancelled(context) }
        if let r = error as? RelayError { return from(relay: r, context) }
        guard let c = error as? ControllerError else { return HomeError(code: .internal, message: "\(context): \(error)") }
        let message = "\(context): \(c)"
        switch c {
        case .timeout: return HomeError(code: .deadlineExceeded, message: message)
        case .unreachable: return HomeError(code: .unavailable, message: message)
        case .status(let status, _):
            switch status.status {
            case .constraintError, .invalidCommand, .invalidDataType, .dynamicConstraintError:
                return HomeError(code: .invalidArgument, message: message)
            case .unsupportedAccess, .accessRestricted: return HomeError(code: .permissionDenied, message: message)
            case .unsupportedEndpoint, .unsupportedCluster, .unsupportedCommand, .unsupportedAttribute, .unsupportedWrite, .unsupportedRead:
                return HomeError(code: .unimplemented, message: message)
            case .busy, .resourceExhausted: return HomeError(code: .resourceExhausted, message: message)
            case .invalidInState, .needsTimedInteraction, .failsafeRequired: return HomeError(code: .failedPrecondition, message: message)
            case .timeout: return HomeError(code: .deadlineExceeded, message: message)
            case .notFound: return HomeError(code: .notFound, message: message)
            default: return HomeError(code: .unknown, message: message)
            }
        case .invalidResponse: return HomeError(code: .internal, message: message)
        case .attestationFailed: return HomeError(code: .permissionDenied, message: message)
        case .commissioningFailed: return HomeError(code: .aborted, message: message)
        case .paseFailed: return HomeError(code: .unauthenticated, message: message)
        case .invalidSetupCode, .invalidArgument: return HomeError(code: .invalidArgument, message: message)
        case .notFound: return HomeError(code: .notFound, message: message)
        case .cancelled: return HomeError(code: .cancelled, message: message)
        }
    }
}

extension HomeError {
    /// Maps a relay (or hub) failure: a path that is gone is `unavailable`, the device's own
    /// answer maps as it would over the LAN.
    static func from(relay r: RelayError, _ context: String) -> HomeError {
        let message = "\(context): \(r)"
        switch r {
        case .timeout: return HomeError(code: .deadlineExceeded, message: message)
        case .notConnected, .connectionLost, .deviceOffline, .undeliverable, .unknownDevice, .upgradeFailed, .http:
            return HomeError(code: .unavailable, message: message)
        case .unauthorized: return HomeError(code: .unauthenticated, message: message)
        case .forbidden: return HomeError(code: .permissionDenied, message: message)
        case .status(let status): return from(ControllerError.status(InteractionStatus(status), context), context)
        case .invalidResponse: return HomeError(code: .internal, message: message)
        case .invalidArgument: return HomeError(code: .invalidArgument, message: message)
        }
    }
}

/// The body of a public HomeAPI call, which throws `HomeError` by type (`throws(HomeError)`,
/// as the SDK's calls): a `HomeError` passes through as it is, anything a lower layer throws
/// (the controller, the relay, the store, cancellation) becomes one as `HomeError.from` maps
/// it, named by `what`. The one place that mapping happens at the public boundary.
func homeCall<T>(
    _ what: String = #function, isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
) async throws(HomeError) -> T {
    do {
        return try await body()
    } catch {
        throw HomeError.from(error, what)
    }
}

/// Runs `body`, failing with `deadlineExceeded` after `limit` on the home's clock (never a
/// hang; see `withTimeLimit`).
func withDeadline<T: Sendable>(
    _ limit: Duration, _ what: String, clock: any MatterClock, _ body: @escaping @Sendable () async throws -> T
) async throws -> T {
    do {
        return try await withTimeLimit(
            limit, on: clock, orThrow: { HomeError.deadlineExceeded("\(what): no answer within \(limit)") }, body)
    } catch {
        throw HomeError.from(error, what)
    }
}

/// Names are at most 60 Unicode code points: longer ones are cut, empty ones refused unless
/// `allowingEmpty` (automations: the SDK's `automation(name:description:)` defaults to "").
func normalizedName(_ name: String, _ what: String, allowingEmpty: Bool = false) throws(HomeError) -> String {
    let trimmed = name.trimmingCharacters(in: .whitespacesAndNewlines)
    guard !trimmed.isEmpty || allowingEmpty else { throw HomeError.invalidArgument("\(what) name must not be empty") }
    let scalars = trimmed.unicodeScalars
    guard scalars.count > 60 else { return trimmed }
    var view = String.UnicodeScalarView()
    view.append(contentsOf: scalars.prefix(60))
    return String(view)
}
