package caps

import (
	_ "embed"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"lnk.dev/lnk/internal/testenv"
)

//go:embed doc.go
var docSource string

// TestDocExampleSpecCompiles keeps the package doc's example honest: it
// parses strictly and compiles for an agent.
func TestDocExampleSpecCompiles(t *testing.T) {
	var spec strings.Builder
	for _, line := range strings.Split(docSource, "\n") {
		if strings.HasPrefix(line, "//\t") {
			spec.WriteString(strings.TrimPrefix(line, "//\t") + "\n")
		}
	}
	home := testenv.Home(t)
	CreateAgent(home, "doc")
	os.MkdirAll(filepath.Join(home, "Projects", "site"), 0o700)
	l := Layout{Home: home}
	if err := writeFileAtomic(l.SandboxFile("doc"), []byte(spec.String())); err != nil {
		t.Fatal(err)
	}
	c, err := CompileAgent(home, "doc")
	if err != nil {
		t.Fatalf("%v\n%s", err, spec.String())
	}
	if c.NetworkMode != "host" || c.Tools["github"].Allow == nil || c.Teams["site"].Write[0] != "out" || c.Limits.Memory.Notes != 4096 {
		t.Fatalf("%+v", c)
	}
}
