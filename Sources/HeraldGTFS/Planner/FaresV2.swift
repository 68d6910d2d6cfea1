/// GTFS Fares v2 for the rides of an itinerary, as the GTFS reference defines them: each
/// (effective) fare leg gets the fare product of the `fare_leg_rules.txt` rule it matches,
/// then each change between consecutive legs is priced by `fare_transfer_rules.txt`.
///
/// **Legs.** A leg's network is its route's (`route_networks.txt`, else `routes.network_id`);
/// its departure and arrival areas are those `stop_areas.txt` gives its boarding and
/// alighting stop, or, when that stop is in none, its platform's or station's (a station's
/// areas hold for its platforms unless they have their own). A rule matches when its
/// network and areas do and its timeframes contain the leg's start and end. Empty fields:
/// - without a `rule_priority` column, an empty `network_id`, `from_area_id` or `to_area_id`
///   means every value no rule of the file names (so a leg in a named area matches only the
///   rules naming it);
/// - with one, an empty field matches anything, and of the rules that match only those of
///   the highest priority (empty = 0) are kept.
/// An empty timeframe matches any time. A timeframe contains an event when one of its rows
/// has a service running on the event's local date (the agency's zone; `stop_timezone` is
/// not used) and the local time is in `[start_time, end_time)`. Events are the scheduled
/// departure from the boarding stop and arrival at the alighting stop.
///
/// **Effective legs** (`fare_leg_join_rules.txt`): consecutive legs on the networks a join
/// rule names, changing at its stops (or, when it names none, within one station), are
/// matched as one leg (first leg's departure area and time, last leg's arrival area and
/// time). Herald joins only legs of one network, as the reference requires for matching.
///
/// **Transfers.** For two consecutive legs with leg groups F and T, the transfer rules are
/// those with `from_leg_group_id` F (or empty when no rule names F) and `to_leg_group_id` T
/// (likewise); legs whose rule has no leg group transfer under no rule. A rule applies when
/// its `transfer_count` (-1: any) covers the transfers made so far under it and its
/// `duration_limit` (`duration_limit_type` 0–3: departure or arrival of the sub-journey's
/// first leg to departure or arrival of the current one) is not exceeded; of those, the one
/// with the smallest sufficient `transfer_count`, then the cheapest. The same rule matched
/// again on the next change continues its sub-journey (its count and duration go on from its
/// first leg); a change it no longer covers is paid as a new leg. Costs, with A the from-leg's
/// product, B the to-leg's and AB the transfer's (none: 0): type 0 A + AB, type 1 A + AB + B,
/// type 2 AB alone (A is not bought, when A was bought on its own; later in a chain every
/// type adds AB, and type 1 also B).
///
/// **Products.** Prices are those for the default rider (`rider_category_id` empty or a
/// category with `is_default_fare_category` 1; a product sold to one category only is taken
/// at that price). One fare media is used for a whole itinerary: a product's price for that
/// media, else its price for no media; the cheapest media wins (the first 15 media ids, in
/// order, and no media). When several rules match a leg (alternative products), the cheapest
/// combination is taken (at most 64 combinations, cheapest products first). Amounts are in
/// cents (× 100), as `FareTable`'s; an itinerary mixing currencies, or with a leg no rule
/// matches, has no fare.
///
/// Not supported: distance-based legs (`min_distance_units` / `max_distance_units`, a
/// proposal the reference does not define: the parser leaves such rules out), other rider
/// categories, a fare media per leg.
public struct FaresV2: Sendable {
    /// One price of a fare product the default rider may buy.
    struct Price: Sendable {
        let minor: Int
        let currency: String
        let name: String?
        let media: String?
    }

    /// Transfer rules are looked up by their leg groups as written (nil: empty).
    struct TransferKey: Hashable, Sendable {
        let from: String?
        let to: String?
    }

    /// A leg as rules see it: one ride, or several joined (rides `first...last`).
    struct EffectiveLeg: Sendable {
        var first: Int
        var last: Int
        var network: String?
        var fromAreas: Set<String>
        var toAreas: Set<String>
        var departure: Int64
        var arrival: Int64
    }

    /// The transfer sub-journey under way: its rule's leg groups, its first leg (an index in
    /// the effective legs) and the transfers made in it.
    typealias Chain = (key: TransferKey, first: Int, transfers: Int)

    /// The rule chosen for one change.
    struct Step {
        let rule: FareTransferRule
        let key: TransferKey
        let first: Int
        let transfers: Int
        let price: Price?
    }

