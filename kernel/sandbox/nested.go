package sandbox

import (
	"lnk.dev/lnk/caps"
)

// nested binds what caps found below the top of a written folder: each
// folder of c.Pinned over itself, written as before but a mount of its
// own, which the sandbox can't move aside and replace; then each of
// c.NestedReadOnly (.git, .envrc, .vscode, .idea) read-only over itself.
// Each is opened without following a link and bound only if it is still
// what caps checked (its device and inode): a change since refuses.
func (s *Sandbox) nested(c *caps.Compiled) error {
	for _, f := range append(append([]caps.Folder(nil), c.Pinned...), c.NestedReadOnly...) {
		if err := s.bindChecked(f); err != nil {
			return err
		}
	}
	return nil
}
