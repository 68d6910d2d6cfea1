import Synchronization

/// A weak reference that can be set after it was captured: lets an object's stored closures
/// (a `GroupCommit`'s writer) reach the object, which cannot be captured before its
/// initializer has set every stored property, without a cycle.
public final class WeakReference<Object: AnyObject & Sendable>: Sendable {
    private let storage = Mutex<Box>(Box())

    private struct Box: @unchecked Sendable {
        // Safe: only read and written under the mutex, and the object it points to is Sendable.
        weak var object: Object?
    }

    public init() {}

    public var value: Object? {
        get { storage.withLock { $0.object } }
        set { storage.withLock { $0.object = newValue } }
    }
}
