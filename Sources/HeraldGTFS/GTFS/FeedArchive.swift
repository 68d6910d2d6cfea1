import Foundation
import ZIPFoundation

/// The files of a GTFS feed, read one at a time (so the largest, `stop_times.txt`, is in
/// memory only while it is parsed).
///
/// A feed arrives as a `.zip` (downloads, uploads, the database copy) or a folder of `.txt`
/// files (`herald transit import ./feed/`). Both are kept as a zip: a folder is packed into
/// one (files in name order, so the same folder gives the same bytes), which is what the
/// database stores and `GET /gtfs/feed` serves.
///
/// Why ZIPFoundation: it is the ZIP reader in the package mirror, it reads from memory and
/// inflates with the system zlib (Halifax's 26 MB of text in ~0.1 s); a feed is
/// small enough to hold compressed in memory.
public struct FeedArchive: Sendable {
    /// The zip's bytes.
    public let zipBytes: Data
    /// File names at the root of the feed (a feed zipped inside one folder is read from it).
    public let fileNames: [String]
    /// The folder inside the zip the files live in ("" at the root).
    let prefix: String
    /// Uncompressed bytes the feed may expand to (a zip bomb is refused, not inflated).
    let maxUncompressedBytes: Int

    public static let defaultMaxUncompressedBytes = 4 << 30
    /// How much a file may expand: text compresses 5 to 20 times, a zip bomb a thousand.
    /// A file declaring more, or inflating past it, is refused before it is held.
    public static let maxExpansion: UInt64 = 200

    /// Entries whose names could escape a folder (`../`, `/tmp/x`, `C:\x`) or hold control
    /// characters: dropped from the feed (and from the zip it keeps and serves).
    public private(set) var droppedNames: [String] = []

