import DeviceProfile
import MatterModel
import Testing

@Suite("Profiles: the cloud block")
struct CloudBlockTests {
    let level = ClusterPath(endpoint: 1, cluster: ClusterID(0x0008))

    @Test("a device's cloud block resolves: relay, credential, cloud-only clusters on the endpoints that have them")
    func resolves() throws {
        let d = try memoryLoader([:]).loadDevice(
            yaml: device(
                "deviceTypes: [DimmableLight]",
                extra: """
                    cloud:
                      relay: ws://relay.example:8080
                      credential: mrd_abc
                      cloudOnly: [LevelControl, 0x0003]
                    """), file: "d.yaml")
        #expect(d.cloud == CloudSettings(relay: "ws://relay.example:8080", credential: "mrd_abc"))
        #expect(d.endpoint(1)?.cloudOnlyClusters == [ClusterID(0x0008), ClusterID(0x0003)])
        #expect(d.cloudOnlyClusters == [level, ClusterPath(endpoint: 1, cluster: ClusterID(0x0003))])
        // The resolved profile's description says where it connects but shows no secret.
        let text = ProfileDescription(showAttributes: false).render(d)
        #expect(text.contains("cloud relay:   ws://relay.example:8080, with its device credential"))
        #expect(!text.contains("mrd_abc"))
        #expect(text.contains("LevelControl (rev") && text.contains("cloud-only"))
    }

    @Test("every mistake in a cloud block is reported at its path")
    func errors() {
        let diags = diagnostics(
            device(
                "deviceTypes: [OnOffLight]",
                extra: """
                    cloud:
                      relay: http://relay:8080
                      credential: "has space"
                      homeToken: mrd_wrong_kind
                      cloudOnly: [LevelControl, Descriptor, OnOff, OnOff, Nope]
                      cloudonly: []
                    """))
        #expect(
            expectOne(diags, at: "cloud.relay")
                == "expected the relay's base URL, like ws://127.0.0.1:8080 (ws://, the relay's WebSocket scheme), got the scheme 'http'")
        #expect(
            expectOne(diags, at: "cloud.credential")
                == "expected a device credential from `matter-relay device add` (printable characters, no spaces, at most 256)")
        #expect(expectOne(diags, at: "cloud.homeToken") == "this is a device credential (mrd_…); give it as credential")
        #expect(
            expectOne(diags, at: "cloud.cloudOnly[0]")
                == "LevelControl is not a server cluster on any application endpoint of this device (they have: Descriptor, Groups, Identify, OnOff)"
        )
        #expect(
            expectOne(diags, at: "cloud.cloudOnly[1]") == "Descriptor must stay reachable on the local network; it cannot be cloud-only")
        #expect(expectOne(diags, at: "cloud.cloudOnly[3]") == "cluster OnOff is listed twice")
        #expect(expectOne(diags, at: "cloud.cloudOnly[4]")?.hasPrefix("unknown cluster 'Nope'") == true)
        #expect(expectOne(diags, at: "cloud.cloudonly") == "unknown key 'cloudonly'; did you mean 'cloudOnly'?")
        #expect(diags.count == 8, "\(diags.map(\.description))")
    }

    @Test("a relay URL needs the ws scheme and a host; a home token is not a credential")
    func urlsAndSecrets() {
        for (url, expected) in [
            ("ws://", "expected the relay's base URL, like ws://127.0.0.1:8080, got no host in \"ws://\""),
            (
                "relay:8080",
                "expected the relay's base URL, like ws://127.0.0.1:8080 (ws://, the relay's WebSocket scheme), got the scheme 'relay'"
            ),
            ("ws://h:99999", "expected the relay's base URL, like ws://127.0.0.1:8080, got the port 99999"),
            ("ws://h:8080/?x=1", "expected the relay's base URL, like ws://127.0.0.1:8080, without a query or fragment"),
        ] {
            let diags = diagnostics(device("deviceTypes: [OnOffLight]", extra: "cloud: {relay: \"\(url)\"}"))
            #expect(expectOne(diags, at: "cloud.relay") == expected, "\(url)")
        }
        let diags = diagnostics(device("deviceTypes: [OnOffLight]", extra: "cloud: {credential: mrh_home}"))
        #expect(
            expectOne(diags, at: "cloud.credential")
                == "this is a home token (mrh_…); give it as homeToken, the device then registers itself")
        let wrongType = diagnostics(device("deviceTypes: [OnOffLight]", extra: "cloud: [ws://x]"))
        #expect(expectOne(wrongType, at: "cloud")?.hasPrefix("expected a cloud mapping") == true)
    }

    @Test("a home's relay reaches every device; a device entry adds cloud-only clusters and its own credential")
    func homeLayers() throws {
        let light = try shippedText("devices/dimmable-light.yaml")
        let plug = try shippedText("devices/on-off-plug.yaml")
        let home = try memoryLoader(["light.yaml": light, "plug.yaml": plug]).loadHome(
            yaml: """
                cloud: {relay: "ws://127.0.0.1:9000", homeToken: mrh_home}
                structures:
                  - name: House
                    devices:
                      - {profile: light.yaml, name: Lamp, cloud: {cloudOnly: [LevelControl]}}
                      - {profile: plug.yaml, name: Plug, cloud: {credential: mrd_plug, relay: "ws://10.0.0.1:8080"}}
                """, file: "home.yaml")
        let lamp = try #require(home.allDevices.first { $0.name == "Lamp" })
        let plugDevice = try #require(home.allDevices.first { $0.name == "Plug" })
        #expect(lamp.profile.cloud == CloudSettings(relay: "ws://127.0.0.1:9000", homeToken: "mrh_home"))
        #expect(lamp.profile.cloudOnlyClusters == [level])
        #expect(plugDevice.profile.cloud == CloudSettings(relay: "ws://10.0.0.1:8080", credential: "mrd_plug", homeToken: "mrh_home"))
        #expect(plugDevice.profile.cloudOnlyClusters.isEmpty)
    }

    @Test("cloud-block mistakes in a home are reported in the home file; the home's block takes no credential")
    func homeErrors() throws {
        let plug = try shippedText("devices/on-off-plug.yaml")
        let diags = diagnostics(
            """
            cloud: {relay: "ws://r:1", credential: mrd_x}
            structures:
              - name: House
                devices:
                  - {profile: plug.yaml, name: Plug, cloud: {cloudOnly: [LevelControl]}}
            """, file: "home.yaml", others: ["plug.yaml": plug])
        #expect(diags.allSatisfy { $0.file == "home.yaml" }, "\(diags.map(\.description))")
        #expect(expectOne(diags, at: "cloud.credential") == "unknown key 'credential'; expected one of: relay, homeToken")
        #expect(
            expectOne(diags, at: "structures[0].devices[0].cloud.cloudOnly[0]")?
                .hasPrefix("LevelControl is not a server cluster on any application endpoint of this device") == true)
    }
}
