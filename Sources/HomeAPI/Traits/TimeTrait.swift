/// Namespace of the Google-defined traits, as `Google.TimeTrait`.
public enum Google {}

/// A time of day, local to the structure (hours 0-23, minutes and seconds 0-59).
public struct TimeOfDay: Sendable, Hashable, Codable, CustomStringConvertible {
    public var hours: Int
    public var minutes: Int
    public var seconds: Int

    public init(hours: Int, minutes: Int, seconds: Int = 0) {
        self.hours = hours
        self.minutes = minutes
        self.seconds = seconds
    }

    var isValid: Bool { (0..<24).contains(hours) && (0..<60).contains(minutes) && (0..<60).contains(seconds) }
    var secondsIntoDay: Int { hours * 3600 + minutes * 60 + seconds }

    public var description: String {
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : "\(n)" }
        return "\(two(hours)):\(two(minutes)):\(two(seconds))"
    }
}

extension Google {
    /// The structure's time (a structure-level trait): its scheduled event starts automations
    /// at a time of day, which needs the structure's address (for its time zone and sun times).
    public struct TimeTrait: Trait {
        public static let identifier = "home.platform.traits.TimeTrait"
        public let metadata: TraitMetadata

        /// The event an automation starter waits for at a scheduled time.
        public enum ScheduledEvent: EventDescriptor {
            public enum EventFields: UInt32, Field {
                case clockTime = 0
                public static let fieldScope = FieldScope(traitIdentifier: identifier, kind: .event(eventID))
            }
            public static let traitIdentifier = identifier
            public static let eventID: UInt32 = 1
            public static let name = "ScheduledEvent"

            /// Starts the automation every day at `clockTime`.
            public static func clockTime(_ clockTime: TimeOfDay) -> TypedParameter<ScheduledEvent> {
                TypedParameter(field: AnyField(erasing: EventFields.clockTime), value: .clockTime(clockTime))
            }
        }
    }
}

// Google's cloud traits of doorbells and cameras, so app code naming them builds; no device
// here carries them (they come only through Google's cloud).
extension Google {
    /// A doorbell's press.
    public struct DoorbellPressTrait: Trait {
        public static let identifier = "home.platform.traits.DoorbellPressTrait"
        public let metadata: TraitMetadata
    }

    /// A camera's push-based audio and video transport.
    public struct PushAvStreamTransportTrait: Trait {
        public static let identifier = "home.platform.traits.PushAvStreamTransportTrait"
        public let metadata: TraitMetadata
    }

    /// A camera's live view and talkback sessions.
    public struct WebRtcLiveViewTrait: Trait {
        public static let identifier = "home.platform.traits.WebRtcLiveViewTrait"
        public let metadata: TraitMetadata
    }
}

/// A parameter of an event starter (`Google.TimeTrait.ScheduledEvent.clockTime(…)`).
public struct TypedParameter<Event: EventDescriptor>: Sendable, Hashable {
    public let field: AnyField
    let value: StarterParameter
}

/// The stored form of a starter parameter.
enum StarterParameter: Sendable, Hashable, Codable {
    case clockTime(TimeOfDay)
    /// An event starter fires only when the event's field `tag` equals `value`.
    case eventField(tag: UInt8, name: String, value: AutomationValue)
}