    static let maxCombinations = 64
    static let maxMediaOptions = 15

    let prices: [String: [Price]]
    let cheapest: [String: Int]
    /// nil first (prices for no media), then the media some price names.
    let mediaOptions: [String?]
    let legRules: [FareLegRule]
    let usesPriority: Bool
    let namedNetworks: Set<String>
    let namedFromAreas: Set<String>
    let namedToAreas: Set<String>
    let timeframes: [String: [Timeframe]]
    let transferRules: [TransferKey: [FareTransferRule]]
    let namedFromGroups: Set<String>
    let namedToGroups: Set<String>
    let joinRules: [FareLegJoinRule]
    let networkByRoute: [String: String]
    let areasByStop: [String: Set<String>]
    let calendar: ServiceCalendar
    let zone: AgencyTimeZone

    public init(timetable: Timetable) {
        self.init(feed: timetable.feed, calendar: timetable.calendar, zone: timetable.zone)
    }

    public init(feed: TransitFeed, calendar: ServiceCalendar, zone: AgencyTimeZone) {
        let defaults = Set(feed.riderCategories.filter(\.isDefault).map(\.id))
        var rows: [String: [FareProduct]] = [:]
        for product in feed.fareProducts { rows[product.id, default: []].append(product) }
        var prices: [String: [Price]] = [:]
        var cheapest: [String: Int] = [:]
        var media: Set<String> = []
        for (id, all) in rows {
            var eligible = all.filter { row in row.riderCategoryID.map { defaults.contains($0) } ?? true }
            if eligible.isEmpty && Set(all.compactMap(\.riderCategoryID)).count == 1 { eligible = all }
            var kept: [Price] = []
            for row in eligible where row.amount.isFinite && abs(row.amount) <= 1e12 {
                let price = Price(minor: Int((row.amount * 100).rounded()), currency: row.currency, name: row.name, media: row.fareMediaID)
                kept.append(price)
                cheapest[id] = min(cheapest[id] ?? Int.max, price.minor)
                if let medium = row.fareMediaID { media.insert(medium) }
            }
            prices[id] = kept
        }
        self.prices = prices
        self.cheapest = cheapest
        var options: [String?] = [nil]
        for medium in media.sorted().prefix(Self.maxMediaOptions) { options.append(medium) }
        mediaOptions = options

        legRules = feed.fareLegRules
        usesPriority = feed.fareLegRules.contains { $0.priority != nil }
        namedNetworks = Set(feed.fareLegRules.compactMap(\.networkID))
        namedFromAreas = Set(feed.fareLegRules.compactMap(\.fromAreaID))
        namedToAreas = Set(feed.fareLegRules.compactMap(\.toAreaID))
        var frames: [String: [Timeframe]] = [:]
        for frame in feed.timeframes { frames[frame.groupID, default: []].append(frame) }
        timeframes = frames
        var transfers: [TransferKey: [FareTransferRule]] = [:]
        for rule in feed.fareTransferRules { transfers[TransferKey(from: rule.fromLegGroupID, to: rule.toLegGroupID), default: []].append(rule) }
        transferRules = transfers
        namedFromGroups = Set(feed.fareTransferRules.compactMap(\.fromLegGroupID))
        namedToGroups = Set(feed.fareTransferRules.compactMap(\.toLegGroupID))
        joinRules = feed.fareLegJoinRules
        var networks: [String: String] = [:]
        for route in feed.routes {
            if let network = route.networkID { networks[route.id] = network }
        }
        for assignment in feed.routeNetworks { networks[assignment.routeID] = assignment.networkID }
        networkByRoute = networks
        var areas: [String: Set<String>] = [:]
        for assignment in feed.stopAreas { areas[assignment.stopID, default: []].insert(assignment.areaID) }
        areasByStop = areas
        self.calendar = calendar
        self.zone = zone
    }

    /// Whether the feed has Fares v2 (leg rules); without, fares v1 (`FareTable`) apply.
    public var isEmpty: Bool { legRules.isEmpty }

    /// The cheapest way to pay for `legs` (the rides of an itinerary, in order), nil when
    /// the feed has no Fares v2, some leg matches no rule, or no way is priced in one currency.
    public func quote(_ legs: [FareLeg]) -> FareQuote? {
        guard !legRules.isEmpty, !legs.isEmpty else { return nil }
        let effective = effectiveLegs(legs)
        var options: [[FareLegRule]] = []
        for leg in effective {
            let found = candidates(leg)
            if found.isEmpty { return nil }
            options.append(found)
        }
        let choices = combinations(options)
        var best: FareQuote?
        for media in mediaOptions {
            for choice in choices {
                guard let quote = price(effective, choice, media: media) else { continue }
                if let current = best, current.minor <= quote.minor { continue }
                best = quote
            }
        }
        return best
    }

