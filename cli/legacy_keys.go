package cli

import (
	"fmt"
	"io"
	"strings"

	"lnk.dev/lnk/helpers/keybroker/secrets"
	"lnk.dev/lnk/internal/textsafe"
)

// nameLegacyKeys says, at an agent's start, where an older Link left keys
// and how to give them again. It never reads or removes them.
func nameLegacyKeys(w io.Writer, home, agent string) {
	for _, l := range secrets.LegacyKeys(home) {
		hint := strings.NewReplacer("<AGENT>", strings.ToUpper(agent), "<agent>", agent).Replace(secrets.LegacyHint)
		fmt.Fprintf(w, "lnk: an older Link left keys in %s (%s)\n  hint: %s\n", textsafe.Line(l.Path), textsafe.Line(l.What), hint)
	}
}
