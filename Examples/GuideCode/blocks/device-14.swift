let levelControlConnectivity =
  levelControlTrait.metadata.sourceConnectivity
  .connectivityState
