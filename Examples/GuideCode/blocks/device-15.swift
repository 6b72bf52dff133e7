let lightConnectivity =
  dimmableLightDeviceType.metadata.sourceConnectivity
  .connectivityState
