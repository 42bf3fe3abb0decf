package cli

import (
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
