// swift-tools-version:6.1
// The guides' own code (../../../shared/seeds), built against MatterSim's GoogleHomeSDK,
// GoogleHomeTypes and (on Linux) Combine products, as an app package would depend on them.
import PackageDescription

var dependencies: [Target.Dependency] = [
    .product(name: "GoogleHomeSDK", package: "MatterSim"),
    .product(name: "GoogleHomeTypes", package: "MatterSim"),
]
#if !canImport(Darwin)
dependencies.append(.product(name: "Combine", package: "MatterSim"))
#endif

let package = Package(
    name: "GuideCode",
    platforms: [.macOS(.v15)],
    products: [.library(name: "GuideCode", targets: ["GuideCode"])],
    dependencies: [.package(name: "MatterSim", path: "../..")],
    targets: [.target(name: "GuideCode", dependencies: dependencies)]
)
