/// GTFS Fares v2: rider_categories.txt, fare_media.txt, fare_products.txt, areas.txt,
/// stop_areas.txt, networks.txt, route_networks.txt, timeframes.txt, fare_leg_rules.txt,
/// fare_leg_join_rules.txt and fare_transfer_rules.txt (routes.network_id is read with the
/// routes). Read in both scopes: the journey planner prices itineraries with them.
///
/// A row that names an id no file defines is a `foreign_key_violation` (an error, as for
/// every other reference) and is not kept. Distance-based leg rules (`min_distance_units`,
/// `max_distance_units`) are a proposal, not in the GTFS reference: such rows are reported
/// (INFO) and left out, so a leg they alone would price has no fare rather than a wrong one.
extension FeedParse {
    /// Ids the Fares v2 files define, for the references of the files after them.
    struct FaresV2IDs {
        var riderCategories: Set<String> = []
        var fareMedia: Set<String> = []
        var fareProducts: Set<String> = []
        var areas: Set<String> = []
        var networks: Set<String> = []
        var timeframeGroups: Set<String> = []
        var legGroups: Set<String> = []
    }

    func readFaresV2() {
        var ids = FaresV2IDs()
        readRiderCategories(&ids)
        readFareMedia(&ids)
        readFareProducts(&ids)
        readAreas(&ids)
        readStopAreas(ids)
        readNetworks(&ids)
        readRouteNetworks(ids)
        readTimeframes(&ids)
        readFareLegRules(&ids)
        readFareLegJoinRules(ids)
        readFareTransferRules(ids)
    }

    func readRiderCategories(_ ids: inout FaresV2IDs) {
        guard
            let map = open(
                "rider_categories.txt", required: false, columns: ["rider_category_id", "rider_category_name", "is_default_fare_category", "eligibility_url"],
                requiredColumns: ["rider_category_id", "rider_category_name"])
        else { return }
        records(map) { record in
            guard let id = requiredText(record, map, "rider_category_id"), let name = requiredText(record, map, "rider_category_name") else { return }
            guard ids.riderCategories.insert(id).inserted else {
                duplicate(record, map, "rider_category_id", id)
                return
            }
            let isDefault = enumeration(record, map, "is_default_fare_category", 0...1, fallback: 0) == 1
            feed.riderCategories.append(RiderCategory(id: id, name: name, isDefault: isDefault, eligibilityURL: text(record, map, "eligibility_url")))
        }
    }

    func readFareMedia(_ ids: inout FaresV2IDs) {
        guard
            let map = open(
                "fare_media.txt", required: false, columns: ["fare_media_id", "fare_media_name", "fare_media_type"],
                requiredColumns: ["fare_media_id", "fare_media_type"])
        else { return }
        records(map) { record in
            guard let id = requiredText(record, map, "fare_media_id") else { return }
            guard ids.fareMedia.insert(id).inserted else {
                duplicate(record, map, "fare_media_id", id)
                return
            }
            let type = enumeration(record, map, "fare_media_type", 0...4, fallback: 0, required: true)
            feed.fareMedia.append(FareMedia(id: id, name: text(record, map, "fare_media_name"), type: type))
        }
    }

    /// Amounts are held within ±1,000,000,000 (in cents they still add up without overflow).
    static let maxFareAmount = 1_000_000_000.0

    func readFareProducts(_ ids: inout FaresV2IDs) {
        guard
            let map = open(
                "fare_products.txt", required: false,
                columns: ["fare_product_id", "fare_product_name", "rider_category_id", "fare_media_id", "amount", "currency"],
                requiredColumns: ["fare_product_id", "amount", "currency"])
        else { return }
        var seen: Set<String> = []
        records(map) { record in
            guard let id = requiredText(record, map, "fare_product_id"),
                let amount = decimal(record, map, "amount", -Self.maxFareAmount...Self.maxFareAmount, required: true),
                let currency = requiredText(record, map, "currency")
            else { return }
            guard currency.utf8.count == 3, currency.allSatisfy({ $0.isASCII && $0.isLetter }) else {
                report.error(
                    "invalid_currency", .init(file: map.file.name, line: record.line, field: "currency", value: currency, message: "not an ISO 4217 code"))
                return
            }
            let category = text(record, map, "rider_category_id")
            if let category, !ids.riderCategories.contains(category) {
                dangling(record, map, "rider_category_id", category, "rider category")
                return
            }
            let media = text(record, map, "fare_media_id")
            if let media, !ids.fareMedia.contains(media) {
                dangling(record, map, "fare_media_id", media, "fare media")
                return
            }
            guard seen.insert(id + "\u{0}" + (category ?? "") + "\u{0}" + (media ?? "")).inserted else {
                duplicate(record, map, "fare_product_id, rider_category_id, fare_media_id", id)
                return
            }
            ids.fareProducts.insert(id)
            feed.fareProducts.append(
                FareProduct(
                    id: id, name: text(record, map, "fare_product_name"), riderCategoryID: category, fareMediaID: media, amount: amount,
                    currency: currency.uppercased()))
        }
    }

