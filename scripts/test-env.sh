# Sourced by every command that runs the suite (make test, make image, stress-test.sh,
# test-sanitize.sh): how the suite runs, in one place.
#
# Swift Testing starts every test at once unless told otherwise, and runs them on Swift's
# concurrency threads: on 2 cores, 2 to 4 of them. The synchronous tests (most: a whole run
# each, waited for) hold those threads while they run, and an async test needs one again at
# each await, so with some 800 tests started together an async test that awaits often (a
# passthrough join awaits each sample twice) waits behind all the others at every step: under
# `stress --cpu 2` one such test went past its 10-minute limit in a suite of 13.6 minutes.
# Eight at a time keep the threads' queue short; BENCHMARKS.md ("The suite's wall time") has the
# figures with and without.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH=${SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH:-8}
