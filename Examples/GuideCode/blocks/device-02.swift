// Get a list of all devices accessible to the user
let homeDevices = try await self.home.devices().list()