    func readAreas(_ ids: inout FaresV2IDs) {
        guard let map = open("areas.txt", required: false, columns: ["area_id", "area_name"], requiredColumns: ["area_id"]) else { return }
        records(map) { record in
            guard let id = requiredText(record, map, "area_id") else { return }
            guard ids.areas.insert(id).inserted else {
                duplicate(record, map, "area_id", id)
                return
            }
            feed.areas.append(FareArea(id: id, name: text(record, map, "area_name")))
        }
    }

    func readStopAreas(_ ids: FaresV2IDs) {
        guard let map = open("stop_areas.txt", required: false, columns: ["area_id", "stop_id"], requiredColumns: ["area_id", "stop_id"]) else { return }
        var seen: Set<String> = []
        records(map) { record in
            guard let area = requiredText(record, map, "area_id"), let stop = requiredText(record, map, "stop_id") else { return }
            guard ids.areas.contains(area) else {
                dangling(record, map, "area_id", area, "area")
                return
            }
            guard stopIndex[stop] != nil else {
                dangling(record, map, "stop_id", stop, "stop")
                return
            }
            guard seen.insert(area + "\u{0}" + stop).inserted else {
                duplicate(record, map, "area_id, stop_id", "\(area) \(stop)")
                return
            }
            feed.stopAreas.append(StopArea(areaID: area, stopID: stop))
        }
    }

    func readNetworks(_ ids: inout FaresV2IDs) {
        // routes.network_id names networks too (when the feed has neither file below).
        for route in feed.routes {
            if let network = route.networkID { ids.networks.insert(network) }
        }
        let hasFiles = archive.contains("networks.txt") || archive.contains("route_networks.txt")
        if checking && hasFiles, let route = feed.routes.first(where: { $0.networkID != nil }) {
            report.warning(
                "route_networks_specified_in_more_than_one_file",
                .init(
                    file: "routes.txt", field: "network_id", value: route.id,
                    message: "routes.network_id and networks.txt or route_networks.txt: route_networks.txt is used"))
        }
        guard let map = open("networks.txt", required: false, columns: ["network_id", "network_name"], requiredColumns: ["network_id"]) else { return }
        var seen: Set<String> = []
        records(map) { record in
            guard let id = requiredText(record, map, "network_id") else { return }
            guard seen.insert(id).inserted else {
                duplicate(record, map, "network_id", id)
                return
            }
            ids.networks.insert(id)
            feed.networks.append(FareNetwork(id: id, name: text(record, map, "network_name")))
        }
    }

    func readRouteNetworks(_ ids: FaresV2IDs) {
        guard let map = open("route_networks.txt", required: false, columns: ["network_id", "route_id"], requiredColumns: ["network_id", "route_id"]) else {
            return
        }
        var seen: Set<String> = []
        records(map) { record in
            guard let network = requiredText(record, map, "network_id"), let route = requiredText(record, map, "route_id") else { return }
            guard ids.networks.contains(network) else {
                dangling(record, map, "network_id", network, "network")
                return
            }
            guard routeIndex[route] != nil else {
                dangling(record, map, "route_id", route, "route")
                return
            }
            // A route is in one network.
            guard seen.insert(route).inserted else {
                duplicate(record, map, "route_id", route)
                return
            }
            feed.routeNetworks.append(RouteNetwork(networkID: network, routeID: route))
        }
    }

    func readTimeframes(_ ids: inout FaresV2IDs) {
        guard
            let map = open(
                "timeframes.txt", required: false, columns: ["timeframe_group_id", "start_time", "end_time", "service_id"],
                requiredColumns: ["timeframe_group_id", "service_id"])
        else { return }
        records(map) { record in
            guard let group = requiredText(record, map, "timeframe_group_id"), let serviceID = requiredText(record, map, "service_id") else { return }
            guard let service = serviceIndex[serviceID] else {
                dangling(record, map, "service_id", serviceID, "calendar or calendar_dates service")
                return
            }
            let start = time(record, map, "start_time")
            let end = time(record, map, "end_time")
            if case .invalid = start { return }
            if case .invalid = end { return }
            // Both or neither: empty means the whole day.
            switch (start, end) {
            case (.missing, .value), (.value, .missing):
                report.error(
                    "timeframe_only_start_or_end_time_specified",
                    .init(file: map.file.name, line: record.line, field: "start_time", value: group, message: "start_time and end_time go together"))
                return
            default: break
            }
            let from = start.seconds ?? 0
            let to = end.seconds ?? 86_400
            if from > 86_400 || to > 86_400 {
                report.error(
                    "timeframe_start_or_end_time_greater_than_twenty_four_hours",
                    .init(
                        file: map.file.name, line: record.line, field: from > 86_400 ? "start_time" : "end_time", value: group,
                        message: "timeframes end by 24:00:00"))
                return
            }
            ids.timeframeGroups.insert(group)
            feed.timeframes.append(Timeframe(groupID: group, start: from, end: to, service: service))
        }
    }

