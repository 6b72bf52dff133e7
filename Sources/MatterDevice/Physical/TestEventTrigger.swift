import MatterModel

/// The test event triggers (General Diagnostics TestEventTrigger, Core spec 11.12.7.1) a certification
/// case sends where its test plan has an operator act at the device: each is the physical action
/// it stands for. The codes are generated from the model (`Clusters.<Name>.TestEventTrigger`, the
/// ones connectedhomeip's test plans and example apps use).
enum TestEventTrigger {
    static func action(_ trigger: UInt64) -> PhysicalAction? {
        if let smokeCo = Clusters.SmokeCoAlarm.TestEventTrigger(code: trigger) {
            // Each clear ends only its own condition (TC-SMOKECO-2.6: the next highest is then
            // expressed); the battery at the Power Source's warning and critical levels, and a
            // fresh one; contamination and sensitivity are not modelled, so their codes are unknown.
            return switch smokeCo {
            case .warningSmokeAlarm: .alarm(.smoke(.warning))
            case .criticalSmokeAlarm: .alarm(.smoke(.critical))
            case .warningCoAlarm: .alarm(.co(.warning))
            case .criticalCoAlarm: .alarm(.co(.critical))
            case .smokeAlarmClear: .alarm(.cleared(.smoke))
            case .coAlarmClear: .alarm(.cleared(.co))
            case .interconnectSmokeAlarm: .alarm(.interconnect(.smoke, .warning))
            case .interconnectSmokeAlarmClear: .alarm(.interconnect(.smoke, nil))
            case .interconnectCoAlarm: .alarm(.interconnect(.co, .warning))
            case .interconnectCoAlarmClear: .alarm(.interconnect(.co, nil))
            case .hardwareFault: .alarm(.hardwareFault(true))
            case .hardwareFaultClear: .alarm(.hardwareFault(false))
            case .endOfService: .alarm(.endOfService(true))
            case .endOfServiceClear: .alarm(.endOfService(false))
            case .deviceMuted: .alarm(.mute)
            case .deviceMutedClear: .alarm(.unmute)
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
