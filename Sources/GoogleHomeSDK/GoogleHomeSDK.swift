// `import GoogleHomeSDK`, as apps written against the Google Home APIs for iOS say it:
// the same library as `HomeAPI`, under the SDK's module name.
@_exported import HomeAPI
