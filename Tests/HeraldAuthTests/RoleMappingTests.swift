import HeraldAuth
import HeraldCore
import Testing

/// The token shapes of the identity providers the porting guide names, and what role each
/// gives under the configuration the guide shows for it.
@Suite struct RoleMappingTests {
    /// Supabase: every signed-in user has `role: "authenticated"`; app roles are set by the
    /// backend in `app_metadata` (never `user_metadata`: the user can write that).
    let supabase = RoleMapping(claims: ["app_metadata.role", "role"], values: ["authenticated": .customer])

    func supabaseToken(appRole: String? = nil, role: String = "authenticated") -> [String: JSONValue] {
        var appMetadata: [String: JSONValue] = ["provider": "apple", "providers": ["apple"]]
        if let appRole { appMetadata["role"] = .string(appRole) }
        return [
            "sub": "8f14e45f-ceea-467f-a8e5-1b2f3c9d0a11", "aud": "authenticated", "role": .string(role), "app_metadata": .object(appMetadata),
            "user_metadata": ["role": "operator"],
        ]
    }

    @Test func supabaseSessionsAreCustomersUnlessAppMetadataSaysOtherwise() {
        #expect(supabase.role(in: supabaseToken()) == .customer)
        #expect(supabase.role(in: supabaseToken(appRole: "driver")) == .driver)
        #expect(supabase.role(in: supabaseToken(appRole: "operator")) == .operator)
        // A value of app_metadata.role that is no role falls through to `role`.
        #expect(supabase.role(in: supabaseToken(appRole: "beta")) == .customer)
        // The anon key's role is neither mapped nor a Herald role, and there is no default.
        #expect(supabase.role(in: supabaseToken(role: "anon")) == nil)
        // Without the mapping, an `authenticated` token names no role (the 401).
        #expect(RoleMapping().role(in: supabaseToken()) == nil)
    }

    @Test func firebaseCustomClaimsAtTheTopLevelWithADefault() {
        let firebase = RoleMapping(claims: ["role"], defaultRole: .customer)
        let base: [String: JSONValue] = [
            "iss": "https://securetoken.google.com/app", "aud": "app", "sub": "kJ3nWqL0aXYZ1234567890abcdE2",
            "firebase": ["sign_in_provider": "apple.com"],
        ]
        #expect(firebase.role(in: base) == .customer)
        var driver = base
        driver["role"] = "driver"
        #expect(firebase.role(in: driver) == .driver)
    }

    @Test func auth0NamespacedClaimsHoldingAListAreReadWhole() {
        let claim = "https://herald.example.com/roles"
        let auth0 = RoleMapping(claims: [claim], values: ["Driver": .driver, "Dispatcher": .operator], defaultRole: .customer)
        func token(_ roles: [JSONValue]?) -> [String: JSONValue] {
            var values: [String: JSONValue] = ["sub": "auth0|64f0c0ffee", "aud": ["https://api.herald.example.com"]]
            if let roles { values[claim] = .array(roles) }
            return values
        }
        #expect(auth0.role(in: token(["Beta tester", "Dispatcher"])) == .operator)
        #expect(auth0.role(in: token(["Driver"])) == .driver)
        #expect(auth0.role(in: token([])) == .customer)
        #expect(auth0.role(in: token(nil)) == .customer)
        // Numbers and objects in the list are passed over.
        #expect(auth0.role(in: token([1, ["a": "b"], "Driver"])) == .driver)
    }

    @Test func aMappingMayRenameAHeraldRoleAndObjectsAreNotRoles() {
        let mapping = RoleMapping(claims: ["role"], values: ["operator": .customer])
        #expect(mapping.role(in: ["role": "operator"]) == .customer)
        #expect(mapping.role(in: ["role": "driver"]) == .driver)
        #expect(mapping.role(in: ["role": ["name": "driver"]]) == nil)
        #expect(mapping.role(in: ["role": 3]) == nil)
    }
}

@Suite struct CacheControlTests {
    @Test(
        arguments: [
            ("public, max-age=19645, must-revalidate, no-transform", 19_645),
            ("max-age=600", 600),
            ("public, s-maxage=60, max-age=600", 60),
            ("no-cache", 0),
            ("no-store, max-age=600", 0),
            ("max-age=\"30\"", 30),
        ] as [(String, Int)])
    func readsTheFreshnessOfAnAnswer(header: String, seconds: Int) {
        #expect(CacheControl(header: header).maxAgeSeconds == seconds)
    }

    @Test(arguments: [nil, "", "public", "max-age=", "max-age=-5", "max-age=soon"] as [String?])
    func saysNothingWhenTheHeaderDoesNot(header: String?) {
        #expect(CacheControl(header: header).maxAgeSeconds == nil)
    }
}

@Suite struct AuthConfigRoleNamesTests {
    /// The config's own list of role names (kept apart from `Role` for the config fuzzer).
    @Test func theConfigKnowsEveryRoleByName() {
        var config = AuthConfig()
        for role in Role.allCases {
            config.defaultRole = role.rawValue
            config.roleMap = ["x": role.rawValue]
            #expect(config.validationErrors().isEmpty, "\(role)")
        }
        config.roleMap = ["authenticated": "admin"]
        #expect(config.validationErrors().map(\.field) == ["auth.role_map.authenticated"])
    }
}