    // MARK: Legs

    func effectiveLegs(_ legs: [FareLeg]) -> [EffectiveLeg] {
        var result: [EffectiveLeg] = []
        for (index, leg) in legs.enumerated() {
            let network = networkByRoute[leg.routeID]
            if index > 0, var joined = result.last, let network, joined.network == network, joins(legs[index - 1], leg) {
                joined.last = index
                joined.toAreas = areas(leg.alighting)
                joined.arrival = leg.arrival
                result[result.count - 1] = joined
            } else {
                result.append(
                    EffectiveLeg(
                        first: index, last: index, network: network, fromAreas: areas(leg.boarding), toAreas: areas(leg.alighting), departure: leg.departure,
                        arrival: leg.arrival))
            }
        }
        return result
    }

    /// Whether a join rule makes the change from `before` to `after` part of one fare leg.
    func joins(_ before: FareLeg, _ after: FareLeg) -> Bool {
        guard !joinRules.isEmpty, let from = networkByRoute[before.routeID], let to = networkByRoute[after.routeID] else { return false }
        for rule in joinRules where rule.fromNetworkID == from && rule.toNetworkID == to {
            if let fromStop = rule.fromStopID, let toStop = rule.toStopID {
                if before.alighting.contains(fromStop) && after.boarding.contains(toStop) { return true }
            } else if before.alightingStation == after.boardingStation {
                return true
            }
        }
        return false
    }

    /// A stop's areas: its own, else its nearest parent's that has some.
    func areas(_ stops: [String]) -> Set<String> {
        for stop in stops {
            if let found = areasByStop[stop], !found.isEmpty { return found }
        }
        return []
    }

    /// The leg rules that match `leg`, products alike counted once, cheapest first.
    func candidates(_ leg: EffectiveLeg) -> [FareLegRule] {
        var matched: [FareLegRule] = []
        var top = Int.min
        for rule in legRules {
            guard matchesNetwork(rule.networkID, leg.network), matchesAreas(rule.fromAreaID, leg.fromAreas, named: namedFromAreas),
                matchesAreas(rule.toAreaID, leg.toAreas, named: namedToAreas)
            else { continue }
            if let group = rule.fromTimeframeGroupID, !isWithin(group, leg.departure) { continue }
            if let group = rule.toTimeframeGroupID, !isWithin(group, leg.arrival) { continue }
            if usesPriority {
                let priority = rule.priority ?? 0
                if priority < top { continue }
                if priority > top {
                    top = priority
                    matched.removeAll()
                }
            }
            matched.append(rule)
        }
        var seen: Set<String> = []
        let distinct = matched.filter { seen.insert($0.fareProductID + "\u{0}" + ($0.legGroupID ?? "")).inserted }
        return distinct.sorted { (cheapest[$0.fareProductID] ?? Int.max) < (cheapest[$1.fareProductID] ?? Int.max) }
    }

    func matchesNetwork(_ value: String?, _ network: String?) -> Bool {
        if let value { return value == network }
        if usesPriority { return true }
        guard let network else { return true }
        return !namedNetworks.contains(network)
    }

    func matchesAreas(_ value: String?, _ areas: Set<String>, named: Set<String>) -> Bool {
        if let value { return areas.contains(value) }
        if usesPriority { return true }
        return areas.isDisjoint(with: named)
    }

    /// Whether the timeframe group contains the instant: a row whose service runs on its
    /// local date, with its local time in `[start, end)`.
    func isWithin(_ group: String, _ instant: Int64) -> Bool {
        guard let frames = timeframes[group] else { return false }
        let day = zone.localDay(instant)
        let time = zone.localSecondsOfDay(instant)
        return frames.contains { $0.start <= time && time < $0.end && calendar.isActive(service: $0.service, day: day) }
    }

    /// Every choice of one rule per leg, at most `maxCombinations` (fewer alternatives per
    /// leg, the cheapest kept, when there would be more).
    func combinations(_ options: [[FareLegRule]]) -> [[FareLegRule]] {
        func count(_ width: Int) -> Int {
            var total = 1
            for choices in options { total = min(total * min(choices.count, width), Self.maxCombinations + 1) }
            return total
        }
        var width = options.map(\.count).max() ?? 1
        while width > 1 && count(width) > Self.maxCombinations { width -= 1 }
        var result: [[FareLegRule]] = [[]]
        for choices in options {
            let kept = choices.prefix(width)
            result = result.flatMap { prefix in kept.map { prefix + [$0] } }
        }
        return result
    }

