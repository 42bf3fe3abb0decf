package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/internal/secret"
	"lnk.dev/lnk/services/toolbridge/tooldef"
)

// lnk sandbox tool add|remove|list: the tools that run outside every
// sandbox (tools-and-asking.txt "Tools that run outside").

func init() {
	register("sandbox", func() *cobra.Command {
		return &cobra.Command{Use: "tool", Short: "Add, remove and list the MCP tools Link runs outside every sandbox",
			Args: cobra.NoArgs, RunE: func(c *cobra.Command, _ []string) error { return c.Help() }}
	})
	register("sandbox tool", toolAddCommand)
	register("sandbox tool", func() *cobra.Command {
		return &cobra.Command{
			Use: "remove NAME", Short: "Remove a tool; its sessions end and its next call is refused",
			Args: cobra.ExactArgs(1),
			RunE: func(c *cobra.Command, args []string) error {
				if err := toolStore().Remove(args[0]); err != nil {
					return toolErr(err)
				}
				fmt.Fprintf(c.OutOrStdout(), "removed tool %s\n", args[0])
				return nil
			},
		}
	})
	register("sandbox tool", func() *cobra.Command {
		var asJSON bool
		c := &cobra.Command{
			Use: "list", Short: "List the tools (never their environment's values)", Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error { return toolList(c, asJSON) },
		}
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		return c
	})
}

func toolAddCommand() *cobra.Command {
	var envs, headers []string
	var url string
	var shared bool
	c := &cobra.Command{
		Use:   "add NAME [--env K=V | --env K]... [--url URL [--header 'K: V' | --header 'K:']...] [-- COMMAND...]",
		Short: "Add an MCP server that runs outside every sandbox, with your logins",
		Long: "Add an MCP server. It runs in /, with PATH, HOME, your user, locale, TMPDIR, SSH agent and desktop session as they are now, and the --env values.\n" +
			"--env K reads K's value from the terminal (echo off) or stdin, so a token never stands on a command line.\n" +
			"With --url the server is Link's own client of that URL (https://, or http:// on this machine); --header values are kept like --env's, and --header 'K:' reads K's value as --env K does.\n" +
			"--shared runs one server for every session of every sandbox naming the tool: sessions share that server and whatever it keeps between calls.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			name, argv := args[0], args[1:]
			if err := tooldef.CheckName(name); err != nil {
				return Usage(err.Error())
			}
			d := &tooldef.Definition{Name: name, Command: argv, URL: url, Shared: shared}
			if url != "" {
				if len(argv) > 0 {
					return Usage("give either --url or a command, not both")
				}
				if err := tooldef.CheckURL(url); err != nil {
					return Refused(err)
				}
				remote, err := mcpRemotePath()
				if err != nil {
					return err
				}
				d.Command = []string{remote, url}
			} else if len(argv) == 0 {
				return Usage("no command given", "lnk sandbox tool add "+name+" -- COMMAND ARGS...")
			}
			if err := tooldef.CheckCommand(d.Command); err != nil {
				return Refused(err, "give the program and its files by absolute path")
			}
			env, err := tooldef.TakeSnapshot()
			if err != nil {
				return err
			}
			d.Env = env
			defer d.Destroy()
			if err := addEnv(c, d, envs); err != nil {
				return err
			}
			for i, h := range headers {
				v, err := headerValue(c, h)
				if err != nil {
					return err
				}
				d.Env["LNK_MCP_HEADER_"+strconv.Itoa(i+1)] = v
			}
			store := toolStore()
			if err := store.Save(d); err != nil {
				return toolErr(err)
			}
			fmt.Fprintf(c.OutOrStdout(), "added tool %s (%s)\n", name, store.Path(name))
			if shared {
				fmt.Fprintln(c.OutOrStdout(), "shared: every session of every sandbox uses one server, and shares whatever it keeps between calls")
			}
			fmt.Fprintf(c.OutOrStdout(), "an agent reaches it once granted: lnk agent allow AGENT --tool %s\n", name)
			return nil
		},
	}
	c.Flags().StringArrayVar(&envs, "env", nil, "K=V, or K alone to read the value from the terminal or stdin")
	c.Flags().StringVar(&url, "url", "", "a streamable-HTTP MCP server's URL")
	c.Flags().BoolVar(&shared, "shared", false, "one server for every session (sessions share what it keeps between calls)")
	c.Flags().StringArrayVar(&headers, "header", nil, "'Name: value' sent to the URL (kept as a secret), or 'Name:' to read the value from the terminal or stdin")
	return c
}