    func readFareLegRules(_ ids: inout FaresV2IDs) {
        guard
            let map = open(
                "fare_leg_rules.txt", required: false,
                columns: [
                    "leg_group_id", "network_id", "from_area_id", "to_area_id", "from_timeframe_group_id", "to_timeframe_group_id", "fare_product_id",
                    "rule_priority", "min_distance_units", "max_distance_units",
                ],
                requiredColumns: ["fare_product_id"])
        else { return }
        let hasPriority = map["rule_priority"] != nil
        var seen: Set<String> = []
        records(map) { record in
            guard let product = requiredText(record, map, "fare_product_id") else { return }
            let minDistance = text(record, map, "min_distance_units")
            let maxDistance = text(record, map, "max_distance_units")
            if minDistance != nil || maxDistance != nil {
                if checking {
                    report.info(
                        "unsupported_distance_based_fare_leg_rule",
                        .init(
                            file: map.file.name, line: record.line, field: "min_distance_units", value: product,
                            message: "distance-based leg rules are a proposal, not GTFS; the rule is not used"))
                }
                return
            }
            guard ids.fareProducts.contains(product) else {
                dangling(record, map, "fare_product_id", product, "fare product")
                return
            }
            let network = text(record, map, "network_id")
            if let network, !ids.networks.contains(network) {
                dangling(record, map, "network_id", network, "network")
                return
            }
            var areas: [String?] = []
            for column in ["from_area_id", "to_area_id"] {
                let area = text(record, map, column)
                if let area, !ids.areas.contains(area) {
                    dangling(record, map, column, area, "area")
                    return
                }
                areas.append(area)
            }
            var timeframes: [String?] = []
            for column in ["from_timeframe_group_id", "to_timeframe_group_id"] {
                let group = text(record, map, column)
                if let group, !ids.timeframeGroups.contains(group) {
                    dangling(record, map, column, group, "timeframe")
                    return
                }
                timeframes.append(group)
            }
            var priority: Int?
            if hasPriority {
                guard let index = map["rule_priority"] else { return }
                if record.isEmpty(index) {
                    priority = 0
                } else {
                    guard let value = integer(record, map, "rule_priority", 0...Int(Int32.max)) else { return }
                    priority = value
                }
            }
            let parts: [String?] = [network, areas[0], areas[1], timeframes[0], timeframes[1], product]
            let key = parts.map { $0 ?? "" }.joined(separator: "\u{0}")
            guard seen.insert(key).inserted else {
                duplicate(record, map, "network_id, from_area_id, to_area_id, from_timeframe_group_id, to_timeframe_group_id, fare_product_id", product)
                return
            }
            let group = text(record, map, "leg_group_id")
            if let group { ids.legGroups.insert(group) }
            feed.fareLegRules.append(
                FareLegRule(
                    legGroupID: group, networkID: network, fromAreaID: areas[0], toAreaID: areas[1], fromTimeframeGroupID: timeframes[0],
                    toTimeframeGroupID: timeframes[1], fareProductID: product, priority: priority))
        }
    }

