// What the generated Matter.WindowCoveringTrait does not say by itself: the unlabelled form
// of GoToLiftPercentage the guides call (`goToLiftPercentage(5000)`).

extension Matter.WindowCoveringTrait {
    /// Moves the lift to a position in 0.01 % (0 fully open, 10000 fully closed).
    public func goToLiftPercentage(_ liftPercent100thsValue: UInt16) async throws(HomeError) {
        try await goToLiftPercentage(liftPercent100thsValue: liftPercent100thsValue)
    }
}
