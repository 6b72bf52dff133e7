// Cross-checks over a loaded model: everything one row refers to must exist elsewhere.
// The loader already rejects malformed notation; this finds dangling references and
// duplicates, so an edit to matter-model.json that breaks the model fails a test.
import MatterTLV

extension MatterModel {
    /// Human-readable problems; empty when the model is consistent.
    public func consistencyProblems() -> [String] {
        var problems: [String] = []
        func duplicates<T: Hashable>(_ items: [T]) -> [T] {
            var seen = Set<T>()
            return items.filter { !seen.insert($0).inserted }
        }
        for cluster in clusters {
            let c = cluster.name
            for d in duplicates(cluster.attributes.map(\.id)) { problems.append("\(c): duplicate attribute id \(d)") }
            for d in duplicates(cluster.requests.map(\.id)) { problems.append("\(c): duplicate request id \(d)") }
            for d in duplicates(cluster.responses.map(\.id)) { problems.append("\(c): duplicate response id \(d)") }
            for d in duplicates(cluster.events.map(\.id)) { problems.append("\(c): duplicate event id \(d)") }
            for d in duplicates(cluster.features.map(\.bit)) { problems.append("\(c): duplicate feature bit \(d)") }
            for d in duplicates(cluster.features.map(\.code)) { problems.append("\(c): duplicate feature code \(d)") }
            let typeNames = cluster.enums.map(\.name) + cluster.bitmaps.map(\.name) + cluster.structs.map(\.name)
            for d in duplicates(typeNames) { problems.append("\(c): duplicate type name \(d)") }
            for d in duplicates(cluster.allAttributes.map(\.name)) { problems.append("\(c): duplicate attribute name \(d)") }

            // Names a conformance may mention: features and the cluster's own elements.
            let conditionNames = Set(cluster.features.map(\.code))
                .union(cluster.attributes.map(\.name))
                .union(cluster.commands.map(\.name))
                .union(cluster.events.map(\.name))

            func checkType(_ type: DataType, _ path: String) {
                switch type {
                case .enumeration(let n, _) where !n.isEmpty:
                    if cluster.enumDefinition(named: n) == nil { problems.append("\(path): unknown enum \(n)") }
                case .bitmap(let n, _) where !n.isEmpty:
                    if cluster.bitmapDefinition(named: n) == nil { problems.append("\(path): unknown bitmap \(n)") }
                case .structure(let n):
                    if cluster.structDefinition(named: n) == nil { problems.append("\(path): unknown struct \(n)") }
                case .list(let e):
                    if case .list = e { problems.append("\(path): list of lists is not a Matter type") }
                    checkType(e, path)
                default: break
                }
            }
            func checkConformance(_ conformance: Conformance, _ path: String) {
                for n in conformance.names.subtracting(conditionNames) {
                    problems.append("\(path): conformance names unknown '\(n)'")
                }
            }
            func checkConstraint(_ constraint: Constraint?, _ path: String) {
                for n in constraint?.referencedAttributes ?? [] where cluster.attribute(named: n) == nil {
                    problems.append("\(path): constraint refers to unknown attribute \(n)")
                }
            }
            func checkFields(_ fields: [FieldDefinition], _ path: String) {
                for d in duplicates(fields.map(\.id)) { problems.append("\(path): duplicate field id \(d)") }
                for d in duplicates(fields.map(\.name)) { problems.append("\(path): duplicate field name \(d)") }
                for f in fields {
                    let p = "\(path).\(f.name)"
                    checkType(f.type, p)
                    checkConformance(f.conformance, p)
                    checkConstraint(f.constraint, p)
                    if let d = f.defaultValue, let v = cluster.validate(d, for: f) {
                        problems.append("\(p): default \(d) is invalid: \(v)")
                    }
                }
            }

            for f in cluster.features { checkConformance(f.conformance, "\(c).feature \(f.code)") }
            for a in cluster.allAttributes {
                let p = "\(c).\(a.name)"
                checkType(a.type, p)
                checkConformance(a.conformance, p)
                checkConstraint(a.constraint, p)
                if a.fabricScoped, case .list = a.type.base {
                } else if a.fabricScoped {
                    problems.append("\(p): only list attributes can be fabric-scoped")
                }
                if let d = a.defaultValue, let v = cluster.validate(d, for: a) {
                    problems.append("\(p): default \(d) is invalid: \(v)")
                }
            }
            for cmd in cluster.commands {
                let p = "\(c).\(cmd.name)"
                checkConformance(cmd.conformance, p)
                checkFields(cmd.fields, p)
                if let r = cmd.responseName {
                    if cmd.direction == .response {
                        problems.append("\(p): a response cannot name a response")
                    } else if cluster.command(named: r)?.direction != .response {
                        problems.append("\(p): response \(r) is not a response command of \(c)")
                    }
                }
            }
            for e in cluster.events {
                checkConformance(e.conformance, "\(c).\(e.name)")
                checkFields(e.fields, "\(c).\(e.name)")
            }
            for s in cluster.structs {
                checkFields(s.fields, "\(c).\(s.name)")
                let hasIndex = s.fields.contains { $0.id == FieldDefinition.fabricIndexTag && $0.type == .semantic(.fabricIndex) }
                if s.fabricScoped != hasIndex {
                    problems.append("\(c).\(s.name): fabric-scoped structs (and only those) carry FabricIndex at tag 254")
                }
            }
            for e in cluster.enums {
                for d in duplicates(e.values.map(\.value)) { problems.append("\(c).\(e.name): duplicate value \(d)") }
                for d in duplicates(e.values.map(\.name)) { problems.append("\(c).\(e.name): duplicate name \(d)") }
            }
            for b in cluster.bitmaps {
                var seen: UInt64 = 0
                for f in b.fields {
                    if seen & f.mask != 0 { problems.append("\(c).\(b.name): overlapping bits in \(f.name)") }
                    seen |= f.mask
                }
            }
        }
        for d in duplicates(clusters.map(\.name)) { problems.append("duplicate cluster name \(d)") }
        for dt in deviceTypes {
            for r in dt.requiredServerClusters where cluster(r.cluster) == nil {
                problems.append("\(dt.name): required server cluster \(r.cluster) is not modelled")
            }
            for r in dt.requiredServerClusters + dt.optionalServerRequirements {
                guard let def = cluster(r.cluster) else { continue }
                for (id, constraint) in r.attributeConstraints {
                    if def.attribute(id) == nil { problems.append("\(dt.name): constraint on unknown attribute \(id) of \(def.name)") }
                    _ = constraint
                }
            }
        }
        return problems
    }
}
