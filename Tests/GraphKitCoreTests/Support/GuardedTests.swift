import Dispatch
import Foundation
import Testing
@testable import GraphKitCore

/// Guarded and HandOff are Swift's Mutex and CheckedContinuation with the thread sanitizer's view
/// added in its build: these check that they still are what they wrap, in every build.
@Suite struct GuardedTests {
    /// Eight threads adding under the lock lose no update: the lock excludes.
    @Test func concurrentUpdatesUnderTheLockAreNeverLost() {
        let total = Guarded(0)
        DispatchQueue.concurrentPerform(iterations: 8) { _ in
            for _ in 0..<10_000 { total.withLock { $0 += 1 } }
        }
        #expect(total.withLock { $0 } == 80_000)
    }

    struct Refused: Error, Equatable { let value: Int }

    /// A typed error thrown in the body leaves `withLock` as that type, and what the body changed
    /// before throwing stays changed (as with Mutex).
    @Test func aTypedErrorPassesThroughAndKeepsTheChange() {
        let state = Guarded([Int]())
        do {
            try state.withLock { (values: inout [Int]) throws(Refused) in
                values.append(1)
                throw Refused(value: 7)
            }
            Issue.record("no error")
        } catch {
            #expect(error == Refused(value: 7))  // typed: no cast needed
        }
        #expect(state.withLock { $0 } == [1])
    }

    /// A value made on another thread arrives through a hand-off, whether the resume comes before
    /// the task suspends or after (both happen across 200 rounds).
    @Test func aHandOffDeliversWhatAnotherThreadMade() async {
        let queue = DispatchQueue(label: "maker")
        var sum = 0
        for i in 0..<200 {
            let made: [Int] = await withHandOff { (c: HandOff<[Int], Never>) in
                queue.async { c.resume(returning: Array(repeating: i, count: 3)) }
            }
            sum += made.reduce(0, +)
        }
        #expect(sum == 3 * (0..<200).reduce(0, +))
    }

    struct Failed: Error {}

    @Test func aThrowingHandOffThrowsWhatWasResumedWith() async {
        await #expect(throws: Failed.self) {
            let _: Int = try await withThrowingHandOff { (c: HandOff<Int, any Error>) in
                DispatchQueue.global().async { c.resume(throwing: Failed()) }
            }
        }
        let value: Int? = try? await withThrowingHandOff { (c: HandOff<Int, any Error>) in c.resume(returning: 5) }
        #expect(value == 5)
    }
}
