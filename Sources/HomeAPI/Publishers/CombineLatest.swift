import NIOConcurrencyHelpers
import OpenCombine

// OpenCombine 0.14 has no combineLatest; this is one, with Combine's semantics: once
// both upstreams have produced a value, every new value of either emits the pair of
// latest values; it finishes when both upstreams have finished and fails as soon as
// either fails.

extension Publishers {
    public struct CombineLatestOf<A: Publisher, B: Publisher>: Publisher where A.Failure == B.Failure {
        public typealias Output = (A.Output, B.Output)
        public typealias Failure = A.Failure

        public let a: A
        public let b: B

        public init(_ a: A, _ b: B) {
            self.a = a
            self.b = b
        }

        public func receive<S: Subscriber>(subscriber: S) where S.Input == Output, S.Failure == Failure {
            let inner = CombineLatestSubscription<A, B, S>(downstream: subscriber)
            subscriber.receive(subscription: inner)
            inner.attach(a, b)
        }
    }
}

extension Publisher {
    /// Pairs the latest values of this publisher and `other` (see `Publishers.CombineLatestOf`).
    public func combineLatest<P: Publisher>(_ other: P) -> Publishers.CombineLatestOf<Self, P> where P.Failure == Failure {
        Publishers.CombineLatestOf(self, other)
    }

    /// Combines the latest values with `transform`.
    public func combineLatest<P: Publisher, T>(
        _ other: P, _ transform: @escaping (Output, P.Output) -> T
    )
        -> Publishers.Map<Publishers.CombineLatestOf<Self, P>, T> where P.Failure == Failure
    {
        Publishers.CombineLatestOf(self, other).map { transform($0.0, $0.1) }
    }
}

private final class CombineLatestSubscription<A: Publisher, B: Publisher, Downstream: Subscriber>: Subscription
where A.Failure == B.Failure, Downstream.Input == (A.Output, B.Output), Downstream.Failure == A.Failure {
    private struct State {
        var downstream: Downstream?
        var demand: Subscribers.Demand = .none
        var latestA: A.Output?
        var latestB: B.Output?
        /// A pair produced while there was no demand; only the newest is kept.
        var pending: (A.Output, B.Output)?
        var finishedA = false
        var finishedB = false
        var upstreamA: (any Subscription)?
        var upstreamB: (any Subscription)?
        var completed = false
    }

    private let lock = NIOLock()
    private var state = State()

    init(downstream: Downstream) {
        state.downstream = downstream
    }

    func attach(_ a: A, _ b: B) {
        a.subscribe(Side<A.Output>(parent: self, isA: true) { [self] in self.receivedA($0) })
        b.subscribe(Side<B.Output>(parent: self, isA: false) { [self] in self.receivedB($0) })
    }

    func request(_ demand: Subscribers.Demand) {
        let delivery: (Downstream, (A.Output, B.Output))? = lock.withLock {
            state.demand += demand
            guard let pair = state.pending, state.demand > 0, let d = state.downstream else { return nil }
            state.pending = nil
            state.demand -= 1
            return (d, pair)
        }
        if let (d, pair) = delivery {
            let more = d.receive(pair)
            lock.withLock { state.demand += more }
        }
        finishIfDone()
    }

    func cancel() {
        let (ua, ub) = lock.withLock { () -> ((any Subscription)?, (any Subscription)?) in
            state.completed = true
            state.downstream = nil
            defer { state.upstreamA = nil; state.upstreamB = nil }
            return (state.upstreamA, state.upstreamB)
        }
        ua?.cancel()
        ub?.cancel()
    }

    fileprivate func received(subscription: any Subscription, isA: Bool) {
        let cancelled = lock.withLock { () -> Bool in
            if state.completed { return true }
            if isA { state.upstreamA = subscription } else { state.upstreamB = subscription }
            return false
        }
        if cancelled { subscription.cancel() } else { subscription.request(.unlimited) }
    }

    fileprivate func receivedA(_ value: A.Output) { deliver { $0.latestA = value } }
    fileprivate func receivedB(_ value: B.Output) { deliver { $0.latestB = value } }

    private func deliver(_ update: (inout State) -> Void) {
        let delivery: (Downstream, (A.Output, B.Output))? = lock.withLock {
            guard !state.completed else { return nil }
            update(&state)
            guard let a = state.latestA, let b = state.latestB, let d = state.downstream else { return nil }
            guard state.demand > 0 else {
                state.pending = (a, b)
                return nil
            }
            state.demand -= 1
            return (d, (a, b))
        }
        if let (d, pair) = delivery {
            let more = d.receive(pair)
            lock.withLock { state.demand += more }
        }
    }

    fileprivate func receivedCompletion(_ completion: Subscribers.Completion<A.Failure>, isA: Bool) {
        switch completion {
        case .failure:
            let (d, other) = lock.withLock { () -> (Downstream?, (any Subscription)?) in
                guard !state.completed else { return (nil, nil) }
                state.completed = true
                defer { state.downstream = nil; state.upstreamA = nil; state.upstreamB = nil }
                return (state.downstream, isA ? state.upstreamB : state.upstreamA)
            }
            other?.cancel()
            d?.receive(completion: completion)
        case .finished:
            lock.withLock { if isA { state.finishedA = true } else { state.finishedB = true } }
            finishIfDone()
        }
    }

    /// Both upstreams finished and nothing is left to deliver.
    private func finishIfDone() {
        let d: Downstream? = lock.withLock {
            guard !state.completed, state.finishedA, state.finishedB, state.pending == nil else { return nil }
            state.completed = true
            defer { state.downstream = nil; state.upstreamA = nil; state.upstreamB = nil }
            return state.downstream
        }
        d?.receive(completion: .finished)
    }

    private struct Side<Input>: Subscriber {
        typealias Failure = A.Failure
        let parent: CombineLatestSubscription
        let isA: Bool
        let onValue: (Input) -> Void
        let combineIdentifier = CombineIdentifier()

        func receive(subscription: any Subscription) { parent.received(subscription: subscription, isA: isA) }

        func receive(_ input: Input) -> Subscribers.Demand {
            onValue(input)
            return .none
        }

        func receive(completion: Subscribers.Completion<A.Failure>) { parent.receivedCompletion(completion, isA: isA) }
    }
}
