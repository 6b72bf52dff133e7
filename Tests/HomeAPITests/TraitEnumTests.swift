import HomeAPI
import MatterModel
import MatterTLV
import Testing

/// A trait's enums and bitmaps are the ID layer's (`Clusters.<Name>.<Type>`), one definition
/// for both sides (scripts/matter-codegen.py writes typealiases): a value an app reads or
/// builds through a trait goes into a generated command as it is, with the SDK's spelling.
@Suite struct TraitEnumTests {
    @Test func aTraitsEnumsAndBitmapsAreTheIDLayersTypes() {
        #expect(ObjectIdentifier(Matter.OnOffTrait.StartUpOnOffEnum.self) == ObjectIdentifier(Clusters.OnOff.StartUpOnOffEnum.self))
        #expect(ObjectIdentifier(Matter.ThermostatTrait.SystemModeEnum.self) == ObjectIdentifier(Clusters.Thermostat.SystemModeEnum.self))
        #expect(ObjectIdentifier(Matter.LevelControlTrait.OptionsBitmap.self) == ObjectIdentifier(Clusters.LevelControl.OptionsBitmap.self))
        #expect(ObjectIdentifier(Matter.DoorLockTrait.LockStateEnum.self) == ObjectIdentifier(Clusters.DoorLock.LockStateEnum.self))
    }

    @Test func aTraitsValueIsTheGeneratedCommandsField() throws {
        let effect: Matter.OnOffTrait.EffectIdentifierEnum = .dyingLight
        let command = Clusters.OnOff.Commands.OffWithEffect(effectIdentifier: effect)
        #expect(try Clusters.OnOff.Commands.OffWithEffect(tlv: command.tlv).effectIdentifier == .dyingLight)
        // The SDK's cases, as its reference spells them.
        #expect(Matter.OnOffTrait.StartUpOnOffEnum.allCases == [.off, .on, .toggle])
    }
}