    func readFareLegJoinRules(_ ids: FaresV2IDs) {
        guard
            let map = open(
                "fare_leg_join_rules.txt", required: false, columns: ["from_network_id", "to_network_id", "from_stop_id", "to_stop_id"],
                requiredColumns: ["from_network_id", "to_network_id"])
        else { return }
        var seen: Set<String> = []
        records(map) { record in
            guard let from = requiredText(record, map, "from_network_id"), let to = requiredText(record, map, "to_network_id") else { return }
            for (column, network) in [("from_network_id", from), ("to_network_id", to)] where !ids.networks.contains(network) {
                dangling(record, map, column, network, "network")
                return
            }
            var stops: [String?] = []
            for column in ["from_stop_id", "to_stop_id"] {
                let stop = text(record, map, column)
                if let stop, stopIndex[stop] == nil {
                    dangling(record, map, column, stop, "stop")
                    return
                }
                stops.append(stop)
            }
            if (stops[0] == nil) != (stops[1] == nil) {
                missing(record, map, stops[0] == nil ? "from_stop_id" : "to_stop_id", "from_stop_id and to_stop_id go together")
                return
            }
            guard seen.insert([from, to, stops[0] ?? "", stops[1] ?? ""].joined(separator: "\u{0}")).inserted else {
                duplicate(record, map, "from_network_id, to_network_id, from_stop_id, to_stop_id", "\(from) \(to)")
                return
            }
            feed.fareLegJoinRules.append(FareLegJoinRule(fromNetworkID: from, toNetworkID: to, fromStopID: stops[0], toStopID: stops[1]))
        }
    }

    func readFareTransferRules(_ ids: FaresV2IDs) {
        guard
            let map = open(
                "fare_transfer_rules.txt", required: false,
                columns: [
                    "from_leg_group_id", "to_leg_group_id", "transfer_count", "duration_limit", "duration_limit_type", "fare_transfer_type", "fare_product_id",
                ],
                requiredColumns: ["fare_transfer_type"])
        else { return }
        var seen: Set<String> = []
        records(map) { record in
            var groups: [String?] = []
            for column in ["from_leg_group_id", "to_leg_group_id"] {
                let group = text(record, map, column)
                if let group, !ids.legGroups.contains(group) {
                    dangling(record, map, column, group, "fare leg rule group")
                    return
                }
                groups.append(group)
            }
            let product = text(record, map, "fare_product_id")
            if let product, !ids.fareProducts.contains(product) {
                dangling(record, map, "fare_product_id", product, "fare product")
                return
            }
            guard let type = integer(record, map, "fare_transfer_type", 0...2, required: true) else { return }
            // transfer_count: required between one leg group and itself, forbidden otherwise.
            var count: Int?
            if let index = map["transfer_count"], !record.isEmpty(index) {
                guard let value = integer(record, map, "transfer_count", -1...Int(Int32.max)) else { return }
                if value == 0 {
                    report.error(
                        "fare_transfer_rule_invalid_transfer_count",
                        .init(file: map.file.name, line: record.line, field: "transfer_count", value: "0", message: "-1 (no limit) or 1 and more"))
                    return
                }
                count = value
            }
            let sameGroup = groups[0] != nil && groups[0] == groups[1]
            if sameGroup && count == nil {
                report.error(
                    "fare_transfer_rule_missing_transfer_count",
                    .init(file: map.file.name, line: record.line, field: "transfer_count", message: "required when from_leg_group_id equals to_leg_group_id"))
                return
            }
            if !sameGroup && count != nil {
                report.error(
                    "fare_transfer_rule_with_forbidden_transfer_count",
                    .init(file: map.file.name, line: record.line, field: "transfer_count", message: "only when from_leg_group_id equals to_leg_group_id"))
                return
            }
            var limit: Int?
            if let index = map["duration_limit"], !record.isEmpty(index) {
                guard let value = integer(record, map, "duration_limit", 1...Int(Int32.max)) else { return }
                limit = value
            }
            var limitType: Int?
            if let index = map["duration_limit_type"], !record.isEmpty(index) {
                guard let value = integer(record, map, "duration_limit_type", 0...3) else { return }
                limitType = value
            }
            if limit != nil && limitType == nil {
                report.error(
                    "fare_transfer_rule_duration_limit_without_type",
                    .init(file: map.file.name, line: record.line, field: "duration_limit_type", message: "required with duration_limit"))
                return
            }
            if limit == nil && limitType != nil {
                report.error(
                    "fare_transfer_rule_duration_limit_type_without_duration_limit",
                    .init(file: map.file.name, line: record.line, field: "duration_limit_type", message: "only with duration_limit"))
                return
            }
            let parts: [String] = [groups[0] ?? "", groups[1] ?? "", product ?? "", count.map { String($0) } ?? "", limit.map { String($0) } ?? ""]
            let key = parts.joined(separator: "\u{0}")
            guard seen.insert(key).inserted else {
                duplicate(
                    record, map, "from_leg_group_id, to_leg_group_id, fare_product_id, transfer_count, duration_limit", "\(groups[0] ?? "") \(groups[1] ?? "")")
                return
            }
            feed.fareTransferRules.append(
                FareTransferRule(
                    fromLegGroupID: groups[0], toLegGroupID: groups[1], transferCount: count, durationLimit: limit, durationLimitType: limitType,
                    fareTransferType: type, fareProductID: product))
        }
    }
}
