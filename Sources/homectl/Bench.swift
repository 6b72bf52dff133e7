import ArgumentParser
import Foundation
import HomeAPI
import MatterProtocol

/// Command latency as a person sees it through HomeAPI: alternating On and Off invokes
/// (each awaits the device's response) on one home, after one warm-up invoke so that the
/// CASE session exists. Percentiles as the reference controller's latency check computes
/// them, so the two can be printed side by side.
struct Bench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Measure On/Off invoke latency (p50/p99) on a device.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Device ID or unique name.") var device: String
    @Option(help: "Number of invokes to time.") var count: Int = 200

    func validate() throws {
        guard (1...100_000).contains(count) else { throw ValidationError("--count must be 1...100000") }
    }

    func run() async throws {
        try await HomeAPIRun.run {
            let home = try await global.open()
            let d = try await resolveDevice(device, in: home)
            guard let onOff = d.types.all.all.lazy.compactMap({ $0.traits[Matter.OnOffTrait.self] }).first else {
                await home.close()
                throw ValidationError("\(d.name) has no OnOff trait")
            }
            var samples: [Double] = []
            samples.reserveCapacity(count)
            do {
                try await onOff.off()
                // Benchmark figures, on the real clock: command latencies.
                let clock = SystemClock()
                for i in 0..<count {
                    let start = clock.now
                    if i % 2 == 0 { try await onOff.on() } else { try await onOff.off() }
                    let elapsed = clock.now - start
                    samples.append(Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15)
                }
            } catch {
                await home.close()
                throw error
            }
            await home.close()
            samples.sort()
            let p50 =
                samples.count % 2 == 1
                ? samples[samples.count / 2]
                : (samples[samples.count / 2 - 1] + samples[samples.count / 2]) / 2
            let p99 = samples[min(samples.count - 1, Int(Double(samples.count) * 0.99))]
            let result = BenchResult(invokes: count, p50_ms: (p50 * 1000).rounded() / 1000, p99_ms: (p99 * 1000).rounded() / 1000)
            if global.json {
                Output.json(result)
            } else {
                print(String(format: "homectl: %d On/Off invokes  p50 %.3f ms  p99 %.3f ms", count, result.p50_ms, result.p99_ms))
            }
        }
    }
}

struct BenchResult: Codable {
    var invokes: Int
    var p50_ms: Double
    var p99_ms: Double
}
