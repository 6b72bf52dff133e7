import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// `AnnouncementPacing` across the processes of one home (`matter-sim home
/// --process-per-device`, issue #43). Each child paced only itself, from its own start, so
/// two children that started a few hundred milliseconds apart under load registered at once
/// and the shared Avahi daemon packed their records into one announcement packet, which the
/// server's resolver reads only two SRV records of. The home's children share this file in
/// the state root instead: when a node is ready to advertise it takes the next free slot,
/// `AnnouncementPacing.spacing` after the last one handed out, so the home's first
/// registrations go out one at a time in the order the children get there.
///
/// The file holds the last slot handed out, in nanoseconds of CLOCK_BOOTTIME (one clock for
/// every process of the machine, never set back). A slot in the past (the home's previous
/// run, before the power cut) is simply past; one further ahead than a round of
/// `AnnouncementPacing.slots` (a reboot reset the clock, or the file is damaged) is stale and
/// ignored, and so is a file that does not parse. Taking a slot never blocks start-up: the
/// lock is tried for a bounded time, and any failure means "no wait".
public struct AnnouncementSlots: Sendable {
    public let path: String

    /// The file of `matter-sim home`'s state root its children share.
    public static let fileName = ".announcement-slots"

    public init(path: String) {
        self.path = path
    }

    /// Longest wait handed out; a process after a full round goes at once (as in one
    /// process, past `AnnouncementPacing.slots` a slot holds several).
    static let longestWait = AnnouncementPacing.spacing * (AnnouncementPacing.slots - 1)
    /// How long a process tries for the lock before it advertises without a slot.
    static let lockAttempts = 100
    static let lockRetry = Duration.milliseconds(5)

    /// A slot: when the node may register, on CLOCK_BOOTTIME.
    public struct Slot: Equatable, Sendable {
        /// Nanoseconds of CLOCK_BOOTTIME.
        public var at: Int64
        /// How long after `now` that is.
        public var wait: Duration
    }

    /// Takes this process's slot: how long its first advertisement waits. Zero when the file
    /// cannot be used (the reason goes to `failure`).
    public func takeSlot(failure: (String) -> Void = { _ in }) -> Duration {
        do {
            return try take(now: Self.bootTime()).wait
        } catch {
            failure("\(path): \(error); advertising without a slot")
            return .zero
        }
    }

    /// The slot after the file's last one, recorded in the file under its lock.
    func take(now: Int64) throws -> Slot {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw SlotFileError(call: "open", code: errno) }
        defer { close(fd) }
        try lock(fd)
        defer { _ = flock(fd, LOCK_UN) }
        var buffer = [UInt8](repeating: 0, count: 32)
        let count = pread(fd, &buffer, buffer.count, 0)
        guard count >= 0 else { throw SlotFileError(call: "read", code: errno) }
        let slot = Self.next(after: Self.parse(buffer[0..<count]), now: now)
        let text = Array("\(slot.at)\n".utf8)
        guard ftruncate(fd, 0) == 0, pwrite(fd, text, text.count, 0) == text.count else {
            throw SlotFileError(call: "write", code: errno)
        }
        return slot
    }

    /// The slot `spacing` after `last`, or `now` when that is past, stale or unknown.
    static func next(after last: Int64?, now: Int64) -> Slot {
        let spacing = nanoseconds(AnnouncementPacing.spacing)
        guard let last, last <= now + nanoseconds(longestWait) else { return Slot(at: now, wait: .zero) }
        let candidate = last + spacing
        guard candidate > now, candidate - now <= nanoseconds(longestWait) else { return Slot(at: now, wait: .zero) }
        return Slot(at: candidate, wait: .nanoseconds(candidate - now))
    }

    /// The file's decimal nanoseconds; nil for anything else (a damaged file is no slot).
    static func parse(_ bytes: ArraySlice<UInt8>) -> Int64? {
        let text = String(decoding: bytes, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard let value = Int64(text), value >= 0 else { return nil }
        return value
    }

    private func lock(_ fd: Int32) throws {
        for _ in 0..<Self.lockAttempts {
            if flock(fd, LOCK_EX | LOCK_NB) == 0 { return }
            guard errno == EWOULDBLOCK || errno == EINTR else { throw SlotFileError(call: "flock", code: errno) }
            usleep(UInt32(Self.nanoseconds(Self.lockRetry) / 1_000))
        }
        throw SlotFileError(call: "flock", code: EWOULDBLOCK)
    }

    // real time: external: the other processes of the home read the same clock from the file.
    static func bootTime() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_BOOTTIME, &now)
        return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    struct SlotFileError: Error, CustomStringConvertible {
        var call: String
        var code: Int32
        var description: String { "\(call): \(String(cString: strerror(code)))" }
    }
}
