package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"
)

// toolNames is --tool's value on lnk sandbox run and check: every tool
// named, in order, so a second --tool is seen and refused (compile)
// rather than silently taking the place of the first. The grant holds
// one tool, which --allow and --ask go with.
type toolNames struct {
	names []string
	last  *string // the grant's Tool, set as the flag always set it
}

func (t *toolNames) String() string { return strings.Join(t.names, ",") }
func (t *toolNames) Type() string   { return "string" }

func (t *toolNames) Set(v string) error {
	t.names = append(t.names, v)
	*t.last = v
	return nil
}

// countTools puts toolNames in place of f's --tool, keeping where it
// sets the grant's tool.
func countTools(f *pflag.FlagSet, t *toolNames, grantTool *string) {
	t.last = grantTool
	f.Lookup("tool").Value = t
}

// oneTool refuses a second --tool: the grant holds one tool, which
// --allow and --ask go with, so the tools after the first would be
// dropped or take its place. grant is the command that grants one tool
// (its NAME is filled in), named once for each tool given; then, what
// follows the grants.
func (t *toolNames) oneTool(grant, then string) error {
	n := t.names
	if len(n) < 2 {
		return nil
	}
	return Usage(fmt.Sprintf("--tool given %d times (%s): a grant's flags name one tool, which its --allow and --ask go with", len(n), strings.Join(n, ", ")),
		"grant each tool in a command of its own ("+grant+" --tool "+n[0]+", then "+grant+" --tool "+n[1]+")"+then)
}
