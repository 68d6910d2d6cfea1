/// A change to a user's settings; `nil` leaves a field as it is, `.some(nil)` clears it.
public struct UserChanges: Sendable, Equatable {
    public var displayName: String??
    public var locale: String??
    public var timeZone: String?
    public var phone: String??

    public init(displayName: String?? = nil, locale: String?? = nil, timeZone: String? = nil, phone: String?? = nil) {
        self.phone = phone
        self.displayName = displayName
        self.locale = locale
        self.timeZone = timeZone
    }
}
