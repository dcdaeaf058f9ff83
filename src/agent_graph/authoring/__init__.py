"""Provider authoring: scaffold (``init``), importers and the 0.2 -> 0.3.1 migrator."""
