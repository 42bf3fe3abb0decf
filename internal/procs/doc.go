// Package procs runs a process that relays (a sandbox's proxy, the tool
// bridge inside lnk) on one Go P while it serves a request or two at a
// time, and on every core under more.
//
// Serving one request at a time, one P is the faster: each wake (a
// connection accepted, a line to relay) is taken by the thread the
// poller woke, not handed to a second one, and no idle P's thread spins
// looking for work on a core the next process in the chain (the client,
// the tool's server) is waiting for. Serving many at once, one P is the
// bottleneck. So an [Adapter] narrows its process to one P, takes every
// core once WideAt requests are open together, and goes back to one
// after NarrowAfter with at most NarrowAt open. runtime.GOMAXPROCS stops
// the world briefly: it is called at most once each way per NarrowAfter.
//
// The netbroker's CONNECT benchmarks and the tool bridge's route
// benchmarks, run on 2 cores with one P, two Ps and adapting, chose it:
// adapting had the lowest setup and call latency with no loss of
// throughput under many sessions.
//
// GOMAXPROCS is the whole process's: only a program's own main (or what
// it alone starts, such as lnk's tool bridge) makes an Adapter, never a
// library on its own.
package procs
