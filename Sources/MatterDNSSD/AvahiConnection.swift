import CAvahi
import Dispatch
import Logging
import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// What a publisher or browser learns from its connection. Every call comes with the poll
/// mutex held (on the poll thread, or on a caller's thread inside `withLock`).
protocol AvahiClientOwner: AnyObject {
    /// The client is connected and the daemon is in `state` (running, registering or in a
    /// host-name collision): create or re-create what should exist.
    func clientStateChanged(_ client: OpaquePointer, state: AvahiClientState)
    /// The client is about to be freed (the daemon or the bus went away, or shutdown), and
    /// every entry group, browser and resolver made from it with it.
    func clientWillBeFreed()
}

/// One Avahi client on its own threaded poll, reconnecting whenever the daemon goes away.
///
/// Locking: Avahi's threaded poll runs one thread that holds the poll mutex while it calls
/// back into us, and releases it only while it sleeps in poll(2). Every Avahi object made
/// from this client (entry groups, browsers, resolvers) and every stored property marked
/// "guarded" here and in the owners is touched only with that mutex held: on the poll
/// thread inside a callback, or on any other thread inside `withLock`. That mutex is why
/// this class and its owners may be `@unchecked Sendable`. `withLock` notices when it is
/// called on the poll thread itself (a callback that ends up in public API) and then runs
/// the body directly, as the mutex is already held and is not recursive.
///
/// Cancellation never waits for the mutex: a task's cancellation handlers (`onCancel`, an
/// AsyncStream's `onTermination`) run with that task's runtime lock held, and the poll thread
/// resumes continuations (which takes the resumed task's runtime lock) with the mutex held.
/// A handler waiting for the mutex could so deadlock with the poll thread, and every later
/// `withLock` caller with them (the whole process, once the cooperative threads are in
/// it). Handlers hand their work to `withLockSoon`.
final class AvahiConnection: @unchecked Sendable {
    let logger: Logger
    private let poll: OpaquePointer
    /// pthread_self() of the poll thread, recorded by the first timer tick; 0 before.
    private let pollThread = Atomic<UInt>(0)
    /// Runs `withLockSoon`'s work, in order, on a thread of its own (not a Swift task).
    private let soon = DispatchQueue(label: "MatterDNSSD.avahi-soon")

    // Guarded by the poll mutex.
    private(set) var client: OpaquePointer?
    private var reconnectTimer: PollTimer?
    private var stopped = false {
        didSet { isShutDown.store(stopped, ordering: .releasing) }
    }
    /// `stopped`, read without the mutex (a caller that must not wait for it).
    private let isShutDown = Atomic<Bool>(false)
    var hasShutDown: Bool { isShutDown.load(ordering: .acquiring) }
    /// `shutdown()` was called (it may still wait for the mutex): work holding the mutex can
    /// skip what `avahi_client_free` will do anyway.
    private let shutdownRequested = Atomic<Bool>(false)
    var isShuttingDown: Bool { shutdownRequested.load(ordering: .acquiring) }
    private weak var owner: (any AvahiClientOwner)?

    /// How long to wait before trying again when the system bus itself is unreachable.
    private static let busRetryMilliseconds: UInt32 = 1000

    init(logger: Logger) throws(DNSSDError) {
        guard let poll = avahi_threaded_poll_new() else {
            throw .avahi(operation: "avahi_threaded_poll_new", code: Int32(AVAHI_ERR_NO_MEMORY), message: "out of memory")
        }
        self.poll = poll
        self.logger = logger
    }

    deinit {
        shutdown()
        reconnectTimer = nil  // freed before the poll that holds it
        avahi_threaded_poll_free(poll)
    }

    /// Connects and starts the poll thread. With `AVAHI_CLIENT_NO_FAIL` a missing daemon is
    /// not an error (the client waits for it); a missing system bus is.
    func start(owner: any AvahiClientOwner) throws(DNSSDError) {
        // The poll thread does not run yet: nothing else can touch our state.
        self.owner = owner
        var error: Int32 = 0
        guard let client = makeClient(&error) else {
            throw .noSystemBus(message: Self.message(error))
        }
        self.client = client
        // Fires at once on the poll thread, to learn which thread that is.
        reconnectTimer = makeTimer { [unowned self] in timerFired() }
        reconnectTimer?.arm(afterMilliseconds: 0)
        guard avahi_threaded_poll_start(poll) >= 0 else {
            owner.clientWillBeFreed()
            avahi_client_free(client)
            self.client = nil
            stopped = true
            throw .avahi(operation: "avahi_threaded_poll_start", code: Int32(AVAHI_ERR_FAILURE), message: "cannot start the poll thread")
        }
    }

