import OpenCombine

/// Something in the home graph with a stable identifier.
public protocol HomeObject: Hashable, Sendable {
    var id: String { get }
}

/// A live view of a set of home objects (structures, rooms or devices), as the Google
/// Home APIs' `Query`: `batched()` emits the whole current set on every change,
/// `stream()` each element that was added or changed, `list()` the current set once.
public struct Query<T: HomeObject>: Sendable {
    let source: @Sendable () -> AnyPublisher<Set<T>, HomeError>
    /// Brings the snapshot up to date with the store (another Home on the same file may
    /// have written since the last poll), so `list()` never answers with older data than a
    /// write that already returned.
    let refresh: @Sendable () async throws -> Void

    init(
        refresh: @escaping @Sendable () async throws -> Void,
        _ source: @escaping @Sendable () -> AnyPublisher<Set<T>, HomeError>
    ) {
        self.refresh = refresh
        self.source = source
    }

    /// The whole current set now, and again on every add, remove or change.
    public func batched() -> AnyPublisher<Set<T>, HomeError> {
        source()
    }

    /// Each element as it appears or changes (the first emission of `batched()` counts
    /// as all of them appearing). Removals are visible through `batched()`.
    public func stream() -> AnyPublisher<T, HomeError> {
        source()
            .scan((previous: [String: T](), changed: [T]())) { state, current in
                var changed: [T] = []
                var next: [String: T] = [:]
                for element in current {
                    next[element.id] = element
                    if state.previous[element.id] != element { changed.append(element) }
                }
                return (next, changed.sorted { $0.id < $1.id })
            }
            .flatMap(maxPublishers: .unlimited) { Publishers.Sequence<[T], HomeError>(sequence: $0.changed) }
            .eraseToAnyPublisher()
    }

    /// The current set (the first value of `batched()`, once the store has been checked).
    /// It throws only `HomeError`s (`homeCall`), though not by type:
    // untyped-throws: typed, it crashes Swift 6.3.1 compiling the guides' `catch let _ as HomeError`.
    // (SILGen's ownership verifier, on `do { s = try await home.structures().list().first(where: …) }
    // catch let _ as HomeError {}` in a throwing async function; the guides' code stays as written.)
    public func list() async throws -> Set<T> {
        try await homeCall {
            try await refresh()
            for try await value in source().first().values { return value }
            throw HomeError.cancelled("the home was closed")
        }
    }

    /// The current set and every later one, as an async sequence.
    public var values: AsyncThrowingPublisher<AnyPublisher<Set<T>, HomeError>> {
        batched().values
    }
}
