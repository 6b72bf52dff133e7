// `combineLatest` (OpenCombine 0.14 has none) lives in HomeCombine so that the Linux
// `Combine` module can offer it too; `import HomeAPI` keeps it in reach as before.
@_exported import HomeCombine
