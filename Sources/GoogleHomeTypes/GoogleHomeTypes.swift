// `import GoogleHomeTypes`: the SDK keeps its device types and traits in this module, so app
// code qualifies them with it (`GoogleHomeTypes.Google.TimeTrait.ScheduledEvent`). Here
// they live in `HomeAPI`; re-exporting it makes those qualified names resolve.
@_exported import HomeAPI
