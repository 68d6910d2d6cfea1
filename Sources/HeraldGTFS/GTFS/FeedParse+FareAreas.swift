extension FeedParse {
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
}
