/// When each node of a home first goes to the Avahi daemon after a start (issue #43: a home
/// back within seconds after a power cut).
///
/// A home's nodes share one daemon. Nodes that register at once are probed and announced
/// together, and the daemon packs their records into one packet, the same way on every
/// re-announcement; connectedhomeip's resolver (Home Assistant's Matter server, chip-tool)
/// reads only the first two SRV records of a packet (CHIP_CONFIG_MINMDNS_MAX_PARALLEL_RESOLVES).
/// A node whose SRV came third or later in every announcement was never found again: its
/// controller's lookup ran out (45 s) and it came back only after the resubscription backoff,
/// 55-64 s after power-on where the others took 19-24 s. A real device is a host of its own
/// and announces alone; spacing the nodes' first registrations keeps each announcement
/// packet to about one node.
public enum AnnouncementPacing {
    /// Between two nodes' first registrations: longer than the daemon's response deferral
    /// (20-120 ms), so a packet rarely carries a third node; 28 nodes take 3.2 s.
    public static let spacing = Duration.milliseconds(120)

    /// Slots in a round: the wait is bounded (3.7 s) whatever the home's size. A fleet home of
    /// 1,000 nodes would otherwise hold its last node back two minutes; past 32 nodes a slot
    /// holds several, no worse than all at once.
    public static let slots = 32

    /// How long node `index` (from 0, in the home's order) waits before its first advertisement.
    public static func slot(ofNode index: Int) -> Duration {
        spacing * (max(0, index) % slots)
    }
}
