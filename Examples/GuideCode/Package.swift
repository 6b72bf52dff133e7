// swift-tools-version:6.1
// The guides' own code (../../../shared/seeds), built against MatterSim's GoogleHomeSDK and
// GoogleHomeTypes products, as an app package depends on them.
import PackageDescription

let package = Package(
    name: "GuideCode",
    platforms: [.macOS(.v15)],
    products: [.library(name: "GuideCode", targets: ["GuideCode"])],
    dependencies: [.package(name: "MatterSim", path: "../..")],
    targets: [.target(name: "GuideCode", dependencies: [
        .product(name: "GoogleHomeSDK", package: "MatterSim"),
        .product(name: "GoogleHomeTypes", package: "MatterSim"),
    ])]
)
