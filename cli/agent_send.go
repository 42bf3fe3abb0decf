package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/internal/conversation"
	"lnk.dev/lnk/services/harness/endpoint"
	"lnk.dev/lnk/services/harness/store"
)

// lnk agent send NAME [--new] [--thread T] [--json] MESSAGE and lnk
// agent chat NAME [--new] [--thread T]: the owner's conversation with an
// agent Link Harness runs, without a connection. A conversation the
// harness doesn't keep is refused there (main is made at need); --new
// starts thread T, refused where it is kept already. Both read ~/.lnk/agents/NAME/bridge.json
// (0600, written by lnk agent start, never through a link), check on one
// connection that what answers the agent's port proves it holds the
// agent's key (services/harness/endpoint's Client) and only then send
// the key and the message.

// defaultThread is the owner's own conversation, always there.
const defaultThread = conversation.Main

func init() {
	register("agent", func() *cobra.Command {
		var thread string
		var asJSON, isNew bool
		c := &cobra.Command{
			Use:   "send NAME [--new] [--thread T] [--json] MESSAGE",
			Short: "Send the agent one message as its owner and print its answer",
			Long: `Sends MESSAGE (at most 16 KiB) to the agent's Link Harness as its owner,
in thread T ("main" unless --thread names another), and prints the answer
as it comes; with --json, one JSON object once it has all come. The
harness first proves it holds the agent's key on the same connection:
what can't is sent neither the key nor the message.

A conversation the harness doesn't keep is refused, never started by a
mistyped name: --new starts thread T with this message (refused where T
is kept already). "main" is always there.`,
			Args:              cobra.ExactArgs(2),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				if err := checkNew(c, isNew, args[0]); err != nil {
					return err
				}
				cl, err := agentClient(os.Getenv("HOME"), args[0], thread, args[1])
				if err != nil {
					return err
				}
				out := c.OutOrStdout()
				var text strings.Builder
				// --json's answer is cleaned too: JSON escapes C0
				// controls, never C1's nor a bidi override.
				onText, flush := answerPrinter(out)
				if asJSON {
					onText, flush = answerPrinter(&text)
				}
				seq, err := cl.SendMessage(ctx, endpoint.Message{Thread: thread, Text: args[1], New: isNew}, nil, onText)
				flush()
				if err != nil {
					return sendErr(err, args[0], thread)
				}
				if asJSON {
					return json.NewEncoder(out).Encode(struct {
						Agent  string `json:"agent"`
						Thread string `json:"thread"`
						Seq    int64  `json:"seq"`
						Answer string `json:"answer"`
					}{args[0], thread, seq, text.String()})
				}
				fmt.Fprintln(out)
				return nil
			},
		}
		c.Flags().StringVar(&thread, "thread", defaultThread, "the owner's conversation (letters, digits, - _ .)")
		c.Flags().BoolVar(&asJSON, "json", false, "print the answer as one JSON object")
		c.Flags().BoolVar(&isNew, "new", false, "start the conversation --thread names (refused where it is kept already)")
		return c
	})
	register("agent", func() *cobra.Command {
		var thread string
		var isNew bool
		c := &cobra.Command{
			Use:   "chat NAME [--new] [--thread T]",
			Short: "Talk with the agent in this terminal, as its owner (Ctrl-C ends a turn, Ctrl-D the chat)",
			Long: `A conversation with the agent's Link Harness in this terminal: each line
you type is a message (at most 16 KiB), its answer streamed as it comes.
Ctrl-C ends the turn running, not the agent or the chat; Ctrl-D (end of
input) ends the chat. Every message goes through the harness's proof
first, as lnk agent send's. As there, a conversation the harness doesn't
keep is refused; with --new the first message starts thread T.`,
			Args:              cobra.ExactArgs(1),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				if err := checkNew(c, isNew, args[0]); err != nil {
					return err
				}
				cl, err := agentClient(os.Getenv("HOME"), args[0], thread, "")
				if err != nil {
					return err
				}
				return chat(c.Context(), cl, args[0], thread, isNew, c.InOrStdin(), c.OutOrStdout(), c.ErrOrStderr())
			},
		}
		c.Flags().StringVar(&thread, "thread", defaultThread, "the owner's conversation (letters, digits, - _ .)")
		c.Flags().BoolVar(&isNew, "new", false, "start the conversation --thread names with the first message")
		return c
	})
}

