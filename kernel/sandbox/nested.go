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
		file, err := openNoLinks(f.Path)
		if err != nil {
			return err
		}
		if err := sameFolder(file, f); err != nil {
			file.Close()
			return err
		}
		if f.Access.Write {
			s.args = append(s.args, "--bind-fd")
		} else {
			s.args = append(s.args, "--ro-bind-fd")
		}
		s.fdArg(file)
		s.args = append(s.args, f.Path)
	}
	return nil
}
