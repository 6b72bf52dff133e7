import Foundation
import MatterModel

/// What a local hub needs to join a home's fabric and serve its controllers, as the
/// home's controller issues it (`Home.issueHubCredentials`) and `matter-relay serve
/// --mode hub --credentials FILE` reads it: the fabric root certificate, the hub's NOC
/// and private key, the IPK epoch key, fabric and node IDs, the home ID and token the
/// controllers present, and the devices the hub reaches.
///
/// The JSON file holds a private key and a bearer token: it is written readable by its
/// owner only. Byte strings are base64; IDs are JSON numbers.
public struct HubCredentials: Sendable, Hashable, Codable {
    /// One device the hub reaches over CASE, under its relay device ID (its serial number).
    public struct Device: Sendable, Hashable, Codable {
        public var deviceID: String
        public var nodeID: UInt64
        public var host: String
        public var port: Int

        public init(deviceID: String, nodeID: UInt64, host: String, port: Int) {
            self.deviceID = deviceID
            self.nodeID = nodeID
            self.host = host
            self.port = port
        }
    }

    /// Layout version of the file.
    public var version: Int = 1
    public var fabricID: UInt64
    public var nodeID: UInt64
    public var rootCertificate: Data
    public var intermediateCertificate: Data?
    public var noc: Data
    public var privateKey: Data
    public var ipkEpochKey: Data
    public var homeID: String
    public var homeToken: String
    public var devices: [Device]

    public init(identity: FabricIdentity, homeID: String, homeToken: String, devices: [Device]) {
        fabricID = identity.fabricID
        nodeID = identity.nodeID
        rootCertificate = Data(identity.rootCertificate)
        intermediateCertificate = identity.intermediateCertificate.map { Data($0) }
        noc = Data(identity.noc)
        privateKey = Data(identity.operationalKey)
        ipkEpochKey = Data(identity.ipkEpochKey)
        self.homeID = homeID
        self.homeToken = homeToken
        self.devices = devices
    }

    /// The hub's identity on the fabric, checked (key matches NOC, IDs agree).
    public var identity: FabricIdentity {
        get throws {
            try FabricIdentity(
                fabricID: fabricID, nodeID: nodeID, rootCertificate: [UInt8](rootCertificate),
                intermediateCertificate: intermediateCertificate.map { [UInt8]($0) }, noc: [UInt8](noc),
                operationalKey: [UInt8](privateKey), ipkEpochKey: [UInt8](ipkEpochKey))
        }
    }

    /// Reads and checks a credentials file; errors name the file and what is wrong.
    public static func read(from url: URL) throws -> HubCredentials {
        let data: Data
        do { data = try Data(contentsOf: url) } catch {
            throw ControllerError.invalidArgument("\(url.path): cannot read the hub credentials: \(error.localizedDescription)")
        }
        let credentials: HubCredentials
        do { credentials = try JSONDecoder().decode(HubCredentials.self, from: data) } catch let DecodingError.keyNotFound(key, _) {
            throw ControllerError.invalidArgument("\(url.path): field '\(key.stringValue)' is missing")
        } catch let DecodingError.typeMismatch(_, context), let DecodingError.valueNotFound(_, context),
            let DecodingError.dataCorrupted(context)
        {
            let field = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            throw ControllerError.invalidArgument("\(url.path): field '\(field.isEmpty ? "(root)" : field)': \(context.debugDescription)")
        } catch {
            throw ControllerError.invalidArgument("\(url.path): not hub credentials JSON: \(error)")
        }
        guard credentials.version == 1 else {
            throw ControllerError.invalidArgument("\(url.path): field 'version' is \(credentials.version); expected 1")
        }
        do { _ = try credentials.identity } catch {
            throw ControllerError.invalidArgument("\(url.path): \(error)")
        }
        guard !credentials.homeToken.isEmpty else { throw ControllerError.invalidArgument("\(url.path): field 'homeToken' is empty") }
        for (index, device) in credentials.devices.enumerated() {
            guard !device.deviceID.isEmpty, (1...65535).contains(device.port) else {
                throw ControllerError.invalidArgument(
                    "\(url.path): field 'devices[\(index)]': expected a device ID and a port in 1...65535")
            }
        }
        return credentials
    }

    /// Writes the file readable by its owner only (it holds a private key and a token).
    public func write(to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(self)
        let manager = FileManager.default
        try? manager.removeItem(at: url)
        guard manager.createFile(atPath: url.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw ControllerError.invalidArgument("\(url.path): cannot write the hub credentials")
        }
    }
}
