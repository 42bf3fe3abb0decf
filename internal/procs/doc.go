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
// Measured on 2 cores, in turns: lnk-netbroker on the sandbox's path, a
// CONNECT's setup added 289-403 µs p50 on two Ps, 216-266 on one,
// 173-298 adapting, and CONNECTs a second were 5,522-6,994 on two,
// 4,879-6,419 on one, 5,683-7,341 adapting; the tool bridge (lnk), a
// call through the route added 255-299 µs p50 adapting against 297-384
// on two Ps, calls a second across 8 sessions unchanged.
//
// GOMAXPROCS is the whole process's: only a program's own main (or what
// it alone starts, such as lnk's tool bridge) makes an Adapter, never a
// library on its own.
package procs
