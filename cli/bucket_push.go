package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/internal/textsafe"
	"lnk.dev/lnk/services/bucket"
)

// lnk bucket push AGENT [NAME…] and lnk bucket pull AGENT: the files
// folder (with its backups, .lnk-backup) to the agent's buckets, and a
// backup back from them.

func init() {
	register("bucket", func() *cobra.Command {
		return &cobra.Command{
			Use:   "push AGENT [NAME…]",
			Short: "Mirror AGENT's files folder, .lnk-backup with it, to its buckets (each NAME, or all); links are left out and named",
			Long: "Mirror AGENT's files folder, with its backups (.lnk-backup/<harness>.tar and Agent.tar), to each of its buckets (lnk agent bucket list),\n" +
				"encrypted where the bucket is. What the mirror replaces or deletes there is kept under replaced/<time> in the bucket.\n" +
				"A link is never followed nor carried: each is left out and named, as is a fifo, a socket or a device.",
			Args: cobra.MinimumNArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				a, files, err := bucketAgentFiles(args[0])
				if err != nil {
					return err
				}
				p, err := a.Push(c.Context(), files, args[1:]...)
				if p != nil {
					for _, b := range p.Buckets {
						fmt.Fprintf(c.OutOrStdout(), "pushed agent %s's files folder to bucket %s\n", a.Name, b)
					}
					for _, l := range p.Left {
						fmt.Fprintf(c.ErrOrStderr(), "lnk: left out %s: a link, or not a file or folder (a push never follows one)\n", textsafe.Line(strconv.Quote(l)))
					}
				}
				if err != nil {
					return auditRefusal("bucket push", args[0], bucketErr(err, args[0]))
				}
				return nil
			},
		}
	})
	register("bucket", func() *cobra.Command {
		var from, harness string
		c := &cobra.Command{
			Use:   "pull AGENT [--bucket NAME] [--harness H]",
			Short: "Pull AGENT's latest backup (.lnk-backup/<harness>.tar and Agent.tar) from its buckets into its files folder's .lnk-backup",
			Long: "Pull .lnk-backup/<harness>.tar and Agent.tar from the agent's buckets (the first holding them, or --bucket NAME),\n" +
				"decrypted where the bucket is encrypted, through a folder of Link's (700) out of every agent's reach, into the files folder's\n" +
				".lnk-backup, where a restore reads them. Each archive replaces the one there atomically; a link there is refused.",
			Args: cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				a, files, err := bucketAgentFiles(args[0])
				if err != nil {
					return err
				}
				if harness == "" {
					ca, err := caps.LoadAgent(os.Getenv("HOME"), args[0])
					if err != nil {
						return agentErr(err, args[0])
					}
					if harness = ca.Harness; harness == "" {
						harness = caps.LinkHarness
					}
				}
				p, err := a.PullBackup(c.Context(), harness, from)
				if err != nil {
					return auditRefusal("bucket pull", args[0], bucketErr(err, args[0]))
				}
				defer p.Close()
				placed, err := placeBackup(files, harness+".tar", p.Harness)
				if err == nil && p.Agent != nil {
					_, err = placeBackup(files, bucket.AgentArchive, p.Agent)
				}
				if err != nil {
					return Fail(ExitFailure, fmt.Errorf("placing the pulled backup in %s: %w", files, err), "lnk agent show "+args[0]+" names its files folder")
				}
				fmt.Fprintf(c.OutOrStdout(), "pulled agent %s's backup from bucket %s into %s\n", a.Name, p.Bucket, placed)
				return nil
			},
		}
		c.Flags().StringVar(&from, "bucket", "", "the bucket to pull from (the first holding the backup when none)")
		c.Flags().StringVar(&harness, "harness", "", "whose backup: the harness's name (the agent's own when none)")
		return c
	})
}

// bucketAgentFiles is agent name's buckets and its files folder.
func bucketAgentFiles(name string) (*bucket.Agent, string, error) {
	a, err := loadBucketAgent(name)
	if err != nil {
		return nil, "", err
	}
	comp, err := caps.CompileAgent(os.Getenv("HOME"), name)
	if err != nil {
		return nil, "", agentErr(err, name)
	}
	if comp.FilesDir == "" {
		return nil, "", fmt.Errorf("agent %s has no files folder", name)
	}
	return a, comp.FilesDir, nil
}

// placeBackup copies src into files/.lnk-backup/name (600): the folders
// opened through no link (one in .lnk-backup's place is refused), the
// copy written to a fresh file there, opened without following a link,
// then renamed over name, so a reader sees the old archive or the new.
func placeBackup(files, name string, src *os.File) (string, error) {
	fd, err := ownerfile.OpenPath(files, unix.O_PATH|unix.O_DIRECTORY)
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	dfd, err := ownerfile.MakeDir(fd, ".lnk-backup", unix.O_PATH, ownerfile.Rule{})
	if err != nil {
		return "", fmt.Errorf(".lnk-backup (a link is never followed): %w", err)
	}
	defer unix.Close(dfd)
	tmp, err := ownerfile.CreateTemp(dfd, name, nil, ownerfile.Write{Mode: 0o600, NoSync: true})
	if err != nil {
		return "", err
	}
	ok := false
	defer func() {
		if !ok {
			unix.Unlinkat(dfd, tmp, 0)
		}
	}()
	wfd, err := ownerfile.Open(dfd, tmp, unix.O_WRONLY, 0)
	if err != nil {
		return "", err
	}
	w := os.NewFile(uintptr(wfd), tmp)
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		w.Close()
		return "", err
	}
	_, err = io.Copy(w, src)
	if err == nil {
		err = w.Sync()
	}
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG {
		return "", errors.New(".lnk-backup/" + name + " is a link or not a regular file: Link will not replace it")
	}
	if err := ownerfile.Rename(dfd, tmp, dfd, name, 0); err != nil {
		return "", err
	}
	ok = true
	return files + "/.lnk-backup/" + name, ownerfile.SyncDir(dfd)
}
