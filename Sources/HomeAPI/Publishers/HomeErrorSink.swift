import OpenCombine

extension Publisher where Failure == HomeError {
    /// Receives values and ignores the completion, as the Home APIs' guides write
    /// `.sink { value in ... }` on their HomeError publishers.
    public func sink(receiveValue: @escaping (Output) -> Void) -> AnyCancellable {
        sink(receiveCompletion: { _ in }, receiveValue: receiveValue)
    }
}
