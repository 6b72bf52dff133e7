// `import GoogleHomeSDK`, as apps written against the Google Home APIs for iOS say it:
// the same library as `HomeAPI`, under the SDK's module name.
@_exported import HomeAPI
// And the Combine the SDK's publishers come with: OpenCombine (`AnyCancellable`, `Just`,
// `@Published`, `assign(to:on:)`, `assign(to: &$x)`; `combineLatest` is HomeAPI's) and its
// DispatchQueue scheduler (`receive(on: DispatchQueue.main)`). Not a module named `Combine`:
// OpenCombine, Yams and GRDB test `canImport(Combine)` and compile differently once one is in
// the build (OpenCombineDispatch then drops `DispatchQueue: Scheduler`).
@_exported import OpenCombine
@_exported import OpenCombineDispatch
