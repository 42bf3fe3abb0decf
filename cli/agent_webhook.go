package cli

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/beside"
	"lnk.dev/lnk/services/webhook"
)

// lnk agent webhook add|list|roll|remove AGENT [HOOK]: thin wrappers over
// services/webhook. A secret is printed once, to stdout alone, and never
// logged.

func init() {
	register("agent", func() *cobra.Command {
		return &cobra.Command{Use: "webhook", Short: "An agent's webhooks: addresses on 127.0.0.1 whose signed posts reach it as a stranger's messages",
			Long: `An agent's webhooks: addresses on 127.0.0.1 alone, each ending in an id of
128 random bits, whose posts, signed with the webhook's secret (Link's
scheme or GitHub's), reach the agent as a stranger's messages in the
webhook's own conversation, with only the tools [tools] strangers names.
The listener never binds another address. Reaching it from another
machine takes a tunnel you open yourself: a public tunnel is out of
Link's scope, and Link builds none.`,
			Args: cobra.NoArgs, RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	})
	register("agent webhook", func() *cobra.Command {
		return &cobra.Command{
			Use:   "add AGENT HOOK",
			Short: "Make webhook HOOK for AGENT: its address and its secret, shown this once",
			Args:  cobra.ExactArgs(2),
			RunE: func(c *cobra.Command, args []string) error {
				a, err := loadWebhookAgent(args[0])
				if err != nil {
					return err
				}
				if err := takesStrangers(args[0]); err != nil {
					return err
				}
				s, err := a.Add(args[1], time.Now())
				if err != nil {
					return webhookErr(err, args[0], args[1])
				}
				return showSecret(c, "made", s)
			},
		}
	})
	register("agent webhook", func() *cobra.Command {
		var asJSON bool
		c := &cobra.Command{
			Use:   "list AGENT",
			Short: "List AGENT's webhooks and their addresses (never their secrets)",
			Args:  cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				a, err := loadWebhookAgent(args[0])
				if err != nil {
					return err
				}
				s, err := a.Load()
				if err != nil {
					return err
				}
				if asJSON {
					if s.Hooks == nil {
						s.Hooks = []webhook.Hook{}
					}
					return writeJSON(c.OutOrStdout(), s)
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tADDRESS\tPREVIOUS SECRET UNTIL")
				for _, h := range s.Hooks {
					until := "-"
					if h.PreviousUntil != nil {
						until = h.PreviousUntil.Format(time.RFC3339)
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\n", h.Name, address(s.Port, h.ID), until)
				}
				return tw.Flush()
			},
		}
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		return c
	})
	register("agent webhook", func() *cobra.Command {
		var done bool
		c := &cobra.Command{
			Use:   "roll AGENT HOOK",
			Short: "Give HOOK a new secret, shown this once; the previous one is taken 24 hours more, or until roll --done",
			Args:  cobra.ExactArgs(2),
			RunE: func(c *cobra.Command, args []string) error {
				a, err := loadWebhookAgent(args[0])
				if err != nil {
					return err
				}
				if done {
					if err := a.RollDone(args[1]); err != nil {
						return webhookErr(err, args[0], args[1])
					}
					fmt.Fprintf(c.OutOrStdout(), "webhook %s takes its new secret alone\n", args[1])
					return nil
				}
				s, err := a.Roll(args[1], time.Now())
				if err != nil {
					return webhookErr(err, args[0], args[1])
				}
				return showSecret(c, "rolled", s)
			},
		}
		c.Flags().BoolVar(&done, "done", false, "stop taking the previous secret now")
		return c
	})
	register("agent webhook", func() *cobra.Command {
		return &cobra.Command{
			Use:   "remove AGENT HOOK",
			Short: "Remove webhook HOOK and its secrets: its address answers 404",
			Args:  cobra.ExactArgs(2),
			RunE: func(c *cobra.Command, args []string) error {
				a, err := loadWebhookAgent(args[0])
				if err != nil {
					return err
				}
				if err := a.Remove(args[1]); err != nil {
					return webhookErr(err, args[0], args[1])
				}
				fmt.Fprintf(c.OutOrStdout(), "removed webhook %s\n", args[1])
				return nil
			},
		}
	})
}

func init() {
	register("agent webhook", func() *cobra.Command {
		return &cobra.Command{
			Use:   "serve AGENT",
			Short: "Take AGENT's webhook posts on 127.0.0.1 at the port in its settings, until stopped (the agent's bridge runs this)",
			Args:  cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				a, err := loadWebhookAgent(args[0])
				if err != nil {
					return err
				}
				checker, err := beside.Program("lnk-webhook")
				if err != nil {
					return Fail(ExitFailure, err, beside.Hint)
				}
				logf := func(f string, v ...any) { fmt.Fprintf(c.ErrOrStderr(), "lnk: "+f+"\n", v...) }
				l, err := webhook.NewListener(a, checker, webhook.WayInOf(a), webhook.DefaultLimits, logf)
				if errors.Is(err, webhook.ErrListening) {
					return Fail(ExitFailure, err, "lnk agent status "+args[0]+" shows the port its listener takes posts on", "lnk agent stop "+args[0]+" stops the agent and its listener")
				}
				if err != nil {
					return err
				}
				defer l.Close()
				ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM)
				defer stop()
				if err := l.Serve(ctx); err != nil {
					return Fail(ExitFailure, err, "lnk agent webhook list "+args[0]+" shows its webhooks and port")
				}
				return nil
			},
		}
	})
}

