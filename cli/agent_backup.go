package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/moveentry"
	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/internal/textsafe"
	"lnk.dev/lnk/services/agentlife"
	"lnk.dev/lnk/services/move"
)

// lnk agent backup|restore: a backup of the agent's state in its files
// folder's .lnk-backup, and going back to it (services/move's Backup and
// Restore). Pushing a backup to a bucket belongs after Backup.Run, of the
// paths it wrote; pulling one before Restore.Run, handing it the archives
// opened from where the pull put them.

func init() {
	register("agent", func() *cobra.Command {
		var local, running bool
		c := &cobra.Command{
			Use:   "backup NAME [--local] [--running]",
			Short: "Write the agent's state to .lnk-backup/<harness>.tar and Agent.tar in its files folder, replacing the last backup",
			Long: "Write the agent's backup into its files folder's .lnk-backup (700), each archive a standard tar (600), replaced whole:\n" +
				"  <harness>.tar  the harness's state: Link Harness's home as a move sends it, never its .env of keys\n" +
				"  Agent.tar      its instructions, skills and conversations, never memory's index or its scheduled jobs\n" +
				"Link's settings and secrets are never in a backup. What was written is noted in ~/.lnk/agents/NAME/backup.json,\n" +
				"out of every sandbox's reach: lnk agent restore takes back only these archives, byte for byte.\n" +
				"Then the files folder, the backup with it, is pushed to each of the agent's buckets (lnk bucket push), unless --local.\n" +
				"A running agent's backup is refused: it could catch a conversation or the harness's state mid-change. Stop it first\n" +
				"(lnk agent stop NAME), or give --running to take it anyway, as it is at that moment, with a warning.",
			Example:           "  lnk agent backup main\n  tar tf ~/Link/Agents/main/Home/.lnk-backup/Agent.tar",
			Args:              cobra.ExactArgs(1),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				home, a, err := loadAgent(args[0])
				if err != nil {
					return err
				}
				if err := stoppedForBackup(home, a, running, c.ErrOrStderr()); err != nil {
					return auditRefusal("agent backup", a.Name, err)
				}
				ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
				defer stop()
				b := &move.Backup{Home: home, Name: a.Name, Note: func(n string) { fmt.Fprintln(c.ErrOrStderr(), "lnk: "+n) }}
				got, err := b.Run(ctx)
				if err != nil {
					return auditRefusal("agent backup", a.Name, backupErr(err, a.Name))
				}
				fmt.Fprintf(c.OutOrStdout(), "backed up agent %s:\n", a.Name)
				for _, p := range got.Written {
					fmt.Fprintf(c.OutOrStdout(), "  %s\n", p)
				}
				if !local {
					if err := pushBackup(ctx, c.OutOrStdout(), c.ErrOrStderr(), a.Name); err != nil {
						return auditRefusal("agent backup", a.Name, err)
					}
				}
				fmt.Fprintf(c.OutOrStdout(), "lnk agent restore %s goes back to it\n", a.Name)
				return nil
			},
		}
		c.Flags().BoolVar(&local, "local", false, "keep the backup in the files folder: push it to no bucket")
		c.Flags().BoolVar(&running, "running", false, "back up a running agent anyway: its state may be caught mid-change")
		return c
	})
	register("agent", func() *cobra.Command {
		var local bool
		c := &cobra.Command{
			Use:   "restore NAME [--local]",
			Short: "Go back to the agent's last backup: its harness's state and its instructions, skills and conversations, once it is stopped",
			Long: "Go back to the last lnk agent backup of a stopped agent. Each archive in .lnk-backup is opened without following a link,\n" +
				"refused unless it is a regular file and the one the last backup here wrote (its SHA-256), and unpacked into a fresh\n" +
				"~/Link/Agents/.restoring-<random> with every entry checked as a move's are (no '..', absolute name, hard link, device,\n" +
				"folder over 32 deep; permission bits only). Only then is anything replaced: the harness's state in its home (never\n" +
				"its install or .env), and its instructions, skills and conversations in its own folder. Memory's index, scheduled\n" +
				"jobs, settings and secrets are left as they are. An agent with buckets has its backup pulled from them first (the first\n" +
				"holding it), through a folder of Link's out of every agent's reach, and taken back only if it is the last backup here;\n" +
				"--local reads the files folder's .lnk-backup instead.",
			Example:           "  lnk agent stop main && lnk agent restore main",
			Args:              cobra.ExactArgs(1),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				home, a, err := loadAgent(args[0])
				if err != nil {
					return err
				}
				stopped := func() error { return stoppedForRestore(home, a) }
				// Refused before any archive is opened.
				if err := stopped(); err != nil {
					return auditRefusal("agent restore", a.Name, err)
				}
				ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
				defer stop()
				var ar *move.Archives
				if !local {
					pulled, done, err := pulledBackup(ctx, c.OutOrStdout(), a)
					if err != nil {
						return auditRefusal("agent restore", a.Name, err)
					}
					if done != nil {
						defer done()
					}
					ar = pulled
				}
				if ar == nil {
					if ar, err = move.OpenBackup(home, a.Name); err != nil {
						return auditRefusal("agent restore", a.Name, backupErr(err, a.Name))
					}
					defer ar.Close()
				}
				r := &move.Restore{Home: home, Name: a.Name, Stopped: stopped,
					Note: func(n string) { fmt.Fprintln(c.ErrOrStderr(), "lnk: "+textsafe.Line(n)) }}
				got, err := r.Run(ctx, ar)
				if err != nil {
					return auditRefusal("agent restore", a.Name, backupErr(err, a.Name))
				}
				what := "nothing (the backup held none of its state)"
				if len(got.Placed) > 0 {
					what = strings.Join(got.Placed, ", ")
				}
				fmt.Fprintf(c.OutOrStdout(), "restored agent %s from its backup: %s put back\nlnk agent start %s runs it\n", a.Name, what, a.Name)
				return nil
			},
		}
		c.Flags().BoolVar(&local, "local", false, "read the files folder's .lnk-backup: pull nothing from the agent's buckets")
		return c
	})
}

