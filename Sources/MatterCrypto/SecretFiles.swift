import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Files that hold key material (a node's operational key and IPK, its DAC key, a home's
/// fabric root and controller keys) are readable by their owner only, whatever the umask:
/// directories this creates are 0700 and files 0600. Directories that already exist are left
/// as they are (a user's --state-dir may be a shared one); the files in them are not.
public enum SecretFiles {
    /// Creates `directory` and its missing parents as 0700.
    public static func createDirectory(_ directory: URL) throws {
        var missing: [URL] = []
        var current = directory.standardizedFileURL
        while !FileManager.default.fileExists(atPath: current.path), current.path != "/" {
            missing.append(current)
            current = current.deletingLastPathComponent()
        }
        for url in missing.reversed() {
            do {
                try FileManager.default.createDirectory(
                    at: url, withIntermediateDirectories: false,
                    attributes: [.posixPermissions: 0o700])
            } catch  where FileManager.default.fileExists(atPath: url.path) {
                continue  // made meanwhile by another process
            }
        }
    }

    /// Writes `data` to a new file created 0600 (`url` must not exist yet).
    public static func writeNew(_ data: Data, to url: URL) throws {
        let fd = open(url.path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw Self.error(url) }
        defer { close(fd) }
        try data.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw Self.error(url)
                }
                offset += written
            }
        }
    }

    /// Narrows an existing file to 0600 (one written before this rule, say).
    public static func restrict(_ url: URL) throws {
        guard chmod(url.path, 0o600) == 0 else { throw Self.error(url) }
    }

    private static func error(_ url: URL) -> Error {
        let code = POSIXErrorCode(rawValue: errno) ?? .EIO
        return CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path, NSUnderlyingErrorKey: POSIXError(code)])
    }
}
