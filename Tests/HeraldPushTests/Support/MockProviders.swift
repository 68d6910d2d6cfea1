// The mock provider server lives in its own target (the mock APNs executable and the
// benchmarks use it too); every test file here sees it.
@_exported import HeraldMockProviders
