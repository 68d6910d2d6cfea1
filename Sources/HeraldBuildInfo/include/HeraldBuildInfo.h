#ifndef HERALD_BUILD_INFO_H
#define HERALD_BUILD_INFO_H

/// The git commit the binary was built from, as `scripts/release` stamps it ("" in a
/// build that no script stamped: `swift build`, `swift run`, the tests).
///
/// A C target because C is the one place a build can hand a value to the code without
/// a code generator: SwiftPM passes no values to Swift, and a build plugin would cost
/// every build minutes. `scripts/release` writes `generated/commit.h` (git-ignored)
/// before its build and removes it after, so a development build never carries a stale
/// commit.
const char *herald_build_commit(void);

#endif