    /// Runs `body` with the poll mutex held, passing the current client (`nil` while
    /// reconnecting). Throws `shutDown` after `shutdown()`.
    func withLock<T>(_ body: (OpaquePointer?) throws(DNSSDError) -> T) throws(DNSSDError) -> T {
        let onPollThread = pthread_equal(pthread_self(), pollThread.load(ordering: .acquiring)) != 0
        if !onPollThread { avahi_threaded_poll_lock(poll) }
        defer { if !onPollThread { avahi_threaded_poll_unlock(poll) } }
        guard !stopped else { throw .shutDown }
        return try body(client)
    }

    /// Runs `body` with the poll mutex held soon, on a queue of this connection, and returns
    /// at once: for cancellation handlers, which must not wait for the mutex (see above).
    /// Nothing runs once the connection is shut down.
    func withLockSoon(_ body: @escaping @Sendable (OpaquePointer?) -> Void) {
        soon.async { try? self.withLock(body) }
    }

    /// `withLockSoon` for work that can fail: `failed` gets what `body` threw (or `shutDown`).
    func withLockSoonOrFail(
        _ failed: @escaping @Sendable (DNSSDError) -> Void, _ body: @escaping @Sendable (OpaquePointer?) throws(DNSSDError) -> Void
    ) {
        soon.async {
            do throws(DNSSDError) { try self.withLock(body) } catch { failed(error) }
        }
    }

