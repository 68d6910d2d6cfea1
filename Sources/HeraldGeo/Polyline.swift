/// Google's encoded polyline algorithm (precision 5).
public enum Polyline {
    public static func encode(_ points: [GeoPoint]) -> String {
        var result = ""
        var lastLat = 0
        var lastLng = 0
        for point in points {
            let lat = Int((point.latitude * 1e5).rounded())
            let lng = Int((point.longitude * 1e5).rounded())
            append(lat - lastLat, to: &result)
            append(lng - lastLng, to: &result)
            lastLat = lat
            lastLng = lng
        }
        return result
    }

    private static func append(_ value: Int, to result: inout String) {
        var v = value < 0 ? ~(value << 1) : (value << 1)
        while v >= 0x20 {
            result.unicodeScalars.append(Unicode.Scalar(UInt8((0x20 | (v & 0x1f)) + 63)))
            v >>= 5
        }
        result.unicodeScalars.append(Unicode.Scalar(UInt8(v + 63)))
    }
}
