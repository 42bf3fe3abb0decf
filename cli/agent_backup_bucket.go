package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/textsafe"
	"lnk.dev/lnk/services/bucket"
	"lnk.dev/lnk/services/move"
)

// A backup and its agent's buckets (security.txt "Backups and restores"):
// lnk agent backup pushes what it wrote, with the files folder, to every
// bucket the agent has; lnk agent restore of an agent with buckets pulls
// the backup from them, and takes it back only if it is, byte for byte,
// the one the last backup here wrote (the record's check in move.Restore).
// --local keeps either to the files folder's .lnk-backup.

// bucketsOf is agent name's buckets, nil when it has none.
func bucketsOf(name string) (*bucket.Agent, error) {
	a, err := loadBucketAgent(name)
	if err != nil {
		return nil, err
	}
	list, err := a.List()
	if err != nil {
		return nil, bucketErr(err, name)
	}
	if len(list) == 0 {
		return nil, nil
	}
	return a, nil
}

// pushBackup pushes agent name's files folder, its new backup with it, to
// each of its buckets, saying each on out; with none it says the backup
// stays here.
func pushBackup(ctx context.Context, out, errOut io.Writer, name string) error {
	a, err := bucketsOf(name)
	if err != nil || a == nil {
		if err == nil {
			fmt.Fprintf(out, "agent %s has no bucket: the backup stays in its files folder (lnk agent bucket add %s NAME … adds one)\n", name, name)
		}
		return err
	}
	_, files, err := bucketAgentFiles(name)
	if err != nil {
		return err
	}
	p, err := a.Push(ctx, files)
	if p != nil {
		for _, b := range p.Buckets {
			fmt.Fprintf(out, "pushed it, with the files folder, to bucket %s\n", b)
		}
		for _, l := range p.Left {
			fmt.Fprintf(errOut, "lnk: left out %s: a link, or not a file or folder (a push never follows one)\n", textsafe.Line(strconv.Quote(l)))
		}
	}
	if err != nil {
		return Fail(ExitFailure, fmt.Errorf("the backup is written in the files folder, but %w", err), "lnk bucket push "+name+" pushes it again")
	}
	return nil
}

// pulledBackup is agent a's backup pulled from its buckets, opened, with
// the func that closes it and removes the pull's folder; nil archives
// when the agent has no bucket or runs a harness other than Link's (whose
// state a bucket pull doesn't name), so the restore reads the files
// folder's .lnk-backup.
func pulledBackup(ctx context.Context, out io.Writer, a *caps.Agent) (*move.Archives, func(), error) {
	if !a.RunsLinkHarness() {
		return nil, nil, nil
	}
	b, err := bucketsOf(a.Name)
	if err != nil || b == nil {
		return nil, nil, err
	}
	p, err := b.PullBackup(ctx, caps.LinkHarness, "")
	if err != nil {
		return nil, nil, bucketErr(err, a.Name)
	}
	fmt.Fprintf(out, "pulled agent %s's backup from bucket %s\n", a.Name, p.Bucket)
	return &move.Archives{Harness: caps.LinkHarness, Home: p.Harness, Agent: p.Agent}, func() { p.Close() }, nil
}
