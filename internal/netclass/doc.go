// Package netclass is Link's one classifier of addresses: what an
// address is (loopback, private, link-local, carrier-grade NAT, cloud
// metadata, reserved, public, … and each of them written as IPv6:
// mapped, compatible, SIIT, NAT64, 6to4, Teredo), which of them are this
// machine's own ([OwnWatch], learned from the kernel and kept current),
// and how a host as a client writes it is read ([ParseHost]: every
// spelling of an IPv4 address a C library accepts is read as the
// address it means).
//
// [Resolve] is Link's one resolve-and-judge routine: a name looked up
// once, every answer judged, the name refused whole when one answer is
// refused, and only the answers checked returned to dial. Every user
// calls it with its own rule: the sandbox proxy (helpers/netbroker)
// dials only what its grants allow of each class, Link Web
// (services/web) fetches only Public (any class for a --private-host),
// and a bucket's push and pull (services/bucket) reach only a Public
// endpoint. None keeps a copy.
//
// # Security
//
// Fail closed: [Judge] with no own set, or one that cannot answer now,
// returns an error, never "not own"; an IPv6 address carrying an IPv4
// one is judged as the IPv4 it carries, and as its worst when it carries
// two (Teredo). [ParseHost] refuses userinfo, zones, control bytes,
// Unicode names and overflowing IPv4 spellings.
package netclass
