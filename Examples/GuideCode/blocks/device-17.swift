let lightLocality =
  dimmableLightDeviceType.metadata.sourceConnectivity.dataSourceLocality
