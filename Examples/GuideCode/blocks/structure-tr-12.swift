let updatedRoom = try await theRoom.setName("new room name")
