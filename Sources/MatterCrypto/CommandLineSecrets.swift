import Foundation

/// Tokens and credentials the command-line tools take (matter-sim, homectl, matter-relay).
/// On the command line itself they are visible to every user in `ps`, so each also comes
/// from a file (`--…-file PATH`) or an environment variable, the forms to use.
public enum CommandLineSecrets {
    /// Longer than any token: the file is not one (a log, /dev/zero).
    static let largest = 64 * 1024

    /// The secret in a file: its first line, without surrounding whitespace. A pipe works
    /// too (`--relay-home-token-file <(pass show relay)`).
    public static func read(file path: String) throws -> String {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            let reason = String(cString: strerror(errno))
            throw SecretFileError(path: path, reason: "cannot read it (\(reason))")
        }
        defer { try? handle.close() }
        let data: Data
        do {
            data = try handle.read(upToCount: largest + 1) ?? Data()
        } catch {
            throw SecretFileError(path: path, reason: "cannot read it (\(error.localizedDescription))")
        }
        guard data.count <= largest else {
            throw SecretFileError(path: path, reason: "more than \(largest) bytes; expected a token on one line")
        }
        let line = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
        let secret = line.trimmingCharacters(in: .whitespaces)
        guard !secret.isEmpty else { throw SecretFileError(path: path, reason: "it is empty; expected the token on its first line") }
        return secret
    }

    /// The secret in an environment variable; nil when it is unset or empty.
    public static func environment(_ name: String, in environment: [String: String] = ProcessInfo.processInfo.environment) -> String? {
        guard let value = environment[name]?.trimmingCharacters(in: .whitespacesAndNewlines), !value.isEmpty else { return nil }
        return value
    }
}
