package cli

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/conversation"
	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/internal/textsafe"
	"lnk.dev/lnk/services/agentlife"
	"lnk.dev/lnk/services/harness/store"
	"lnk.dev/lnk/services/scheduler"
)

// lnk agent chats list|delete NAME: the conversations Link Harness keeps
// in the agent's own folder (Agent/chats/<thread>, services/harness/store),
// beside lnk agent send and chat, which talk in them. A delete removes
// one of the owner's own (never main, which the next message makes
// again, nor a stranger's, a teammate's or a subagent's), through the
// store's Delete: never following a link, refused while a turn runs in
// it or, while the agent runs, messages wait in its inbox. The scheduler's
// jobs into it are removed with it, through the scheduler's store under
// its lock (services/scheduler, lock.go).

func init() {
	register("agent", func() *cobra.Command {
		return &cobra.Command{Use: "chats", Short: "The agent's conversations with its owner and others: list them, delete one of the owner's",
			Args: cobra.NoArgs, RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	})
	register("agent chats", func() *cobra.Command {
		var asJSON bool
		c := &cobra.Command{
			Use:               "list NAME",
			Short:             "List the conversations Link Harness keeps for the agent (its Agent/chats)",
			Args:              cobra.ExactArgs(1),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				_, a, err := loadAgent(args[0])
				if err != nil {
					return err
				}
				chats, err := openChats(a)
				if err != nil {
					return auditRefusal("agent chats list", a.Name, err)
				}
				defer chats.Close()
				threads, err := chats.List()
				if err != nil {
					return err
				}
				if asJSON {
					if threads == nil {
						threads = []string{}
					}
					return writeJSON(c.OutOrStdout(), threads)
				}
				for _, t := range threads {
					fmt.Fprintln(c.OutOrStdout(), t)
				}
				return nil
			},
		}
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		return c
	})
	register("agent chats", func() *cobra.Command {
		var thread string
		var yes bool
		c := &cobra.Command{
			Use:   "delete NAME --thread T [--yes]",
			Short: "Delete the owner's conversation T with the agent, for good (asked first on a terminal unless --yes)",
			Long: `Removes the conversation T Link Harness keeps for the agent
(~/Link/Agents/NAME/Agent/chats/T), for good: it is not kept in History.
Only the owner's own conversations are deleted, never main (the next
message or job into main makes it again), nor a stranger's, a teammate's
or a subagent's. Refused while a turn runs in it and, while the agent
runs, while messages from others wait in its inbox (lnk agent stop NAME
first deletes them with it). A link in its place is removed as itself,
never followed. The agent's scheduled jobs into it are removed with it,
the agent running or not. On a terminal it asks first; else --yes is
needed.`,
			Example:           "  lnk agent chats list main\n  lnk agent chats delete main --thread garden",
			Args:              cobra.ExactArgs(1),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				return deleteChat(c, args[0], thread, yes)
			},
		}
		c.Flags().StringVar(&thread, "thread", "", "the conversation to delete (lnk agent chats list NAME shows them)")
		c.Flags().BoolVar(&yes, "yes", false, "delete without asking")
		return c
	})
}

