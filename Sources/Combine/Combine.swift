// `import Combine` on Linux, where Apple's Combine does not exist: OpenCombine, its
// DispatchQueue scheduler (`receive(on: DispatchQueue.main)`) and `combineLatest`, which
// OpenCombine 0.14 lacks. Only declared in Package.swift off Apple platforms.
@_exported import HomeCombine
@_exported import OpenCombine
@_exported import OpenCombineDispatch