// agentClient checks the thread (a name, and the owner's own
// conversation: never a stranger's, a teammate's or a subagent's) and
// the message,
// and reads agent's bridge.json, refusing one that names another agent.
func agentClient(home, name, thread, text string) (*endpoint.Client, error) {
	if err := store.CheckThread(thread); err != nil {
		return nil, Usage(fmt.Sprintf("--thread %q: %v", thread, err), "lnk agent send "+name+" --thread main MESSAGE")
	}
	if err := endpoint.CheckOwnersThread(thread); err != nil {
		return nil, Refused(err, "lnk agent send "+name+" --thread main MESSAGE sends to the owner's own conversation")
	}
	if len(text) > endpoint.MaxOwnerMessage {
		return nil, Refused(fmt.Errorf("the message is %d bytes: an owner's message is at most 16 KiB", len(text)), "send it in parts, or put it in a file of the agent's Home and ask it to read it")
	}
	a, err := caps.LoadAgent(home, name)
	if err != nil {
		return nil, agentErr(err, name)
	}
	c, err := endpoint.ClientFor(home, a)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, Fail(ExitMissing, fmt.Errorf("agent %s has no bridge.json: Link Harness hasn't started for it", name), "lnk agent start "+name+" starts it")
	case errors.Is(err, endpoint.ErrOtherAgent):
		return nil, Refused(fmt.Errorf("~/.lnk/agents/%s/%w", name, err), "lnk agent restart "+name+" writes it again")
	case err != nil:
		return nil, Refused(fmt.Errorf("~/.lnk/agents/%s/bridge.json: %w", name, err), "lnk agent restart "+name+" writes it again")
	}
	return c, nil
}

// checkNew refuses --new without --thread: it starts the conversation
// --thread names.
func checkNew(c *cobra.Command, isNew bool, name string) error {
	if isNew && !c.Flags().Changed("thread") {
		return Usage("--new starts the conversation --thread names, and none is named", "lnk agent send "+name+" --new --thread T MESSAGE")
	}
	return nil
}

// sendErr says why a message wasn't answered, with what would help.
func sendErr(err error, name, thread string) error {
	var ref *endpoint.RefusedError
	switch {
	case errors.Is(err, conversation.ErrMissing):
		return Refused(err, "lnk agent send "+name+" --new --thread "+thread+" MESSAGE starts it")
	case errors.Is(err, conversation.ErrExists):
		return Refused(err, "lnk agent send "+name+" --thread "+thread+" MESSAGE goes on with it")
	case errors.Is(err, endpoint.ErrNoProof):
		return Refused(err, "lnk agent status "+name+" shows whether its harness runs; lnk agent restart "+name+" starts it again with a new key")
	case errors.Is(err, endpoint.ErrNotAnswering):
		return Fail(ExitFailure, err, "lnk agent start "+name+" starts it; lnk agent logs "+name+" says why it stopped")
	case errors.As(err, &ref):
		return Refused(err, "lnk agent logs "+name+" shows the harness's side")
	case errors.Is(err, context.Canceled):
		return &ExitError{Code: ExitFailure, Err: errors.New("the turn was ended (Ctrl-C)"), Silent: false}
	}
	return Fail(ExitFailure, err, "lnk agent logs "+name+" shows the harness's side")
}

// chat reads lines from in, sends each, and streams the answers to out.
// SIGINT ends the turn running, never the chat.
func chat(ctx context.Context, cl *endpoint.Client, name, thread string, isNew bool, in io.Reader, out, errw io.Writer) error {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	var mu sync.Mutex
	var cancelTurn context.CancelFunc
	go func() {
		for range sigs {
			mu.Lock()
			if cancelTurn != nil {
				cancelTurn()
			} else {
				fmt.Fprint(errw, "\n(Ctrl-D ends the chat)\nyou> ")
			}
			mu.Unlock()
		}
	}()
	fmt.Fprintf(errw, "lnk: talking with %s in thread %s (Ctrl-C ends a turn, Ctrl-D the chat)\n", name, thread)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 0, 4096), endpoint.MaxOwnerMessage+1)
	for {
		fmt.Fprint(errw, "you> ")
		if !sc.Scan() {
			fmt.Fprintln(errw)
			if err := sc.Err(); err != nil {
				return Refused(fmt.Errorf("a line longer than 16 KiB: %w", err), "an owner's message is at most 16 KiB")
			}
			return nil
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		tctx, cancel := context.WithCancel(ctx)
		mu.Lock()
		cancelTurn = cancel
		mu.Unlock()
		fmt.Fprintf(out, "%s> ", name)
		onText, flush := answerPrinter(out)
		_, err := cl.SendMessage(tctx, endpoint.Message{Thread: thread, Text: line, New: isNew}, nil, onText)
		flush()
		var turnErr *endpoint.TurnError
		if err == nil || errors.As(err, &turnErr) {
			isNew = false // taken, so started: the next message goes on in it
		}
		mu.Lock()
		cancelTurn = nil
		mu.Unlock()
		ended := tctx.Err() != nil // read before cancel: Ctrl-C ended it
		cancel()
		fmt.Fprintln(out)
		switch {
		case err == nil:
		case ended && ctx.Err() == nil:
			fmt.Fprintln(errw, "lnk: the turn was ended (Ctrl-C)")
		default:
			fmt.Fprint(errw, Render(sendErr(err, name, thread)))
			if errors.Is(err, endpoint.ErrNoProof) || errors.Is(err, conversation.ErrMissing) {
				return sendErr(err, name, thread)
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
}