// mcpRemotePath is Link's own client of a tool at a URL, lnk-mcp-remote,
// by its absolute path beside this lnk, as lnk finds lnk-netbroker: never
// a name looked up on the PATH the tool is saved with, where another
// program of that name could stand.
func mcpRemotePath() (string, error) {
	return besideLnk("lnk-mcp-remote")
}

// headerValue is one --header as the secret LNK_MCP_HEADER_<n> holds,
// "Name: value": given whole, or, for "Name:" alone, its value read from
// the terminal (echo off) or stdin, so a token never stands on lnk's own
// command line either.
func headerValue(c *cobra.Command, h string) (*secret.Value, error) {
	name, value, ok := strings.Cut(h, ":")
	name = strings.TrimSpace(name)
	if !ok || name == "" || strings.ContainsAny(name, " \t\r\n") {
		return nil, Usage(fmt.Sprintf("header %q is not 'Name: value' (or 'Name:' to be asked its value)", h))
	}
	if strings.TrimSpace(value) != "" {
		if strings.ContainsFunc(value, isControl) {
			return nil, Usage(fmt.Sprintf("header %s: its value holds a control character (a line break?)", name))
		}
		return secret.FromString(h)
	}
	v, err := secret.Read(os.Stdin, c.ErrOrStderr(), "value of header "+name+" (not shown): ")
	if err != nil {
		return nil, Usage(fmt.Sprintf("--header %s: %v", name, err))
	}
	defer v.Destroy()
	if bytes.ContainsFunc(v.Bytes(), isControl) {
		return nil, Usage(fmt.Sprintf("--header %s: its value holds a control character (a line break?)", name))
	}
	b := make([]byte, 0, len(name)+2+v.Len())
	b = append(append(b, name...), ": "...)
	b = append(b, v.Bytes()...)
	runtime.KeepAlive(v)
	return secret.New(b) // zeroes b
}

// isControl is a byte no HTTP header value may hold (tab aside).
func isControl(r rune) bool { return r < 0x20 && r != '\t' || r == 0x7f }

func addEnv(c *cobra.Command, d *tooldef.Definition, envs []string) error {
	for _, kv := range envs {
		k, v, hasValue := strings.Cut(kv, "=")
		if err := tooldef.CheckEnvName(k); err != nil {
			return Usage(err.Error())
		}
		var val *secret.Value
		var err error
		if hasValue {
			val, err = secret.FromString(v)
		} else {
			val, err = secret.Read(os.Stdin, c.ErrOrStderr(), "value of "+k+" (not shown): ")
		}
		if err != nil {
			return Usage(fmt.Sprintf("--env %s: %v", k, err))
		}
		if old := d.Env[k]; old != nil {
			old.Destroy()
		}
		d.Env[k] = val
	}
	return nil
}

type toolRow struct {
	Name    string   `json:"name"`
	Command []string `json:"command"`
	URL     string   `json:"url,omitempty"`
	Env     []string `json:"env"` // names only
	Shared  bool     `json:"shared,omitempty"`
}

func toolList(c *cobra.Command, asJSON bool) error {
	store := toolStore()
	names, err := store.Names()
	if err != nil {
		return err
	}
	rows := []toolRow{}
	for _, n := range names {
		d, err := store.Load(n)
		if err != nil {
			fmt.Fprintf(c.ErrOrStderr(), "lnk: left out %s: %v\n", n, err)
			continue
		}
		r := toolRow{Name: n, Command: d.Command, URL: d.URL, Env: []string{}, Shared: d.Shared}
		for k := range d.Env {
			r.Env = append(r.Env, k)
		}
		d.Destroy()
		sort.Strings(r.Env)
		rows = append(rows, r)
	}
	if asJSON {
		return writeJSON(c.OutOrStdout(), rows)
	}
	tw := tabwriter.NewWriter(c.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tCOMMAND\tURL")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, strings.Join(r.Command, " "), r.URL)
	}
	return tw.Flush()
}

func toolErr(err error) error {
	switch {
	case errors.Is(err, tooldef.ErrNotFound):
		return Fail(ExitMissing, err, "lnk sandbox tool list shows the tools")
	case errors.Is(err, tooldef.ErrName), errors.Is(err, tooldef.ErrRelative), errors.Is(err, tooldef.ErrURL):
		return Refused(err)
	}
	return err
}

// toolStore is the definitions of this owner's HOME.
func toolStore() tooldef.Store {
	h := os.Getenv("HOME")
	if h == "" {
		h, _ = os.UserHomeDir()
	}
	return tooldef.Store{Home: h}
}
