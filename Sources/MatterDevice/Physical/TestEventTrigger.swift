import MatterModel

/// The test event triggers (General Diagnostics TestEventTrigger, Core 11.12.7.1) a certification
/// case sends where its test plan has an operator act at the device: each is the physical action
/// it stands for. The codes are the ones connectedhomeip's test plans and example apps use: the
/// cluster ID in the top 16 bits, then the event; some Smoke CO Alarm cases still send the
/// older namespace (all ones in the top 32 bits), the same events in the low bits.
enum TestEventTrigger {
    /// Smoke CO Alarm events: `force` + n brings condition n about, `clear` + n ends it, and
    /// `critical` + n raises smoke, CO or the battery to Critical (TC-SMOKECO-2.2 to 2.6).
    private static let force: UInt64 = 0x90
    private static let clear: UInt64 = 0xA0
    private static let critical: UInt64 = 0x9C

    static func action(_ trigger: UInt64) -> PhysicalAction? {
        let smoke = UInt64(Clusters.SmokeCoAlarm.id.rawValue)
        let older = trigger >> 32 == UInt64(UInt32.max)
        let cluster = older ? smoke : trigger >> 48
        let event = older ? trigger & UInt64(UInt32.max) : trigger & ((1 << 48) - 1)
        switch cluster {
        case smoke: return smokeAlarm(event)
        // Boolean State Configuration: the sensor triggers (water at a leak detector), 1 untriggers.
        case UInt64(Clusters.BooleanStateConfiguration.id.rawValue): return event < 2 ? .leak(event == 0) : nil
        default: return nil
        }
    }

    /// Condition n as connectedhomeip's Smoke CO Alarm sample numbers them: forced, then cleared.
    /// Contamination and sensitivity (6, 7) are not modelled: those triggers are unknown here.
    private static let conditions: [(forced: PhysicalAction, cleared: PhysicalAction)?] = [
        (.alarm(.smoke(.warning)), .alarm(.cleared(.smoke))),
        (.alarm(.co(.warning)), .alarm(.cleared(.co))),
        (.alarm(.interconnect(.smoke, .warning)), .alarm(.interconnect(.smoke, nil))),
        (.alarm(.hardwareFault(true)), .alarm(.hardwareFault(false))),
        (.alarm(.interconnect(.co, .warning)), .alarm(.interconnect(.co, nil))),
        // The battery at the Power Source's warning level, and a fresh one.
        (.battery(percent: 15), .battery(percent: 100)),
        nil, nil, nil, nil,
        (.alarm(.endOfService(true)), .alarm(.endOfService(false))),
        // The hush button, and the hush ending.
        (.alarm(.mute), .alarm(.unmute)),
    ]
    private static let criticals: [PhysicalAction] = [.alarm(.smoke(.critical)), .alarm(.co(.critical)), .battery(percent: 3)]

    private static func smokeAlarm(_ event: UInt64) -> PhysicalAction? {
        switch event {
        case force..<critical: conditions[Int(event - force)]?.forced
        case critical..<critical + UInt64(criticals.count): criticals[Int(event - critical)]
        case clear..<clear + UInt64(conditions.count): conditions[Int(event - clear)]?.cleared
        default: nil
        }
    }
}
