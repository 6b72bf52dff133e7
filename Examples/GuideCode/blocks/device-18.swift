let updatedDevice = try await theDevice.setName("new device name")