    /// Whether a zip entry's name is one a feed may keep: relative, no `..`, no backslash,
    /// no control characters.
    static func isSafe(_ name: String) -> Bool {
        !name.isEmpty && !name.hasPrefix("/") && !name.contains("\\") && !name.contains(":")
            && !name.split(separator: "/", omittingEmptySubsequences: false).contains { $0 == ".." }
            && !name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F }
    }

    /// Opens a zip held in memory.
    public init(zip: Data, maxUncompressedBytes: Int = defaultMaxUncompressedBytes) throws(FeedArchiveError) {
        let archive: Archive
        do {
            archive = try Archive(data: zip, accessMode: .read)
        } catch {
            throw .notAZip
        }
        var names: [String] = []
        var dropped: [String] = []
        var total = 0
        for entry in archive where entry.type == .file {
            guard Self.isSafe(entry.path) else {
                dropped.append(entry.path)
                continue
            }
            if entry.uncompressedSize > max(entry.compressedSize, 1) * Self.maxExpansion { throw .bomb(entry.path) }
            names.append(entry.path)
            total += Int(clamping: entry.uncompressedSize)
        }
        guard total <= maxUncompressedBytes else { throw .tooLarge(limit: maxUncompressedBytes) }
        if !dropped.isEmpty {
            // Kept without them: the zip is stored and served to anyone as the feed.
            var safe = try Self.repack(archive, names: names, maxUncompressedBytes: maxUncompressedBytes)
            safe.droppedNames = dropped
            self = safe
            return
        }
        // Files at the root, or all inside one folder (a common way feeds get zipped).
        var prefix = ""
        if !names.contains(where: { !$0.contains("/") && $0.hasSuffix(".txt") }) {
            let folders = Set(
                names.compactMap { name -> String? in
                    guard let slash = name.firstIndex(of: "/") else { return nil }
                    return String(name[...slash])
                })
            if folders.count == 1, let folder = folders.first { prefix = folder }
        }
        self.zipBytes = zip
        self.prefix = prefix
        self.fileNames = names.filter { $0.hasPrefix(prefix) && !$0.dropFirst(prefix.count).contains("/") }.map { String($0.dropFirst(prefix.count)) }.sorted()
        self.maxUncompressedBytes = maxUncompressedBytes
    }

    /// A new zip of `names` from `archive` (each read within the archive's bounds).
    static func repack(_ archive: Archive, names: [String], maxUncompressedBytes: Int) throws(FeedArchiveError) -> FeedArchive {
        let data = try pack(names) { name in
            guard let entry = archive[name] else { return nil }
            return Data(try Self.extract(entry, from: archive, limit: maxUncompressedBytes))
        }
        return try FeedArchive(zip: data, maxUncompressedBytes: maxUncompressedBytes)
    }

    /// A zip of the files `contents` gives for `names` (nil: left out), in that order, each
    /// with the same date, so the same files give the same bytes.
    static func pack(_ names: [String], contents: (String) throws -> Data?) throws(FeedArchiveError) -> Data {
        let packed: Archive
        do {
            packed = try Archive(accessMode: .create)
            for name in names {
                guard let bytes = try contents(name) else { continue }
                try packed.addEntry(
                    with: name, type: .file, uncompressedSize: Int64(bytes.count), modificationDate: Date(timeIntervalSince1970: 315_532_800),
                    compressionMethod: .deflate
                ) { position, size in
                    bytes.subdata(in: Int(position)..<Int(position) + size)
                }
            }
        } catch let error as FeedArchiveError {
            throw error
        } catch {
            throw .unreadable("\(error)")
        }
        guard let data = packed.data else { throw .unreadable("the zip could not be written") }
        return data
    }

    /// Inflates one entry, refusing it as soon as it outgrows what it declared, its
    /// compressed size times `maxExpansion`, or `limit`: a lying header costs no more
    /// memory than an honest one.
    static func extract(_ entry: Entry, from archive: Archive, limit: Int) throws -> [UInt8] {
        let bound = Int(clamping: min(UInt64(limit), entry.uncompressedSize, max(entry.compressedSize, 1) * maxExpansion))
        var bytes: [UInt8] = []
        bytes.reserveCapacity(bound)
        _ = try archive.extract(entry, bufferSize: 256 * 1024, skipCRC32: false) { chunk in
            guard bytes.count + chunk.count <= bound else {
                throw bytes.count + chunk.count > limit ? FeedArchiveError.tooLarge(limit: limit) : FeedArchiveError.bomb(entry.path)
            }
            bytes.append(contentsOf: chunk)
        }
        return bytes
    }

    /// The folder the files were found in (a notice for the report), or nil at the root.
    public var subfolder: String? { prefix.isEmpty ? nil : prefix }

    /// Packs the `.txt` (and other) files of a folder into a zip.
    public init(folder: String, maxUncompressedBytes: Int = defaultMaxUncompressedBytes) throws(FeedArchiveError) {
        let manager = FileManager.default
        var isDirectory: ObjCBool = false
        guard manager.fileExists(atPath: folder, isDirectory: &isDirectory), isDirectory.boolValue else { throw .notFound(folder) }
        let names: [String]
        do {
            names = try manager.contentsOfDirectory(atPath: folder).filter { name in
                var directory: ObjCBool = false
                return !name.hasPrefix(".") && manager.fileExists(atPath: folder + "/" + name, isDirectory: &directory) && !directory.boolValue
            }.sorted()
        } catch {
            throw .notFound(folder)
        }
        var total = 0
        let data = try Self.pack(names) { name in
            let contents = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name))
            total += contents.count
            guard total <= maxUncompressedBytes else { throw FeedArchiveError.tooLarge(limit: maxUncompressedBytes) }
            return contents
        }
        try self.init(zip: data, maxUncompressedBytes: maxUncompressedBytes)
    }

    /// Reads a path that is a `.zip` file or a folder of feed files.
    public init(path: String, maxUncompressedBytes: Int = defaultMaxUncompressedBytes) throws(FeedArchiveError) {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { throw .notFound(path) }
        if isDirectory.boolValue {
            try self.init(folder: path, maxUncompressedBytes: maxUncompressedBytes)
        } else {
            guard let data = FileManager.default.contents(atPath: path) else { throw .notFound(path) }
            try self.init(zip: data, maxUncompressedBytes: maxUncompressedBytes)
        }
    }

    public func contains(_ name: String) -> Bool {
        fileNames.contains(name)
    }

    /// The uncompressed bytes of one file, or nil when the feed has no such file.
    public func read(_ name: String) throws(FeedArchiveError) -> [UInt8]? {
        guard fileNames.contains(name) else { return nil }
        let limit = maxUncompressedBytes
        do {
            let archive = try Archive(data: zipBytes, accessMode: .read)
            guard let entry = archive[prefix + name] else { return nil }
            return try Self.extract(entry, from: archive, limit: limit)
        } catch let error as FeedArchiveError {
            throw error
        } catch {
            throw .unreadable("\(name): \(error)")
        }
    }
}

public enum FeedArchiveError: Error, Equatable, Sendable, CustomStringConvertible {
    case notFound(String)
    case notAZip
    case tooLarge(limit: Int)
    case unreadable(String)
    /// A file that expands more than `FeedArchive.maxExpansion` times (or past its size).
    case bomb(String)

    public var description: String {
        switch self {
        case .bomb(let name): "\(name) expands more than \(FeedArchive.maxExpansion) times its compressed size: refused"
        case .notFound(let path): "no such file or folder: \(path)"
        case .notAZip: "the file is not a zip archive"
        case .tooLarge(let limit): "the feed expands to more than \(limit) bytes"
        case .unreadable(let detail): "the zip could not be read: \(detail)"
        }
    }
}