// deleteChat is lnk agent chats delete.
func deleteChat(c *cobra.Command, name, thread string, yes bool) error {
	self := "lnk agent chats delete " + name + " --thread " + thread
	if !c.Flags().Changed("thread") {
		return Usage("--thread names the conversation to delete, and none is named", "lnk agent chats list "+name+" shows its conversations")
	}
	if err := store.CheckThread(thread); err != nil {
		return Usage(fmt.Sprintf("--thread %q: %v", thread, err), "lnk agent chats list "+name+" shows its conversations")
	}
	home, a, err := loadAgent(name)
	if err != nil {
		return err
	}
	if thread == conversation.Main {
		return auditRefusal("agent chats delete", a.Name, Refused(errors.New("conversation main is the owner's own, always there: the next message or scheduled job into it would make it again, so it is never deleted"),
			"lnk agent send "+a.Name+" --new --thread T MESSAGE starts another conversation"))
	}
	if why := conversation.NotOwners(thread); why != "" {
		return auditRefusal("agent chats delete", a.Name, Refused(fmt.Errorf("conversation %s: %s; only the owner's own conversations are deleted", thread, why),
			"lnk agent chats list "+a.Name+" shows its conversations"))
	}
	chats, err := openChats(a)
	if err != nil {
		return auditRefusal("agent chats delete", a.Name, err)
	}
	defer chats.Close()
	// A link or a file in its place is no error here: the delete
	// removes it as itself.
	if kept, err := chats.Has(thread); err == nil && !kept {
		return Fail(ExitMissing, fmt.Errorf("agent %s keeps no conversation %s", a.Name, thread), "lnk agent chats list "+a.Name+" shows its conversations")
	}
	if !yes {
		if err := confirm(c, fmt.Sprintf("delete agent %s's conversation %s for good (it is not kept in History)? [y/N] ", a.Name, thread), self+" --yes"); err != nil {
			return err
		}
	}
	// The scheduler's jobs into it go with it, under the schedule's lock
	// taken first and held to their removal: a firing under way ends
	// before, and none fires into a conversation started again under
	// its name after. The jobs are the scheduler's files, which its
	// runner reads again at each firing, running or not: its own store
	// and lock are all it is told through.
	jobs, err := scheduler.OpenStore(home, a.Name)
	if err != nil {
		return auditRefusal("agent chats delete", a.Name, Refused(fmt.Errorf("its scheduled jobs can't be read, so nothing is deleted (one into it would fire into a conversation started again under its name): %w", err),
			"chmod 700 "+caps.Layout{Home: home}.OwnDir(a.Name)+"/schedule, then "+self))
	}
	defer jobs.Close()
	unlock, err := jobs.Lock()
	if err != nil {
		return auditRefusal("agent chats delete", a.Name, Refused(fmt.Errorf("its scheduled jobs can't be locked, so nothing is deleted: %w", err), "lnk agent stop "+a.Name+", then "+self))
	}
	defer unlock()
	// What can't be read of its status counts as running: then its
	// inbox must be empty.
	st, err := agentlife.ReadStatus(home, a)
	stopped := err == nil && !st.Running
	link, err := chats.Delete(thread, stopped)
	switch {
	case errors.Is(err, store.ErrNotKept):
		return Fail(ExitMissing, fmt.Errorf("agent %s keeps no conversation %s", a.Name, thread), "lnk agent chats list "+a.Name+" shows its conversations")
	case errors.Is(err, store.ErrTurnRunning):
		return auditRefusal("agent chats delete", a.Name, Refused(err, "wait for the turn to end, then "+self, "lnk agent stop "+a.Name+" ends it"))
	case errors.Is(err, store.ErrQueued):
		return auditRefusal("agent chats delete", a.Name, Refused(err, "wait for them to run, then "+self, "lnk agent stop "+a.Name+" first deletes them with it"))
	case errors.Is(err, ownerfile.ErrLink), errors.Is(err, ownerfile.ErrNotOwners):
		return auditRefusal("agent chats delete", a.Name, Refused(err, "lnk agent stop "+a.Name+", then "+self+" removes it as it is"))
	case err != nil && !stopped:
		return auditRefusal("agent chats delete", a.Name, Refused(err, "lnk agent stop "+a.Name+", then "+self))
	case err != nil:
		return err
	}
	out := c.OutOrStdout()
	if link {
		fmt.Fprintf(out, "chats/%s of agent %s was a link or a file, not a conversation: removed as itself (what it pointed at is untouched)\n", thread, a.Name)
	} else {
		fmt.Fprintf(out, "deleted agent %s's conversation %s\n", a.Name, thread)
	}
	gone, err := jobs.RemoveInto(thread)
	if len(gone) > 0 {
		fmt.Fprintf(out, "removed %d scheduled job(s) into it: %s\n", len(gone), strings.Join(gone, " "))
	}
	if err != nil {
		return Fail(ExitFailure, fmt.Errorf("its scheduled jobs were not all removed: %w", err),
			"each left is refused at its next firing unless a conversation "+thread+" is started again first; fix the schedule folder, then lnk agent chats delete "+a.Name+" --thread "+thread+" --yes removes them")
	}
	return nil
}

// sweepDeleting removes what a conversation's delete cut short left in
// agent a's chats/ (store's SweepDeleting: never following a link),
// saying on stderr what it could not: a leftover stays hidden from
// every conversation's list, backup and move, and the next start or
// delete tries again.
func sweepDeleting(c *cobra.Command, a *caps.Agent) {
	chats, err := openChats(a)
	if errors.Is(err, unix.ENOENT) {
		return // no folder of its own yet: nothing left there
	}
	if err == nil {
		defer chats.Close()
		err = chats.SweepDeleting()
	}
	if err != nil {
		fmt.Fprintln(c.ErrOrStderr(), "lnk: removing what a conversation's delete cut short left in its chats: "+textsafe.Line(err.Error()))
	}
}

// openChats opens agent a's Agent/ folder, through no link, the owner's
// and 0700, and its chats/ in it.
func openChats(a *caps.Agent) (*store.Chats, error) {
	l := caps.Layout{Home: os.Getenv("HOME")}
	fd, err := ownerfile.OpenPath(l.OwnDir(a.Name), unix.O_RDONLY|unix.O_DIRECTORY)
	if err != nil {
		return nil, Refused(fmt.Errorf("agent %s's own folder: %w", a.Name, err), "lnk agent show "+a.Name+" shows the agent")
	}
	dir := os.NewFile(uintptr(fd), l.OwnDir(a.Name))
	defer dir.Close()
	if err := ownerfile.Check(fd, ownerfile.PrivateDir); err != nil {
		return nil, Refused(fmt.Errorf("agent %s's own folder: %w", a.Name, err), "chmod 700 "+l.OwnDir(a.Name))
	}
	chats, err := store.OpenChats(dir)
	if err != nil {
		return nil, Refused(err, "lnk agent show "+a.Name+" shows the agent")
	}
	return chats, nil
}

// confirm asks question on stderr and reads the answer from stdin, which
// must be a terminal: anything but y or yes keeps what was to go. With
// no terminal to ask on, it refuses; yesCmd says how to go on without
// asking.
func confirm(c *cobra.Command, question, yesCmd string) error {
	f, ok := c.InOrStdin().(*os.File)
	if !ok || !isTerminal(f) {
		return Usage("this asks before it deletes, and stdin is not a terminal to ask on", yesCmd+" deletes without asking")
	}
	fmt.Fprint(c.ErrOrStderr(), question)
	line, err := bufio.NewReader(io.LimitReader(f, 256)).ReadString('\n')
	if err != nil && line == "" {
		fmt.Fprintln(c.ErrOrStderr())
	}
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return Fail(ExitFailure, errors.New("not confirmed: nothing was deleted"), yesCmd+" deletes without asking")
}
