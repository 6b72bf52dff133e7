// The Device API guide (seeds/000, German: "Auf Geräte und Gerätemetadaten für iOS
// zugreifen"), every Swift block as the guide prints it, between `guide-block` markers
// (scripts/check-guide-code.py checks them against the seeds).
//
// Wrapped: each block in a method of `DeviceGuide`, which plays the app (`self.home`,
// `myDeviceId`). Supplied as parameters, the variables a block assumes from an earlier
// step: `devices`, `device`, `device1`, `basicInfoTrait`, `levelControlTrait`,
// `dimmableLightDeviceType`, `theDevice`. Supplied as the app's: the vendor's own trait
// `ExampleOrganization.SpinnerTrait` (no device here carries vendor clusters, so the
// lookup yields nil). A few methods return what their block computed, for the tests.
// guide-block: device-01
import GoogleHomeSDK
import GoogleHomeTypes
// end guide-block: device-01

/// The app of the Device guide.
public final class DeviceGuide: Sendable {
    public let home: Home
    public let myDeviceId: String

    public init(home: Home, myDeviceId: String) {
        self.home = home
        self.myDeviceId = myDeviceId
    }

    public func getDevices() async throws -> Set<HomeDevice> {
// guide-block: device-02
// Get a list of all devices accessible to the user
let homeDevices = try await self.home.devices().list()
// end guide-block: device-02
        return homeDevices
    }

    public func subscribeToDeviceType() async throws {
// guide-block: device-03
let devices = try await self.home.devices().list()
if let device = devices.first(where: { $0.id == myDeviceId }) {
  var receivedUpdate1 = false
  var receivedUpdate2 = false
  device.types.subscribe(OnOffLightDeviceType.self)
    .assertNoFailure()
    .sink { device in
      if !receivedUpdate1 {
        receivedUpdate1 = true
        Task {
          try await device.matterTraits.onOffTrait?.on()
        }
        return
      }
      if !receivedUpdate2 {
        receivedUpdate2 = true
        return
      }
      fatalError("Received unexpected update")
    }
}
// end guide-block: device-03
    }

    public func getDeviceType(devices: Set<HomeDevice>) async {
// guide-block: device-04
if let device = devices.first(where: { $0.id == myDeviceId }) {
  let deviceType = await device.types.get(OnOffLightDeviceType.self)
}
// end guide-block: device-04
    }

    public func subscribeToAllTypes(devices: Set<HomeDevice>) {
// guide-block: device-05
if let device = devices.first(where: { $0.id == myDeviceId }) {
  device.types.subscribeAll()
    .assertNoFailure()
    .sink { types in
      let lightDeviceType = types[OnOffLightDeviceType.self]
      let fanDeviceType = types[FanDeviceType.self]
    }
}
// end guide-block: device-05
    }

    public func standardTrait(device: HomeDevice) async {
// guide-block: device-06
if let dimmableLightDeviceType =
  await device.types.get(DimmableLightDeviceType.self)
{
  // Accessing standard trait on the type.
  let levelControlTrait =
    dimmableLightDeviceType.matterTraits.levelControlTrait.self
}
// end guide-block: device-06
    }

    public func googleTrait(device: HomeDevice) async {
// guide-block: device-07
if let doorbellDeviceType = await device.types.get(GoogleDoorbellDeviceType.self) {
  // Accessing Google trait on the type.
  let doorbellPressTrait =
    doorbellDeviceType.googleTraits.doorbellPressTrait.self
}
// end guide-block: device-07
    }

    public func customTrait(device1: HomeDevice?) async {
// guide-block: device-08
let deviceType = await device1?.types.get(OnOffLightDeviceType.self)
// Accessing custom trait on the type.
if let spinnerTrait = deviceType?.traits[ExampleOrganization.SpinnerTrait.self] {
  let rpmVal = spinnerTrait.attributes.rpm
}
// end guide-block: device-08
    }