    /// Runs `body` with the poll mutex held on this connection's queue and returns its result.
    /// libavahi-client's calls wait for the daemon's D-Bus reply with the mutex held, up to 25 s
    /// when the daemon is busy: on one of the few threads Swift's tasks share, that stalled
    /// every node of a 2,500-node process (PASE went unanswered; issue #43). Here only the
    /// queue's thread waits, and the calling task is suspended.
    func withLockOffThePool<T: Sendable>(
        _ body: @escaping @Sendable (OpaquePointer?) throws(DNSSDError) -> T
    ) async throws(DNSSDError) -> T {
        let result: Result<T, DNSSDError> = await withCheckedContinuation { continuation in
            soon.async {
                do throws(DNSSDError) {
                    continuation.resume(returning: .success(try self.withLock(body)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        return try result.get()
    }

    /// Returns once the work handed to `withLockSoon` so far has run (for tests).
    func waitForSoonWork() {
        soon.sync {}
    }

    /// Runs `body` with the poll mutex held whether or not the connection is shut down.
    func withLockEvenIfStopped<T>(_ body: () -> T) -> T {
        let onPollThread = pthread_equal(pthread_self(), pollThread.load(ordering: .acquiring)) != 0
        if !onPollThread { avahi_threaded_poll_lock(poll) }
        defer { if !onPollThread { avahi_threaded_poll_unlock(poll) } }
        return body()
    }

    /// Frees the client (the daemon withdraws everything it published) and stops the poll
    /// thread. Idempotent. Must not be called from the poll thread.
    func shutdown() {
        let onPollThread = pthread_equal(pthread_self(), pollThread.load(ordering: .acquiring)) != 0
        // A publisher whose last reference goes in a daemon callback (a finished task's
        // context released there) is deinited on the poll thread; after an explicit
        // shutdown that is harmless. The poll thread holds the lock in callbacks.
        if onPollThread, stopped { return }
        precondition(!onPollThread, "AvahiConnection.shutdown() called on the Avahi poll thread")
        shutdownRequested.store(true, ordering: .releasing)
        avahi_threaded_poll_lock(poll)
        guard !stopped else {
            avahi_threaded_poll_unlock(poll)
            return
        }
        stopped = true
        owner?.clientWillBeFreed()
        if let client { avahi_client_free(client) }
        client = nil
        avahi_threaded_poll_unlock(poll)
        avahi_threaded_poll_stop(poll)
    }

    /// A timer of this connection's poll, for an owner's own retries. Made, armed and freed
    /// with the mutex held; it fires on the poll thread with the mutex held.
    func makeTimer(_ fire: @escaping () -> Void) -> PollTimer {
        PollTimer(api: avahi_threaded_poll_get(poll)!, fire: fire)
    }

    /// The daemon's text for an Avahi error code.
    static func message(_ code: Int32) -> String {
        guard let text = avahi_strerror(code) else { return "error \(code)" }
        return String(cString: text)
    }

    /// The client's last error as a `DNSSDError`.
    static func error(_ operation: String, client: OpaquePointer?) -> DNSSDError {
        let code = client.map { avahi_client_errno($0) } ?? Int32(AVAHI_ERR_DISCONNECTED)
        return .avahi(operation: operation, code: code, message: message(code))
    }

    // MARK: - On the poll thread (or before it starts), mutex held

    private func makeClient(_ error: inout Int32) -> OpaquePointer? {
        let api = avahi_threaded_poll_get(poll)
        let client = avahi_client_new(
            api, AVAHI_CLIENT_NO_FAIL,
            { client, state, userdata in
                guard let client, let userdata else { return }
                Unmanaged<AvahiConnection>.fromOpaque(userdata).takeUnretainedValue().clientChanged(client, state)
            }, Unmanaged.passUnretained(self).toOpaque(), &error)
        if client == nil, self.client != nil {
            // The callback saw a client that avahi_client_new then freed on failure.
            owner?.clientWillBeFreed()
            self.client = nil
        }
        return client
    }

    private func clientChanged(_ client: OpaquePointer, _ state: AvahiClientState) {
        guard !stopped else { return }
        // The first callback can come from inside avahi_client_new, before it returns.
        self.client = client
        switch state {
        case AVAHI_CLIENT_S_RUNNING, AVAHI_CLIENT_S_REGISTERING, AVAHI_CLIENT_S_COLLISION:
            logger.debug("Avahi daemon state \(state.rawValue)")
            owner?.clientStateChanged(client, state: state)
        case AVAHI_CLIENT_CONNECTING:
            logger.info("waiting for the Avahi daemon")
        case AVAHI_CLIENT_FAILURE:
            let code = avahi_client_errno(client)
            logger.warning("Avahi connection lost (\(Self.message(code))); reconnecting")
            // Not freed inside its own callback: the timer does it once this returns.
            schedule(afterMilliseconds: 0)
        default:
            break
        }
    }

    private func schedule(afterMilliseconds milliseconds: UInt32) {
        reconnectTimer?.arm(afterMilliseconds: milliseconds)
    }

    /// The timer both records the poll thread (first tick) and reconnects after a failure:
    /// a new client with AVAHI_CLIENT_NO_FAIL waits for the daemon to come back and then
    /// reports S_RUNNING, whereupon the owners publish and browse again.
    private func timerFired() {
        pollThread.store(pthread_self(), ordering: .releasing)
        guard !stopped else { return }
        if let old = client {
            guard avahi_client_get_state(old) == AVAHI_CLIENT_FAILURE else { return }
            owner?.clientWillBeFreed()
            avahi_client_free(old)
            client = nil
        }
        var error: Int32 = 0
        if let fresh = makeClient(&error) {
            client = fresh
        } else {
            // No client at all: the system bus is unreachable. Keep trying.
            logger.warning("cannot reach the system bus (\(Self.message(error))); retrying")
            schedule(afterMilliseconds: Self.busRetryMilliseconds)
        }
    }
}

/// One timeout of an Avahi poll, disarmed until `arm` (see `AvahiConnection.makeTimer`).
final class PollTimer {
    private let api: UnsafePointer<AvahiPoll>
    private var timeout: OpaquePointer?
    private let fire: () -> Void
    private(set) var isArmed = false

    fileprivate init(api: UnsafePointer<AvahiPoll>, fire: @escaping () -> Void) {
        self.api = api
        self.fire = fire
        timeout = api.pointee.timeout_new(
            api, nil,
            { _, userdata in
                guard let userdata else { return }
                let timer = Unmanaged<PollTimer>.fromOpaque(userdata).takeUnretainedValue()
                timer.disarm()
                timer.fire()
            }, Unmanaged.passUnretained(self).toOpaque())
    }

    deinit {
        if let timeout { api.pointee.timeout_free(timeout) }
    }

    /// Fires once, `milliseconds` from now.
    func arm(afterMilliseconds milliseconds: UInt32) {
        guard let timeout else { return }
        var when = timeval()
        avahi_elapse_time(&when, milliseconds, 0)
        api.pointee.timeout_update(timeout, &when)
        isArmed = true
    }

    func disarm() {
        guard let timeout else { return }
        api.pointee.timeout_update(timeout, nil)
        isArmed = false
    }
}

extension DNSSDError {
    /// A failure that may pass if the same is tried later: the daemon did not answer in time
    /// (D-Bus gives up after 25 s with a D-Bus error), or was away. Invalid input, a name
    /// given up after collisions or the daemon's own limits are not.
    public var isTransient: Bool {
        switch self {
        case .timedOut: return true
        case .avahi(_, let code, _):
            let transient: [Int32] = [
                Int32(AVAHI_ERR_DBUS_ERROR), Int32(AVAHI_ERR_TIMEOUT), Int32(AVAHI_ERR_DISCONNECTED), Int32(AVAHI_ERR_NO_DAEMON),
            ]
            return transient.contains(code)
        default: return false
        }
    }
}
