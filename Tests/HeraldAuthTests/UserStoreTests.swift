import HeraldStorage
import HeraldTestSupport
import Testing

@testable import HeraldAuth

@Suite struct UserStoreTests {
    @Test(arguments: TestEngine.allCases)
    func createsAUserOnceAndKeepsTheFirstRecord(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let store = UserStore()
            let created = try await database.withConnection { db in try await store.ensure(db, id: "u1", role: "driver", now: 1000) }
            let again = try await database.withConnection { db in try await store.ensure(db, id: "u1", role: "customer", now: 2000) }
            #expect(created)
            #expect(!again)
            let user = try await database.withConnection { db in try await store.find(db, id: "u1") }
            #expect(user == UserRecord(id: "u1", role: "driver", displayName: nil, locale: nil, timeZone: "UTC", createdAt: 1000, updatedAt: 1000))
        }
    }

    @Test(arguments: TestEngine.allCases)
    func updatesOnlyTheGivenFieldsAndClearsWithNull(engine: TestEngine) async throws {
        try await TestDatabase.with(engine) { database in
            let store = UserStore()
            _ = try await database.withConnection { db in try await store.ensure(db, id: "u1", role: "customer", now: 1) }
            let first = try await database.withConnection { db in
                try await store.update(db, id: "u1", changes: UserChanges(displayName: "Ann", locale: "en-AU", timeZone: "Australia/Sydney"), now: 5)
            }
            #expect(first?.displayName == "Ann")
            #expect(first?.locale == "en-AU")
            #expect(first?.timeZone == "Australia/Sydney")
            #expect(first?.updatedAt == 5)

            let second = try await database.withConnection { db in
                try await store.update(db, id: "u1", changes: UserChanges(locale: .some(nil)), now: 9)
            }
            #expect(second?.displayName == "Ann")
            #expect(second?.locale == nil)
            #expect(second?.timeZone == "Australia/Sydney")

            let missing = try await database.withConnection { db in
                try await store.update(db, id: "nobody", changes: UserChanges(displayName: "X"), now: 9)
            }
            #expect(missing == nil)
        }
    }
}