    public func readOnOff(devices: Set<HomeDevice>) async -> Bool? {
// guide-block: device-09
let lightDevices = devices.filter {
  $0.types.contains(OnOffLightDeviceType.self)
}
let light1 = lightDevices.first
let lightDeviceTypeOptional = await light1?.types.get(OnOffLightDeviceType.self)
if let onOffTrait = lightDeviceTypeOptional?.matterTraits.onOffTrait {
  let onOffVal = onOffTrait.attributes.onOff
}
// end guide-block: device-09
        return await light1?.types.get(OnOffLightDeviceType.self)?.matterTraits.onOffTrait?.attributes.onOff
    }

    public func devicesWithLevelControl() async throws -> [HomeDevice] {
// guide-block: device-10
// Get all light devices that support levelControl
var levelControlDevices: [HomeDevice] = []
var allDevices = try await home.devices().list()
for device in allDevices {
  if let deviceType = await device.types.get(OnOffLightDeviceType.self) {
    if deviceType.traits.contains(Matter.LevelControlTrait.self) {
      levelControlDevices.append(device)
    }
  }
}
// end guide-block: device-10
        return levelControlDevices
    }

    public func lightDevices() async throws -> [Bool] {
// guide-block: device-11
// Get a list of devices with similar device types (lights)
let lightDevices =
  try await self.home.devices().list().compactMap {
    $0.types.contains(DimmableLightDeviceType.self)
      || $0.types.contains(OnOffLightDeviceType.self)
      || $0.types.contains(ColorTemperatureLightDeviceType.self)
      || $0.types.contains(ExtendedColorLightDeviceType.self)
  }
// end guide-block: device-11
        return lightDevices
    }

    public func vendorInfo(basicInfoTrait: Matter.BasicInformationTrait) -> (String, UInt16, UInt16) {
// guide-block: device-12
guard
  let vendorName =
    basicInfoTrait.attributes.vendorName
else {
  fatalError("Failed to get vendorName")
}
guard
  let vendorID =
    basicInfoTrait.attributes.vendorID
else {
  fatalError("Failed to get vendorID")
}
guard
  let productID =
    basicInfoTrait.attributes.productID
else {
  fatalError("Failed to get productID")
}
// end guide-block: device-12
        return (vendorName, vendorID, productID)
    }

    public func primaryType(device: HomeDevice?) async {
// guide-block: device-13
if let deviceType =
  await device?.types.get(HumiditySensorDeviceType.self)
{
  if deviceType.metadata.isPrimaryType {
    print("Humidity Sensor is the primary type on this device.")
  } else {
    print("Humidity Sensor isn't the primary type on this device.")
  }
}
// end guide-block: device-13
    }

    public func traitConnectivity(levelControlTrait: Matter.LevelControlTrait) -> ConnectivityState {
// guide-block: device-14
let levelControlConnectivity =
  levelControlTrait.metadata.sourceConnectivity
  .connectivityState
// end guide-block: device-14
        return levelControlConnectivity
    }

    public func deviceConnectivity(dimmableLightDeviceType: DimmableLightDeviceType) -> ConnectivityState {
// guide-block: device-15
let lightConnectivity =
  dimmableLightDeviceType.metadata.sourceConnectivity
  .connectivityState
// end guide-block: device-15
        return lightConnectivity
    }

    public func traitLocality(levelControlTrait: Matter.LevelControlTrait) -> LocalityType {
// guide-block: device-16
let levelControlLocality =
  levelControlTrait.metadata.sourceConnectivity
  .dataSourceLocality
// end guide-block: device-16
        return levelControlLocality
    }

    public func deviceLocality(dimmableLightDeviceType: DimmableLightDeviceType) -> LocalityType {
// guide-block: device-17
let lightLocality =
  dimmableLightDeviceType.metadata.sourceConnectivity.dataSourceLocality
// end guide-block: device-17
        return lightLocality
    }

    public func rename(theDevice: HomeDevice) async throws -> HomeDevice {
// guide-block: device-18
let updatedDevice = try await theDevice.setName("new device name")
// end guide-block: device-18
        return updatedDevice
    }
}

/// The vendor's own trait, as its package would declare it (the guide's custom trait).
enum ExampleOrganization {
    struct SpinnerTrait: Trait {
        static let identifier = "example.organization.SpinnerTrait"
        struct Attributes: Hashable, Sendable {
            var rpm: UInt16?
        }
        let metadata: TraitMetadata
        let attributes: Attributes
    }
}
