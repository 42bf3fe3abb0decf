package cli

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
)

// lnk agent allow|deny AGENT with a spec's flags: each change is checked
// by every rule in caps before Config/sandbox.toml is written.

// grantFlags binds the spec's flags to g.
func grantFlags(c *cobra.Command, g *caps.Grants, internet *bool, ask *string) {
	f := c.Flags()
	f.StringArrayVar(&g.Read, "read", nil, "a folder to read (absolute, ~/…, or relative to the agent's Home)")
	f.StringArrayVar(&g.Write, "write", nil, "a folder to write; the repositories (.git), .envrc, .vscode and .idea found in it stay read-only")
	f.StringArrayVar(&g.WriteGit, "write-git", nil, "a folder to write, the repositories in it too (only the .git at its top stays read-only)")
	f.BoolVar(internet, "internet", false, "[internet] on (with allow) or off (with deny)")
	f.StringArrayVar(&g.InternetHosts, "internet-host", nil, "an internet host, through the proxy")
	f.StringArrayVar(&g.TCP, "tcp", nil, "a TCP endpoint host:port")
	f.StringVar(&g.NetworkMode, "network-mode", "", `[network] mode: "host"`)
	f.StringArrayVar(&g.LANHosts, "lan-host", nil, "a host of your local network")
	f.StringArrayVar(&g.Ports, "port", nil, `a localhost port, or '*' (only with --network-mode host)`)
	f.StringArrayVar(&g.BrowserHosts, "browser-host", nil, "a host whose pages may open in your browser (not enforced yet: allow refuses it, deny takes it out)")
	f.StringVar(&g.Tool, "tool", "", "an outside tool by name")
	f.StringArrayVar(&g.ToolAllow, "allow", nil, "with --tool: a call that goes through without asking")
	f.StringVar(ask, "ask", "", `with --tool: "none" lets every call through without asking`)
	f.StringArrayVar(&g.Commands, "command", nil, "a program that may start: a name, an absolute path, or '*'")
	f.StringArrayVar(&g.Models, "model", nil, "a model the agent may use (not enforced yet: allow refuses it, deny takes it out)")
}

// askFlag sets g's --ask from the flag's value: "none" or nothing.
func askFlag(ask string, g *caps.Grants, hint string) error {
	switch ask {
	case "":
	case "none":
		g.ToolAskNone = true
	default:
		return Usage(`--ask takes "none"`, hint)
	}
	return nil
}

func grantCommand(verb string, do func(home, name string, g caps.Grants) (*caps.Compiled, error)) func() *cobra.Command {
	return func() *cobra.Command {
		var g caps.Grants
		var internet bool
		var ask string
		var tools toolNames // every --tool given (tool_flag.go)
		short := "Grant an agent more: folders, hosts, ports, tools, commands"
		if verb == "deny" {
			short = "Take grants back from an agent (a grant its harness holds stays, and says so)"
		}
		c := &cobra.Command{
			Use:               verb + " AGENT [flags]",
			Short:             short,
			Args:              cobra.ExactArgs(1),
			ValidArgsFunction: completeAgents,
			Example: "  lnk agent " + verb + " main --write '~/Projects/site' --internet-host api.example.com\n" +
				"  lnk agent " + verb + " main --tool github --allow search_code\n" +
				"  lnk agent " + verb + " main --network-mode host --port '*'",
			RunE: func(c *cobra.Command, args []string) error {
				if c.Flags().Changed("internet") {
					// The flag as given: caps turns [internet] on for
					// allow --internet and off for deny --internet.
					g.Internet = &internet
				}
				if err := askFlag(ask, &g, "lnk agent "+verb+" AGENT --tool NAME --ask none"); err != nil {
					return err
				}
				if err := tools.oneTool("lnk agent "+verb+" "+args[0], ""); err != nil {
					return err
				}
				if g.Empty() {
					return Usage("nothing to "+verb, "lnk agent "+verb+" --help lists the flags")
				}
				comp, err := do(os.Getenv("HOME"), args[0], g)
				if err != nil {
					return agentErr(err, args[0])
				}
				if verb == "allow" {
					sayNested(c.OutOrStdout(), comp, g)
				}
				fmt.Fprintf(c.OutOrStdout(), "%s: done; lnk agent show %s --permissions shows the grants\n", verb, args[0])
				return nil
			},
		}
		grantFlags(c, &g, &internet, &ask)
		countTools(c.Flags(), &tools, &g.Tool)
		c.RegisterFlagCompletionFunc("network-mode", cobra.FixedCompletions([]string{"host"}, cobra.ShellCompDirectiveNoFileComp))
		c.RegisterFlagCompletionFunc("ask", cobra.FixedCompletions([]string{"none"}, cobra.ShellCompDirectiveNoFileComp))
		return c
	}
}

// sayNested lists, for each folder allow --write granted, the
// repositories, .envrc, .vscode and .idea found in it, now read-only.
func sayNested(w io.Writer, comp *caps.Compiled, g caps.Grants) {
	for _, f := range comp.Folders {
		if !f.Access.Write {
			continue
		}
		for _, p := range g.Write {
			abs, err := caps.GrantPath(comp.Home, comp.FilesDir, p)
			if err != nil || abs != f.Path {
				continue
			}
			found := comp.NestedUnder(f.Path)
			if len(found) == 0 {
				fmt.Fprintf(w, "%s: no repository, .envrc, .vscode or .idea found inside (in folders at most %d below it)\n", f.Path, caps.NestedDepth)
				continue
			}
			fmt.Fprintf(w, "%s: kept read-only inside it (lnk agent allow %s --write-git %s writes them):\n", f.Path, comp.AgentName, p)
			for _, n := range found {
				fmt.Fprintf(w, "  %s\n", n)
			}
		}
	}
}

func init() {
	register("agent", grantCommand("allow", caps.Allow))
	register("agent", grantCommand("deny", caps.Deny))
}
