/// A test that needs a database usually waits for a condition too: one import gives both.
@_exported import HeraldTestFixtures
