// Package cli is the `lnk` command line: one cobra command tree whose
// subcommands use the spec's words (lnk agent …, lnk sandbox …, lnk secret …).
//
// Each part of Link adds its commands from a file of its own with
// register, so this file never grows with them. Errors reach the owner as
// one lowercase line starting "lnk: ", then hint lines; exit codes are
// listed in exitcodes.go and in README.md.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"lnk.dev/lnk/caps"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"
)

// A registration adds commands under a parent path such as "" (the root),
// "agent" or "sandbox".
type registration struct {
	parent string
	make   func() *cobra.Command
}

var registrations []registration

// register adds the command make builds under the command named by parent
// ("" for the root; "agent" for `lnk agent`). Parents are made on demand
// by groups.go.
func register(parent string, make func() *cobra.Command) {
	registrations = append(registrations, registration{parent, make})
}

// NewRoot builds the whole command tree.
func NewRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:           "lnk",
		Short:         "Link runs AI agents and their tools, each confined to what its owner granted",
		SilenceUsage:  true,
		SilenceErrors: true,
		CompletionOptions: cobra.CompletionOptions{
			HiddenDefaultCmd: false,
		},
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return Usage(err.Error(), "lnk "+c.CommandPath()[len("lnk"):]+" --help shows the flags")
	})
	byPath := map[string]*cobra.Command{"": root}
	for _, g := range groups {
		c := &cobra.Command{Use: g.name, Short: g.short, Args: cobra.NoArgs,
			RunE: func(c *cobra.Command, args []string) error { return c.Help() }}
		c.PersistentPreRunE = groupPreRun[g.name]
		byPath[g.name] = c
		root.AddCommand(c)
	}
	regs := append([]registration(nil), registrations...)
	sort.SliceStable(regs, func(i, j int) bool { return len(regs[i].parent) < len(regs[j].parent) })
	for _, r := range regs {
		p, ok := byPath[r.parent]
		if !ok {
			panic("cli: no command group " + r.parent)
		}
		c := r.make()
		p.AddCommand(c)
		path := c.Name()
		if r.parent != "" {
			path = r.parent + " " + c.Name()
		}
		byPath[path] = c
	}
	return root
}

// Main runs lnk with args and returns the process's exit code.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := NewRoot(stdout, stderr)
	root.SetArgs(args)
	caps.Notice = func(msg string) { fmt.Fprintf(stderr, "lnk: %s\n", msg) }
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ex *ExitError
	if errors.As(err, &ex) && ex.Silent {
		return ex.Code
	}
	if isCobraUsage(err) {
		err = Usage(err.Error(), "lnk --help lists the commands and their flags")
	}
	fmt.Fprint(stderr, Render(err))
	return CodeOf(err)
}

// isCobraUsage tells cobra's own command-line errors, which carry no type.
func isCobraUsage(err error) bool {
	var ex *ExitError
	if errors.As(err, &ex) {
		return false
	}
	for _, p := range []string{"unknown command", "accepts ", "requires ", "unknown flag", "unknown shorthand", "invalid argument", "flag needs"} {
		if strings.HasPrefix(err.Error(), p) {
			return true
		}
	}
	return false
}

// Run is the entry point cmd/lnk calls.
func Run() {
	os.Exit(Main(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}
