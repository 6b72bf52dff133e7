import MatterModel

/// The test event triggers (General Diagnostics TestEventTrigger, Core spec 11.12.7.1) a certification
/// case sends where its test plan has an operator act at the device: each is the physical action
/// it stands for. The codes are generated from the model (`Clusters.<Name>.TestEventTrigger`, the
/// ones connectedhomeip's test plans use).
enum TestEventTrigger {
    static func action(_ trigger: UInt64) -> PhysicalAction? {
        if let smokeCo = Clusters.SmokeCoAlarm.TestEventTrigger(code: trigger) {
            // A warning or critical alarm of either sense, the air clearing (either clear ends
            // both: the action clears smoke and CO together), the hush button; the battery at
            // the Power Source's warning and critical levels, and a fresh one.
            return switch smokeCo {
            case .warningSmokeAlarm: .alarm(.smoke(.warning))
            case .criticalSmokeAlarm: .alarm(.smoke(.critical))
            case .warningCoAlarm: .alarm(.co(.warning))
            case .criticalCoAlarm: .alarm(.co(.critical))
            case .smokeAlarmClear, .coAlarmClear: .alarm(.clear)
            case .deviceMuted: .alarm(.mute)
            case .warningBatteryAlert: .battery(percent: 15)
            case .criticalBatteryAlert: .battery(percent: 3)
            case .batteryAlertClear: .battery(percent: 100)
            }
        }
        // Boolean State Configuration: the sensor triggers (water at a leak detector) and untriggers.
        return switch Clusters.BooleanStateConfiguration.TestEventTrigger(code: trigger) {
        case .sensorTrigger: .leak(true)
        case .sensorUntrigger: .leak(false)
        case nil: nil
        }
    }
}
