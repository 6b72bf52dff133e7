/// The test event triggers (General Diagnostics TestEventTrigger, Core 11.12.7.1) a certification
/// case sends where its test plan has an operator act at the device: each is the physical action
/// it stands for. The codes are the ones connectedhomeip's test plans and example apps use: the
/// cluster ID in the top 16 bits, then the event.
enum TestEventTrigger {
    static func action(_ trigger: UInt64) -> PhysicalAction? {
        switch trigger {
        // Smoke CO Alarm (0x005C): a warning or critical alarm of either sense, the air clearing
        // (either clear ends both: the action clears smoke and CO together), the hush button.
        case 0x005C_0000_0000_0090: .alarm(.smoke(.warning))
        case 0x005C_0000_0000_009C: .alarm(.smoke(.critical))
        case 0x005C_0000_0000_0091: .alarm(.co(.warning))
        case 0x005C_0000_0000_009D: .alarm(.co(.critical))
        case 0x005C_0000_0000_00A0, 0x005C_0000_0000_00A1: .alarm(.clear)
        case 0x005C_0000_0000_009B: .alarm(.mute)
        // Boolean State Configuration (0x0080): the sensor triggers (water at a leak detector)
        // and untriggers.
        case 0x0080_0000_0000_0000: .leak(true)
        case 0x0080_0000_0000_0001: .leak(false)
        default: nil
        }
    }
}
