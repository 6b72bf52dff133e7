import Foundation

extension Structure {
    /// Sets (or, with nil, clears) the structure's address. Scheduled starters need one.
    @discardableResult
    public func setAddress(_ address: String?) async throws(HomeError) -> Structure {
        try await homeCall {
            let trimmed = address?.trimmingCharacters(in: .whitespacesAndNewlines)
            if let trimmed, trimmed.isEmpty { throw HomeError.invalidArgument("an address must not be empty (use nil to clear it)") }
            try await engine.store.setStructureAddress(id, trimmed)
            engine.services.discovery.invalidate()
            try await engine.reload()
            guard let s = engine.snapshot.structures[id] else { throw HomeError.notFound("no structure with ID \(id)") }
            return s
        }
    }

    /// Validates `draft` against the structure's candidates (as they are now, not the cached
    /// snapshot) and stores it. Throws a `HomeError` naming the starter, device or value at fault.
    @discardableResult
    public func createAutomation(_ draft: DraftAutomation) async throws(HomeError) -> Automation {
        try await homeCall {
            try await engine.reloadIfNeeded()
            let snapshot = engine.snapshot
            let candidates = try buildCandidates(
                snapshot, key: .init(structureID: id, deviceID: nil, includeDescendants: true),
                subscribes: engine.configuration.connectDevices)
            let definition = try AutomationValidator(structure: self, snapshot: snapshot, candidates: candidates).validate(draft)
            let record = AutomationRecord(
                id: UUID().uuidString, structureID: id, name: try normalizedName(draft.name, "automation", allowingEmpty: true),
                description: draft.description, isActive: draft.isActive, createdAt: Date(), definition: definition)
            try await engine.store.insertAutomation(record)
            return Automation(record)
        }
    }

    /// The structure's automations, oldest first.
    public func listAutomations() async throws(HomeError) -> [Automation] {
        try await homeCall { try await engine.store.automations(structureID: id).map(Automation.init) }
    }

    /// Enables or disables an automation (a disabled one keeps its definition but never runs).
    public func setAutomation(id automationID: String, isActive: Bool) async throws(HomeError) {
        try await homeCall { try await engine.store.setAutomationActive(automationID, structureID: id, isActive) }
    }

    public func deleteAutomation(id automationID: String) async throws(HomeError) {
        try await homeCall { try await engine.store.deleteAutomation(automationID, structureID: id) }
    }

    /// The latest runs of this structure's automations (or of one), newest first.
    public func automationHistory(automationID: String? = nil, limit: Int = 100) async throws(HomeError) -> [AutomationRun] {
        try await homeCall {
            let mine = Set(try await listAutomations().map(\.id))
            if let automationID, !mine.contains(automationID) {
                throw HomeError.notFound("no automation with ID \(automationID) in structure \(name)")
            }
            return try await engine.store.runs(automationID: automationID, limit: max(1, limit) * (automationID == nil ? 4 : 1))
                .filter { mine.contains($0.automationID) }.prefix(max(1, limit)).map { $0 }
        }
    }
}

/// Checks a draft against the candidates and turns it into a stored definition.
struct AutomationValidator {
    let structure: Structure
    let snapshot: HomeSnapshot
    let candidates: [any NodeCandidate]

