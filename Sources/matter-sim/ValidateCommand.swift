// `matter-sim validate FILE...`: check device profiles and homes, print every problem
// as `FILE: PATH: message`, end with a summary, exit non-zero when anything is wrong.
import ArgumentParser
import DeviceProfile

struct ValidateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "validate",
        abstract: "Check device profiles, homes and scenarios and report every error.",
        discussion: """
            Each FILE may be a device profile, a home or a scenario (told apart by its keys). A home's
            referenced device profiles are checked too. Exits with status 1 when any file
            has errors.
            """)

    @Argument(help: ArgumentHelp("Device profile or home files (YAML).", valueName: "file"))
    var files: [String] = []

    @Flag(name: .shortAndLong, help: "Print only errors, no summary line.")
    var quiet = false

    func validate() throws {
        guard !files.isEmpty else {
            throw ValidationError("Give at least one profile file, e.g. `matter-sim validate DeviceProfiles/devices/*.yaml`.")
        }
    }

    func run() throws {
        let loader = ProfileLoader()
        var printed: Set<ProfileDiagnostic> = []
        var checked: [String] = []
        var errorCount = 0
        for file in files {
            if var diagnostics = loader.scenarioDiagnostics(file: file) {
                if diagnostics.isEmpty, let scenario = try? loader.loadScenario(file: file) {
                    diagnostics = Self.actProblems(scenario)
                }
                checked.append(ProfilePaths.normalize(file))
                for d in diagnostics where printed.insert(d).inserted {
                    print(d.description)
                    errorCount += 1
                }
                continue
            }
            let result = loader.load(file: file)
            for f in [ProfilePaths.normalize(file)] + result.referencedFiles where !checked.contains(f) {
                checked.append(f)
            }
            // A device profile named on the command line and by a home is reported once.
            for d in result.diagnostics where printed.insert(d).inserted {
                print(d.description)
                errorCount += 1
            }
        }
        if !quiet {
            print("\(count(checked.count, "file")), \(count(errorCount, "error"))")
        }
        if errorCount > 0 { throw ExitCode(1) }
    }

    /// Each act step's action and value as `matter-sim act` checks them (names, and values
    /// within the data model's range); which device can do it is checked when a home runs it.
    static func actProblems(_ scenario: Scenario) -> [ProfileDiagnostic] {
        scenario.steps.compactMap { step in
            guard case .act(let action, let value) = step.kind,
                case .failure(let error) = PhysicalActionName.parse(action, value: value)
            else { return nil }
            return ProfileDiagnostic(file: scenario.file, path: step.path.key("act"), message: error.description, line: step.line)
        }
    }

    private func count(_ n: Int, _ noun: String) -> String { "\(n) \(noun)\(n == 1 ? "" : "s")" }
}