// stoppedForRestore refuses a restore unless agent a is stopped.
func stoppedForRestore(home string, a *caps.Agent) error {
	st, err := agentlife.ReadStatus(home, a)
	if err != nil {
		return err
	}
	if st.Running {
		return Refused(fmt.Errorf("agent %s runs: a restore replaces its state only while it is stopped", a.Name), "lnk agent stop "+a.Name+" first")
	}
	return nil
}

// stoppedForBackup refuses a backup of agent a while it runs, unless
// anyway (--running), which warns on errw instead: its conversations and
// harness's state may be caught mid-change. A status that can't be read
// refuses.
func stoppedForBackup(home string, a *caps.Agent, anyway bool, errw io.Writer) error {
	st, err := agentlife.ReadStatus(home, a)
	if err != nil {
		return Refused(fmt.Errorf("whether agent %s runs can't be read, so it is not backed up: %w", a.Name, err), "lnk agent status "+a.Name+" says what is wrong")
	}
	switch {
	case !st.Running:
		return nil
	case !anyway:
		return Refused(fmt.Errorf("agent %s runs: a backup now could catch its conversations or its harness's state mid-change", a.Name),
			"lnk agent stop "+a.Name+" first, then lnk agent backup "+a.Name,
			"lnk agent backup "+a.Name+" --running takes it anyway, as it is at that moment")
	}
	fmt.Fprintf(errw, "lnk: warning: agent %s runs: this backup may catch its conversations or its harness's state mid-change (lnk agent stop %s, then lnk agent backup %s, takes one that can't)\n", a.Name, a.Name, a.Name)
	return nil
}

// backupErr gives a backup's or restore's error its exit code and hint.
func backupErr(err error, name string) error {
	var ex *ExitError
	// First: a placing journal that is a link is the journal's refusal,
	// not the backup's.
	if perr := placingErr(err, name); perr != nil {
		return perr
	}
	switch {
	case errors.As(err, &ex):
		return err
	case errors.Is(err, context.Canceled):
		return Fail(ExitFailure, fmt.Errorf("stopped before its end: nothing of it was put in place"))
	case errors.Is(err, move.ErrNoBackup):
		return Fail(ExitMissing, err, "lnk agent backup "+name+" makes one")
	case errors.Is(err, move.ErrNotArchive), errors.Is(err, move.ErrNotLastBackup), errors.Is(err, moveentry.ErrArchive),
		errors.Is(err, moveentry.ErrArchiveLink), errors.Is(err, moveentry.ErrPath), errors.Is(err, moveentry.ErrDepth),
		errors.Is(err, moveentry.ErrEntry), errors.Is(err, moveentry.ErrOrder), errors.Is(err, moveentry.ErrSize):
		return Refused(fmt.Errorf("%s: nothing of it was put back", textsafe.Line(err.Error())),
			"lnk agent backup "+name+" writes a new backup; the agent's files folder, where it sits, is the agent's to write")
	case errors.Is(err, move.ErrBusy):
		return Refused(err, "wait for the other move, backup or restore to end; lnk agent status "+name+" shows the agent")
	case errors.Is(err, ownerfile.ErrLink), errors.Is(err, move.ErrAreaLink), errors.Is(err, ownerfile.ErrSwapped):
		return Refused(err, "lnk agent backup "+name+" again: Link never writes or reads through a link")
	}
	return agentErr(err, name)
}
