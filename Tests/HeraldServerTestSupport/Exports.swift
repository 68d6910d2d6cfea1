/// A server test also reaches the database and the fixtures: one import gives all three layers.
@_exported import HeraldTestSupport
