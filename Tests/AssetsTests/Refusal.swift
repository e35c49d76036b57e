import GraphKit

/// What `body` throws, as the message a user reads ("no error" when it throws nothing): for the
/// state machines' tests, which check what each call says in each state.
func refusal(_ body: () throws -> Void) -> String {
    do {
        try body()
        return "no error"
    } catch {
        return (error as? GraphError)?.message ?? "\(error)"
    }
}
