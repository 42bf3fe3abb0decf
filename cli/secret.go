package cli

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/secret"
)

// lnk secret create|add|remove|list: thin wrappers over
// helpers/keybroker/secrets. A value comes from the terminal with echo
// off, or from stdin; never from the command line. Nothing here prints a
// value.

func init() {
	register("secret", func() *cobra.Command {
		var host string
		var headers []string
		c := &cobra.Command{
			Use:   "create NAME",
			Short: "Keep a secret in ~/.lnk/secrets.toml; its value is read from the terminal (echo off) or stdin",
			Long: "Keep a secret. Its value is typed at the terminal with echo off, or piped on stdin; never given on the command line.\n" +
				"With --internet-host it is sealed: an agent it is added to gets a placeholder, and its proxy adds the value to requests for that host alone,\n" +
				"in the request headers --header names (where the host authenticates; Authorization if none is named), never in a body, a query or a path.",
			Example: "  lnk secret create GITHUB_TOKEN --internet-host api.github.com\n" +
				"  lnk secret create AGENT_MAIN_MODEL_KEY --internet-host api.anthropic.com --header x-api-key",
			Args: cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				name := args[0]
				if err := secrets.CheckName(name); err != nil {
					return Usage(err.Error())
				}
				if host != "" {
					if err := secrets.CheckHost(host); err != nil {
						return Usage(err.Error())
					}
				}
				if len(headers) > 0 && host == "" {
					return Usage("--header names where a sealed secret is added, and without --internet-host this one is kept plain", "lnk secret create "+name+" --internet-host HOST --header NAME")
				}
				for _, h := range headers {
					if err := secrets.CheckHeader(h); err != nil {
						return Usage(err.Error(), "lnk secret create "+name+" --internet-host HOST --header NAME, NAME the header the host authenticates with (such as Authorization or X-Api-Key)")
					}
				}
				v, err := secret.Read(os.Stdin, c.ErrOrStderr(), "value of "+name+" (not shown): ")
				if err != nil {
					return Usage(err.Error(), "type the value when asked, or pipe it: … | lnk secret create "+name)
				}
				if err := secrets.Create(secretsHome(), name, v, host, headers...); err != nil {
					return secretErr(err, name)
				}
				what := "plain: Link gives it to no agent as it is"
				if host != "" {
					in := secrets.DefaultHeader
					if len(headers) > 0 {
						in = strings.Join(headers, ", ")
					}
					what = "sealed to " + host + ", in " + in
				}
				fmt.Fprintf(c.OutOrStdout(), "kept secret %s (%s)\n", name, what)
				return nil
			},
		}
		c.Flags().StringVar(&host, "internet-host", "", "seal it: the agent's proxy adds it to requests for this host alone")
		c.Flags().StringArrayVar(&headers, "header", nil, "a request header the sealed value goes in, where the host authenticates (repeatable; Authorization if none)")
		return c
	})
	register("secret", func() *cobra.Command {
		var agent string
		c := &cobra.Command{
			Use:   "add NAME --agent AGENT",
			Short: "Grant a secret to an agent, by the agent's ID (an agent made later with its name has none)",
			Args:  cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				if agent == "" {
					return Usage("--agent is needed", "lnk secret add "+args[0]+" --agent AGENT")
				}
				a, err := caps.LoadAgent(secretsHome(), agent)
				if err != nil {
					return agentErr(err, agent)
				}
				if err := secrets.Grant(secretsHome(), args[0], a.ID); err != nil {
					return secretErr(err, args[0])
				}
				fmt.Fprintf(c.OutOrStdout(), "agent %s (id %s) holds secret %s\n", a.Name, a.ID, args[0])
				return nil
			},
		}
		c.Flags().StringVar(&agent, "agent", "", "the agent to grant it to")
		return c
	})
	register("secret", func() *cobra.Command {
		var agent string
		c := &cobra.Command{
			Use:   "remove NAME [--agent AGENT]",
			Short: "Delete a secret, or with --agent take it from that agent only",
			Args:  cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				if agent != "" {
					a, err := caps.LoadAgent(secretsHome(), agent)
					if err != nil {
						return agentErr(err, agent)
					}
					if err := secrets.Revoke(secretsHome(), args[0], a.ID); err != nil {
						return secretErr(err, args[0])
					}
					fmt.Fprintf(c.OutOrStdout(), "agent %s no longer holds secret %s\n", a.Name, args[0])
					return nil
				}
				if err := secrets.Remove(secretsHome(), args[0]); err != nil {
					return secretErr(err, args[0])
				}
				fmt.Fprintf(c.OutOrStdout(), "deleted secret %s\n", args[0])
				return nil
			},
		}
		c.Flags().StringVar(&agent, "agent", "", "take it from this agent only")
		return c
	})
	register("secret", func() *cobra.Command {
		var asJSON bool
		c := &cobra.Command{
			Use:   "list",
			Short: "List the secrets: names, sealed hosts and agents; never a value",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				l, err := secrets.List(secretsHome())
				if err != nil {
					return secretErr(err, "")
				}
				legacy := secrets.LegacyKeys(secretsHome())
				for _, k := range legacy {
					fmt.Fprintf(c.ErrOrStderr(), "lnk: a key may be left in %s (%s)\n  hint: %s\n", k.Path, k.What, secrets.LegacyHint)
				}
				names := agentNames()
				if asJSON {
					type listed struct {
						secrets.Listed
						AgentNames []string `json:"agent_names"`
					}
					out := []listed{}
					for _, s := range l {
						out = append(out, listed{s, namesOf(s.Agents, names)})
					}
					return writeJSON(c.OutOrStdout(), out)
				}
				tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "NAME\tSEALED TO\tIN HEADERS\tAGENTS")
				for _, s := range l {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, dash(s.InternetHost), dash(strings.Join(s.Headers, ", ")), dash(strings.Join(namesOf(s.Agents, names), ", ")))
				}
				return tw.Flush()
			},
		}
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		return c
	})
}

// secretsHome is the owner's HOME, where ~/.lnk/secrets.toml lives.
func secretsHome() string { return os.Getenv("HOME") }

// agentNames maps agent IDs to names, for list.
func agentNames() map[string]string {
	as, _ := caps.ListAgents(secretsHome())
	m := map[string]string{}
	for _, a := range as {
		m[a.ID] = a.Name
	}
	return m
}

// namesOf shows each ID by its agent's name, or as "id:<id>" for an ID
// no agent here has (an agent deleted, or made again under that name).
func namesOf(ids []string, names map[string]string) []string {
	out := []string{}
	for _, id := range ids {
		if n, ok := names[id]; ok {
			out = append(out, n)
		} else {
			out = append(out, "id:"+id)
		}
	}
	return out
}

// secretErr maps the secrets package's errors to exit codes and hints.
func secretErr(err error, name string) error {
	switch {
	case errors.Is(err, secrets.ErrNoSecret):
		return Fail(ExitMissing, err, "lnk secret list shows the secrets", "lnk secret create "+name+" keeps one")
	case errors.Is(err, secrets.ErrNotHeld):
		return Fail(ExitMissing, err, "lnk secret list shows which agents hold it")
	case errors.Is(err, secrets.ErrExists):
		return Refused(err, "lnk secret remove "+name+" first, to replace its value")
	case errors.Is(err, secrets.ErrUnsafe):
		return Refused(err, "Link uses ~/.lnk and secrets.toml only as plain folders and files of yours, mode 700 and 600")
	case errors.Is(err, secrets.ErrSyntax):
		return Fail(ExitFailure, err, "fix ~/.lnk/secrets.toml by hand, or remove the secret and create it again")
	}
	return err
}
