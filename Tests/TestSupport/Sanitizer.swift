import Glibc

/// Whether this process runs under a sanitizer (`make test-sanitize` builds the tests and
/// graphctl with one). Its memory is then mostly the sanitizer's (ThreadSanitizer's shadow and
/// traces, AddressSanitizer's shadow and a quarantine of up to 256 MB of freed memory), so a
/// test's figures of memory say nothing about GraphKit there.
public enum Sanitizer {
    public static let isRunning = dlsym(nil, "__tsan_init") != nil || dlsym(nil, "__asan_init") != nil
}
