do {
  try await structure.move(device: light, to: room)
} catch let error as HomeError {
  // Code for handling the exception
}