// takesStrangers refuses an agent whose harness is not Link Harness: one
// started by its [start] command can't be trusted to say who a message
// is from or to keep a conversation's tools (security.txt "Webhooks").
func takesStrangers(name string) error {
	ca, err := caps.LoadAgent(os.Getenv("HOME"), name)
	if err != nil {
		return agentErr(err, name)
	}
	if !ca.RunsLinkHarness() {
		return Refused(fmt.Errorf("agent %s runs its own harness ([start] command), which can't say who a message is from or keep a conversation's tools: only Link Harness takes webhooks", name),
			"an agent whose agent.toml has no [start] command runs Link Harness (lnk agent create makes one)")
	}
	return nil
}

func loadWebhookAgent(name string) (webhook.Agent, error) {
	a, err := webhook.LoadAgent(os.Getenv("HOME"), name)
	if err != nil {
		return webhook.Agent{}, agentErr(err, name)
	}
	return a, nil
}

func address(port int, id string) string { return fmt.Sprintf("http://127.0.0.1:%d/h/%s", port, id) }

// showSecret prints a webhook's address and its secret, once.
func showSecret(c *cobra.Command, verb string, s webhook.Shown) error {
	defer s.Secret.Destroy()
	w := c.OutOrStdout()
	fmt.Fprintf(w, "%s webhook %s: %s\n", verb, s.Hook.Name, address(s.Port, s.Hook.ID))
	fmt.Fprint(w, "secret (shown this once; Link's scheme, or GitHub's with the same text): ")
	_, err := w.Write(s.Secret.Bytes())
	runtime.KeepAlive(s.Secret)
	fmt.Fprintln(w)
	return err
}

func webhookErr(err error, agent, hook string) error {
	switch {
	case errors.Is(err, webhook.ErrBadName):
		return Usage(err.Error(), "lnk agent webhook list "+agent+" shows its webhooks")
	case errors.Is(err, webhook.ErrNoHook):
		return Fail(ExitMissing, err, "lnk agent webhook list "+agent+" shows its webhooks")
	case errors.Is(err, webhook.ErrExists):
		return Refused(err, "lnk agent webhook roll "+agent+" "+hook+" gives it a new secret")
	case errors.Is(err, webhook.ErrTooMany):
		return Refused(err, "lnk agent webhook remove "+agent+" HOOK frees one")
	case errors.Is(err, secrets.ErrNoSecret):
		return Fail(ExitMissing, err, "lnk agent webhook remove "+agent+" "+hook+", then add, makes a new one")
	case errors.Is(err, caps.ErrNoAgent):
		return agentErr(err, agent)
	}
	return err
}
