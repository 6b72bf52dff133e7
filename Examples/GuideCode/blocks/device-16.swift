let levelControlLocality =
  levelControlTrait.metadata.sourceConnectivity
  .dataSourceLocality
