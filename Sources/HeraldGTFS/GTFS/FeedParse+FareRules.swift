extension FeedParse {
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