    func validate(_ draft: DraftAutomation) throws -> AutomationDefinition {
        var starters: [StarterSpec] = []
        var starterTraits: [UUID: (TraitAttributesCandidate, StarterSpec)] = [:]
        var conditions: [ConditionSpec] = []
        var actions: [ActionSpec] = []
        for node in draft.nodes {
            switch node.spec {
            case .scheduledStarter(let id, let structureID, let parameters):
                guard structureID == structure.id else {
                    throw HomeError.invalidArgument("a scheduled starter names structure \(structureID), not \(structure.name)")
                }
                guard
                    let candidate = candidates.compactMap({ $0 as? EventCandidate })
                        .first(where: { $0.event.eventID == Google.TimeTrait.ScheduledEvent.eventID && $0.homeObject.id == structure.id })
                else {
                    throw HomeError.invalidArgument("structure \(structure.name) offers no scheduled starter")
                }
                try requireSupported(candidate.unsupportedReasons, "starter Google.TimeTrait.ScheduledEvent on structure \(structure.name)")
                guard let time = parameters.compactMap({ if case .clockTime(let t) = $0 { t } else { nil } }).first else {
                    throw HomeError.invalidArgument("starter Google.TimeTrait.ScheduledEvent needs clockTime(_:)")
                }
                guard time.isValid else { throw HomeError.invalidArgument("clockTime \(time) is not a time of day (00:00:00 to 23:59:59)") }
                starters.append(StarterSpec(id: id.uuidString, kind: .scheduled(clockTime: time), label: "ScheduledEvent at \(time)"))
            case .traitStarter(let id, let deviceID, let deviceName, let deviceType, let trait):
                let device = try requireDevice(deviceID, deviceName)
                guard device.types.collection.serves(deviceType) else {
                    throw HomeError.invalidArgument("device \(device.name) is not a \(deviceType.identifier)")
                }
                guard
                    let candidate = candidates.compactMap({ $0 as? TraitAttributesCandidate }).first(where: {
                        $0.homeObject.id == deviceID && $0.trait.identifier == trait.identifier
                            && $0.deviceTypes.contains { serves($0, as: deviceType) }
                    })
                else {
                    throw HomeError.invalidArgument("device \(device.name) has no \(trait.identifier) usable as a starter")
                }
                try requireSupported(candidate.unsupportedReasons, "starter \(trait.identifier) on device \(device.name)")
                let spec = StarterSpec(
                    id: id.uuidString,
                    kind: .attributeChange(
                        deviceID: deviceID, endpoint: candidate.location.endpoint, cluster: candidate.location.cluster,
                        traitIdentifier: trait.identifier), label: "\(device.name) \(trait.identifier) changed")
                starters.append(spec)
                starterTraits[id] = (candidate, spec)
            case .eventStarter(let id, let deviceID, let deviceName, let deviceType, let event, let parameters):
                let device = try requireDevice(deviceID, deviceName)
                guard device.types.collection.serves(deviceType) else {
                    throw HomeError.invalidArgument("device \(device.name) is not a \(deviceType.identifier)")
                }
                guard
                    let candidate = candidates.compactMap({ $0 as? EventCandidate }).first(where: {
                        $0.homeObject.id == deviceID && $0.trait.identifier == event.traitIdentifier && $0.event.eventID == event.eventID
                            && $0.deviceTypes.contains { serves($0, as: deviceType) }
                    }),
                    let location = candidate.location
                else {
                    throw HomeError.invalidArgument("device \(device.name) does not raise \(event.name) of \(event.traitIdentifier)")
                }
                try requireSupported(candidate.unsupportedReasons, "starter \(event.name) on device \(device.name)")
                var fields: [EventFieldValue] = []
                for case .eventField(let tag, let name, let value) in parameters {
                    guard let details = candidate.fieldDetails.first(where: { $0.key.id == UInt32(tag) })?.value else {
                        throw HomeError.invalidArgument("\(event.name) has no field \(name)")
                    }
                    guard details.constraint.admits(value) else {
                        throw HomeError.invalidArgument("\(event.name).\(name) = \(value) is outside its constraint \(details.constraint)")
                    }
                    fields.append(EventFieldValue(tag: tag, name: name, value: value))
                }
                let wanted = fields.isEmpty ? "" : " (" + fields.map { "\($0.name) = \($0.value)" }.joined(separator: ", ") + ")"
                starters.append(
                    StarterSpec(
                        id: id.uuidString,
                        kind: .deviceEvent(
                            deviceID: deviceID, endpoint: location.endpoint, cluster: location.cluster, eventID: event.eventID,
                            fields: fields),
                        label: "\(device.name) \(event.name)\(wanted)"))
            case .condition(let e):
                guard let (candidate, _) = starterTraits[e.reference.starterID] else {
                    throw HomeError.invalidArgument("a condition refers to a starter that is not part of this automation")
                }
                guard let attribute = e.reference.attributeID else {
                    throw HomeError.invalidArgument(
                        "condition on \(e.reference.keyPathName): not an attribute of \(candidate.trait.identifier)")
                }
                guard let (field, details) = candidate.fieldDetails.first(where: { $0.key.id == attribute }) else {
                    throw HomeError.invalidArgument(
                        "condition on \(e.reference.keyPathName): device \(candidate.homeObject.id) does not report it")
                }
                guard details.constraint.admits(e.value) else {
                    throw HomeError.invalidArgument(
                        "condition \(field.name) \(e.op.rawValue) \(e.value): the value is outside \(details.constraint)")
                }
                conditions.append(
                    ConditionSpec(
                        deviceID: candidate.homeObject.id, endpoint: candidate.location.endpoint,
                        cluster: candidate.location.cluster, attribute: attribute, attributeName: field.name,
                        op: e.op, value: e.value))
            case .action(let deviceID, let deviceName, let deviceType, let commands):
                let device = try requireDevice(deviceID, deviceName)
                guard device.types.collection.serves(deviceType) else {
                    throw HomeError.invalidArgument("device \(device.name) is not a \(deviceType.identifier)")
                }
                for command in commands {
                    guard
                        let candidate = candidates.compactMap({ $0 as? CommandCandidate }).first(where: {
                            $0.homeObject.id == deviceID && $0.trait.identifier == command.traitIdentifier
                                && $0.command.commandID == command.commandID
                        })
                    else {
                        throw HomeError.invalidArgument(
                            "device \(device.name) does not accept \(command.commandName) of \(command.traitIdentifier)")
                    }
                    try requireSupported(candidate.unsupportedReasons, "action \(command.commandName) on device \(device.name)")
                    var fields: [ActionSpec.FieldValue] = []
                    for (field, value) in command.fields {
                        guard let details = candidate.fieldDetails[field] else {
                            throw HomeError.invalidArgument("\(command.commandName) has no field \(field.name)")
                        }
                        if value == .null, !details.isNullable {
                            throw HomeError.invalidArgument("\(command.commandName).\(field.name) must not be null")
                        }
                        guard details.constraint.admits(value) else {
                            throw HomeError.invalidArgument(
                                "\(command.commandName).\(field.name) = \(value) on device \(device.name) is outside its constraint \(details.constraint)"
                            )
                        }
                        fields.append(.init(tag: UInt8(truncatingIfNeeded: field.id), name: field.name, value: value))
                    }
                    actions.append(
                        ActionSpec(
                            deviceID: deviceID, deviceName: device.name, endpoint: candidate.location.endpoint,
                            cluster: candidate.location.cluster, commandID: command.commandID,
                            commandName: command.commandName, fields: fields))
                }
            }
        }
        guard !starters.isEmpty else { throw HomeError.invalidArgument("an automation needs at least one starter") }
        guard !actions.isEmpty else { throw HomeError.invalidArgument("an automation needs at least one action") }
        return AutomationDefinition(starters: starters, conditions: conditions, actions: actions)
    }

    private func requireDevice(_ id: String, _ name: String) throws -> HomeDevice {
        guard let device = snapshot.devices[id], device.structureID == structure.id else {
            throw HomeError.notFound("unknown device \(name) (\(id)): not in structure \(structure.name)")
        }
        return device
    }

    private func requireSupported(_ reasons: [UnsupportedCandidateReason], _ what: String) throws {
        guard !reasons.isEmpty else { return }
        throw HomeError.failedPrecondition("\(what) is unsupported: \(reasons.map(\.description).joined(separator: "; "))")
    }
}
