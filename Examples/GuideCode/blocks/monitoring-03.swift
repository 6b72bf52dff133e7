guard let home else { return nil }
