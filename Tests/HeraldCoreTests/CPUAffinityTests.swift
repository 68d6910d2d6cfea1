import Testing

@testable import HeraldCore

/// The event-loop count follows the CPUs the process may use, as `/proc/self/status` lists them.
@Suite struct CPUAffinityTests {
    @Test(arguments: [
        ("Cpus_allowed:\t3\n", 2),
        ("Name:\therald\nCpus_allowed:\t1\nCpus_allowed_list:\t0\n", 1),
        ("Cpus_allowed:\tff,ffffffff\n", 40),  // groups of 32 bits, comma-separated
        ("Cpus_allowed:\t00000000,00000100\n", 1),
    ])
    func countsTheBitsOfTheMask(status: String, cpus: Int) {
        #expect(CPUAffinity.count(status: status) == cpus)
    }

    @Test(arguments: ["Name:\tx\n", "Cpus_allowed:\t0\n", "Cpus_allowed:\tzz\n"])
    func anUnreadableOrEmptyMaskIsNil(status: String) {
        #expect(CPUAffinity.count(status: status) == nil)
    }

    @Test func thisProcessHasAtLeastOneCPU() {
        #expect((CPUAffinity.count ?? 0) >= 1)
    }
}
