import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The process's file descriptors (RLIMIT_NOFILE): a node's state files are written through
/// new descriptors, so a server that lets connections take them all makes a commissioning
/// fail to save. `raiseToHard` at start gives the most the system allows; a server accepting
/// connections leaves a reserve (`openCount` against `softLimit`).
public enum DescriptorLimit {
    /// The soft limit now; nil when it cannot be read or is unlimited.
    public static var softLimit: Int? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        return Int(clamping: limit.rlim_cur)
    }

    /// Raises the soft limit to the hard one (a shell's `ulimit -n` default is often 1,024 of
    /// a hard 524,288); the soft limit after.
    @discardableResult
    public static func raiseToHard() -> Int? {
        var limit = rlimit()
        guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return nil }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            _ = setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &raised)
        }
        return softLimit
    }

    /// Descriptors open in this process (the entries of /proc/self/fd, less the one reading
    /// it); nil where there is no /proc.
    public static func openCount() -> Int? {
        guard let directory = opendir("/proc/self/fd") else { return nil }
        defer { closedir(directory) }
        var count = 0
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { $0.first }
            if name != UInt8(ascii: ".") { count += 1 }
        }
        return count - 1
    }
}
