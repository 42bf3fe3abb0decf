package web

import "runtime/debug"

// The collector's settings lnk-web runs with ([SetCollector]).
const (
	// GCPercent lets the heap grow to five times what is live before a
	// collection, where Go's default is twice. A call allocates several
	// times its page (the body, the tree, the markdown, the JSON of the
	// answer); at the default the heap of a process holding one page
	// stays so small that every call collects and hands its memory back
	// to the kernel, and the next call faults it in again.
	GCPercent = 400
	// MemoryLimit bounds what GCPercent lets the heap grow to: past it
	// the collector runs as often as it must, whatever GCPercent says.
	// It is set above the live heap the spec's limits allow at once
	// (MaxCalls pages of MaxPage read, MaxConverts of them parsed and
	// made markdown: a few hundred MB at the most), so that garbage,
	// not pages held, is what reaches it.
	MemoryLimit = 512 << 20
)

// SetCollector sets this process's collector to GCPercent and
// MemoryLimit (cmd/lnk-web at its start; the benchmarks, to measure the
// conversion as lnk-web runs it) and returns what puts back the
// settings it found.
func SetCollector() (restore func()) {
	pct := debug.SetGCPercent(GCPercent)
	limit := debug.SetMemoryLimit(MemoryLimit)
	return func() {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	}
}
