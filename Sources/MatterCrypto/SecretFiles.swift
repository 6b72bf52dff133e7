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

    /// Narrows an existing regular file of this user to 0600 (one written before this rule,
    /// say). Anything else is refused and left untouched: a symbolic link is not followed
    /// (its target may be any file), and a directory, a device, a FIFO, a socket or another
    /// user's file is never a secret file of ours (as root, `--home /` made / mode 0600).
    public static func restrict(_ url: URL) throws {
        if let problem = try regularFileProblem(url) { throw SecretFileError(path: url.path, reason: problem) }
        // Opened without following a link, non-blocking (a FIFO swapped in meanwhile must not
        // hang), and checked again on the descriptor before its mode changes.
        let fd = open(url.path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw Self.error(url) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw Self.error(url) }
        guard status.st_mode & S_IFMT == S_IFREG, status.st_uid == geteuid() else {
            throw SecretFileError(path: url.path, reason: "it was replaced while being opened; left as it is")
        }
        guard fchmod(fd, 0o600) == 0 else { throw Self.error(url) }
    }

    /// Why `url` is not a regular file of this user, as lstat(2) sees it (a link is not
    /// followed); nil when it is one. Throws when it cannot be examined (missing, say).
    public static func regularFileProblem(_ url: URL) throws -> String? {
        var status = stat()
        guard lstat(url.path, &status) == 0 else { throw Self.error(url) }
        let kind: String
        switch status.st_mode & S_IFMT {
        case S_IFREG:
            guard status.st_uid == geteuid() else {
                return "it belongs to uid \(status.st_uid), not to this user (uid \(geteuid())); left as it is"
            }
            return nil
        case S_IFDIR: kind = "a directory"
        case S_IFLNK: kind = "a symbolic link (not followed)"
        case S_IFCHR: kind = "a character device"
        case S_IFBLK: kind = "a block device"
        case S_IFIFO: kind = "a FIFO"
        case S_IFSOCK: kind = "a socket"
        default: kind = "of an unknown type"
        }
        return "it is \(kind), not a regular file; left as it is"
    }

    private static func error(_ url: URL) -> Error {
        let code = POSIXErrorCode(rawValue: errno) ?? .EIO
        return CocoaError(.fileWriteUnknown, userInfo: [NSFilePathErrorKey: url.path, NSUnderlyingErrorKey: POSIXError(code)])
    }
}

/// A path that is not a regular file of this user where one was expected.
public struct SecretFileError: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var reason: String
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }
    public var description: String { "\(path): \(reason)" }
}
