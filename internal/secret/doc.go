// Package secret is Link's in-memory secret: a value that never prints,
// is zeroed when dropped, and is kept out of core dumps where the kernel
// allows.
//
// A [Value] lives in pages of its own, mapped for it alone: locked in RAM
// with mlock (so it is never written to swap) where RLIMIT_MEMLOCK allows,
// and marked MADV_DONTDUMP and MADV_WIPEONFORK, so a core dump or a forked
// child never holds it. Its String, GoString, Format (every fmt verb),
// MarshalJSON, MarshalText and LogValue give "[secret]", never the value,
// so a secret passed by mistake to a log line, an error or a panic shows
// nothing. [Value.Destroy] zeroes and unmaps it at once; a Value dropped
// without Destroy is zeroed by a runtime cleanup when it is collected.
//
// # Security
//
// It holds one secret's bytes and nothing else. It trusts its caller to
// keep the slice [Value.Bytes] returns from escaping (it aliases the
// locked pages and is invalid after Destroy). It refuses nothing; it only
// keeps the value from being printed, dumped, swapped or left behind.
// Comparison with [Value.Equal] is constant-time.
package secret