    // MARK: Pricing

    /// A product's price for `media`: its price for that media, else for no media.
    func price(_ product: String, _ media: String?) -> Price? {
        guard let rows = prices[product] else { return nil }
        var best: Price?
        if let media {
            for row in rows where row.media == media && row.minor < (best?.minor ?? Int.max) { best = row }
        }
        if best == nil {
            for row in rows where row.media == nil && row.minor < (best?.minor ?? Int.max) { best = row }
        }
        return best
    }

    /// The itinerary's cost with one rule per leg and one fare media.
    func price(_ legs: [EffectiveLeg], _ rules: [FareLegRule], media: String?) -> FareQuote? {
        var charges: [FareQuote.Charge] = []
        var currency: String?
        var chain: Chain?
        // Where in `charges` the previous leg's own product is, when it was bought on its own.
        var standalone: Int?
        for (index, leg) in legs.enumerated() {
            let rule = rules[index]
            guard let own = price(rule.fareProductID, media) else { return nil }
            if currency == nil { currency = own.currency }
            let ownCharge = FareQuote.Charge(
                productID: rule.fareProductID, productName: own.name, minor: own.minor, currency: own.currency, fareMediaID: own.media, leg: leg.first,
                isTransfer: false)
            let previous = standalone.map { charges[$0].minor }
            if index > 0, let step = transfer(legs, rules, to: index, chain: chain, media: media, own: own.minor, previous: previous) {
                if step.rule.fareTransferType == 2, let position = standalone { charges.remove(at: position) }
                if let product = step.price, let id = step.rule.fareProductID {
                    charges.append(
                        FareQuote.Charge(
                            productID: id, productName: product.name, minor: product.minor, currency: product.currency, fareMediaID: product.media,
                            leg: leg.first, isTransfer: true))
                }
                if step.rule.fareTransferType == 1 { charges.append(ownCharge) }
                chain = (key: step.key, first: step.first, transfers: step.transfers)
                standalone = nil
            } else {
                charges.append(ownCharge)
                standalone = charges.count - 1
                chain = nil
            }
        }
        guard let currency, charges.allSatisfy({ $0.currency == currency }) else { return nil }
        return FareQuote(minor: charges.reduce(0) { $0 + $1.minor }, currency: currency, charges: charges)
    }

    /// The transfer rule for the change to leg `index`, nil when none applies. `own` is the
    /// to-leg's product price, `previous` the from-leg's when it was bought on its own.
    func transfer(_ legs: [EffectiveLeg], _ rules: [FareLegRule], to index: Int, chain: Chain?, media: String?, own: Int, previous: Int?) -> Step? {
        guard let from = rules[index - 1].legGroupID, let to = rules[index].legGroupID else { return nil }
        let key = TransferKey(from: namedFromGroups.contains(from) ? from : nil, to: namedToGroups.contains(to) ? to : nil)
        guard let candidates = transferRules[key] else { return nil }
        let continuing = chain.map { $0.key == key } ?? false
        let first = continuing ? (chain?.first ?? index - 1) : index - 1
        let transfers = continuing ? (chain?.transfers ?? 0) + 1 : 1
        var best: Step?
        var bestRank = (Int.max, Int.max)
        for rule in candidates {
            if let count = rule.transferCount, count != -1, transfers > count { continue }
            if let limit = rule.durationLimit {
                let type = rule.durationLimitType ?? 0
                let start = type <= 1 ? legs[first].departure : legs[first].arrival
                let end = type == 0 || type == 3 ? legs[index].arrival : legs[index].departure
                if end - start > Int64(limit) { continue }
            }
            var product: Price?
            if let id = rule.fareProductID {
                guard let found = price(id, media) else { continue }
                product = found
            }
            var cost = product?.minor ?? 0
            if rule.fareTransferType == 1 { cost += own }
            if rule.fareTransferType == 2, let previous { cost -= previous }
            // The smallest transfer_count that covers the transfers so far (-1: unlimited), then the cheapest.
            let sufficient = rule.transferCount.map { $0 == -1 ? Int.max - 1 : $0 } ?? Int.max
            let rank = (sufficient, cost)
            if best == nil || rank < bestRank {
                best = Step(rule: rule, key: key, first: first, transfers: transfers, price: product)
                bestRank = rank
            }
        }
        return best
    }
}
