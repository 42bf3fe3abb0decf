package kernel

import "lnk.dev/lnk/internal/cloexec"

// markInheritedCloexec marks every fd above 2 close-on-exec: whatever
// the kernel's own parent left open must never pass on to a broker.
func markInheritedCloexec() error { return cloexec.MarkInherited() }
