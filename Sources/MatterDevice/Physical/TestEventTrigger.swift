/// The test event triggers (General Diagnostics TestEventTrigger, Core 11.12.7.1) a certification
/// case sends where its test plan has an operator act at the device: each is the physical action
/// it stands for. The codes are the ones connectedhomeip's test plans and example apps use: the
/// cluster ID in the top 16 bits, then the event; some Smoke CO Alarm cases still send the
/// older 0xFFFFFFFF namespace's codes, the same events in the low bits.
enum TestEventTrigger {
    static func action(_ trigger: UInt64) -> PhysicalAction? {
        let older: UInt64 = 0xFFFF_FFFF_0000_0000
        let code = trigger & older == older && (0x90...0xAB).contains(trigger & 0xFFFF) ? 0x005C_0000_0000_0000 | (trigger & 0xFFFF) : trigger
        return switch code {
        // Smoke CO Alarm (0x005C): a warning or critical alarm of either sense, the air clearing
        // (either clear ends both: the action clears smoke and CO together), the hush button.
        case 0x005C_0000_0000_0090: .alarm(.smoke(.warning))
        case 0x005C_0000_0000_009C: .alarm(.smoke(.critical))
        case 0x005C_0000_0000_0091: .alarm(.co(.warning))
        case 0x005C_0000_0000_009D: .alarm(.co(.critical))
        case 0x005C_0000_0000_00A0, 0x005C_0000_0000_00A1: .alarm(.clear)
        case 0x005C_0000_0000_009B: .alarm(.mute)
        // The battery at the Power Source's warning and critical levels, and a fresh one.
        case 0x005C_0000_0000_0095: .battery(percent: 15)
        case 0x005C_0000_0000_009E: .battery(percent: 3)
        case 0x005C_0000_0000_00A5: .battery(percent: 100)
        // Boolean State Configuration (0x0080): the sensor triggers (water at a leak detector)
        // and untriggers.
        case 0x0080_0000_0000_0000: .leak(true)
        case 0x0080_0000_0000_0001: .leak(false)
        default: nil
        }
    }
}
