import HeraldPush

/// A notification's severity and interruption level live in HeraldPush because the push
/// message carries them (an `alert` or a time-sensitive level wakes the device); modules that
/// send notifications name them from here.
public typealias Severity = HeraldPush.Severity
public typealias InterruptionLevel = HeraldPush.InterruptionLevel
