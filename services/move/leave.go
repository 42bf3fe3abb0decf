package move

import (
	"fmt"
	"sort"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/services/agentlife"
	"lnk.dev/lnk/services/bucket"
)

// Leave ends agent name on the machine it left, once it answered where
// it went (to), running, with its ID; the caller stopped it. First the
// note of where it went (~/.lnk/moved/<id>.toml), so from then on lnk
// agent start refuses its ID here whatever else fails; then its
// background commands ended and their records and outputs removed
// (endBackground: the same code as lnk agent delete's, the run tool's
// Agent.Forget; one it cannot end stops the leave there); then its keys
// (each secret granted to it alone is deleted, a shared one no longer
// granted to it; its rclone.conf, its buckets' keys and password,
// removed), its unit file, and its folder: its own folder (Agent/)
// and Home kept in ~/Link/History/Agents, its Config/ and its harnesses'
// homes removed (caps.DeleteAgent). It returns the History entry.
func Leave(home, name, to string, endBackground func() error) (string, error) {
	a, err := caps.LoadAgent(home, name)
	if err != nil {
		return "", err
	}
	if err := caps.WriteMovedNote(home, a, to); err != nil {
		return "", fmt.Errorf("writing the note that agent %s moved: %w", name, err)
	}
	if err := endBackground(); err != nil {
		return "", fmt.Errorf("agent %s moved, but here: %w", name, err)
	}
	if err := revokeSecrets(home, a.ID); err != nil {
		return "", err
	}
	if err := deleteBuckets(home, name); err != nil {
		return "", err
	}
	if err := agentlife.RemoveUnit(home, "", a.ID); err != nil {
		return "", err
	}
	return caps.DeleteAgent(home, name)
}

// deleteBuckets removes agent name's rclone.conf here: its buckets'
// keys and password went with it, and are not kept where it left, nor
// in History should removing its Config/ there fail.
func deleteBuckets(home, name string) error {
	b, err := bucket.LoadAgent(home, name)
	if err != nil {
		return err
	}
	return b.DeleteConf()
}

// revokeSecrets deletes the secrets granted to agent id alone and takes
// its grant off the others.
func revokeSecrets(home, id string) error {
	return secrets.Update(home, func(f *secrets.File) error {
		for name, e := range f.Secrets {
			if !e.GrantedTo(id) {
				continue
			}
			var keep []string
			for _, a := range e.Agents {
				if a != id {
					keep = append(keep, a)
				}
			}
			if len(keep) == 0 {
				e.Value.Destroy()
				delete(f.Secrets, name)
				continue
			}
			sort.Strings(keep)
			e.Agents = keep
		}
		return nil
	})
}
