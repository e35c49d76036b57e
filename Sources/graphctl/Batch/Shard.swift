import ArgumentParser
import Glibc

/// `--shard I/N`: this process takes the inputs whose path hashes to I modulo N.
///
/// The hash is FNV-1a (64 bits, finalised) of the input's path as listed, the same on every machine and
/// every run (Swift's own `Hasher` is seeded per process). An input's shard depends on its path
/// alone, so adding inputs never moves one already assigned: shards stay stable as a folder
/// grows, which an index-modulo split (the n-th input of the sorted list) would not be. The
/// price is balance: shards differ in size by chance (for 1,000 inputs over 4 shards, by a few
/// per cent), not by at most one.
///
/// `--shard auto` reads I from `JOB_COMPLETION_INDEX` (set by Kubernetes in each pod of an
/// Indexed Job) and N from `JOB_COMPLETIONS` (set in the Job's manifest to its
/// `spec.completions`), so one command line serves every pod.
struct Shard: Sendable, Equatable, CustomStringConvertible {
    let index: Int
    let count: Int

    static let indexVariable = "JOB_COMPLETION_INDEX"
    static let countVariable = "JOB_COMPLETIONS"

    init(index: Int, count: Int) {
        self.index = index
        self.count = count
    }

    /// Parses `I/N` (0 ≤ I < N), or `auto` from the environment.
    init(parsing text: String, environment: (String) -> String? = { getenv($0).map { String(cString: $0) } }) throws(ValidationError) {
        if text == "auto" {
            guard let i = environment(Self.indexVariable) else {
                throw ValidationError("--shard auto: \(Self.indexVariable) is not set (Kubernetes sets it in the pods of an Indexed Job)")
            }
            guard let n = environment(Self.countVariable) else {
                throw ValidationError("--shard auto: \(Self.countVariable) is not set (set it in the Job's manifest to spec.completions)")
            }
            guard let index = Int(i), index >= 0 else {
                throw ValidationError("--shard auto: \(Self.indexVariable) is \"\(i)\", not a whole number from 0")
            }
            guard let count = Int(n), count >= 1 else {
                throw ValidationError("--shard auto: \(Self.countVariable) is \"\(n)\", not a whole number from 1")
            }
            guard index < count else {
                throw ValidationError("--shard auto: \(Self.indexVariable) \(index) is not below \(Self.countVariable) \(count)")
            }
            self.init(index: index, count: count)
            return
        }
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, let index = Int(parts[0]), let count = Int(parts[1]) else {
            throw ValidationError("--shard: expected I/N such as 0/4, or auto; got \"\(text)\"")
        }
        guard count >= 1, index >= 0, index < count else {
            throw ValidationError("--shard \(text): I must be from 0 to N-1, and N at least 1")
        }
        self.init(index: index, count: count)
    }

    var description: String { "\(index)/\(count)" }

    func contains(_ input: BatchInput) -> Bool {
        Int(Self.hash(input.bytes) % UInt64(count)) == index
    }

    static func hash(_ s: String) -> UInt64 { hash(Array(s.utf8)) }

    /// FNV-1a, 64 bits, over the path's bytes (UTF-8, for a name that is), then MurmurHash3's
    /// 64-bit finaliser so that paths differing in one digit spread over every shard, whatever N.
    static func hash(_ bytes: [UInt8]) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in bytes {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01b3
        }
        h ^= h >> 33
        h = h &* 0xff51_afd7_ed55_8ccd
        h ^= h >> 33
        h = h &* 0xc4ce_b9fe_1a85_ec53
        h ^= h >> 33
        return h
    }
}
