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
}
