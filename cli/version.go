package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/spf13/cobra"
)

// version and commit are set by the Makefile at build time:
//
//	-ldflags "-X lnk.dev/lnk/cli.version=$(git describe --always --dirty)
//	          -X lnk.dev/lnk/cli.commit=$(git rev-parse HEAD)"
//
// A build without them (go build, go install) falls back to the commit Go
// stamped into the binary (debug.ReadBuildInfo's vcs.revision).
var (
	version string
	commit  string
)

// versionInfo is what `lnk version` prints.
type versionInfo struct {
	Version  string `json:"version"`  // git describe of the tree, or "dev"
	Commit   string `json:"commit"`   // the full commit hash; empty where unknown
	Modified bool   `json:"modified"` // built from a tree with uncommitted changes
	Go       string `json:"go"`       // the Go release that built it
}

// buildVersion is the version of a binary built with the link-time
// values ldVersion and ldCommit and the build information bi (nil where
// the binary has none). The link-time values win: they are what the
// Makefile read from git; vcs.revision is Go's own stamp, used when the
// Makefile did not build it.
func buildVersion(ldVersion, ldCommit string, bi *debug.BuildInfo) versionInfo {
	v := versionInfo{Version: ldVersion, Commit: ldCommit, Go: runtime.Version()}
	if strings.HasSuffix(ldVersion, "-dirty") {
		v.Modified = true
	}
	if bi != nil {
		if bi.GoVersion != "" {
			v.Go = bi.GoVersion
		}
		if v.Commit == "" {
			for _, s := range bi.Settings {
				switch s.Key {
				case "vcs.revision":
					v.Commit = s.Value
				case "vcs.modified":
					v.Modified = s.Value == "true"
				}
			}
		}
	}
	if v.Version == "" {
		v.Version = "dev"
		if len(v.Commit) >= 12 {
			v.Version = v.Commit[:12]
			if v.Modified {
				v.Version += "-dirty"
			}
		}
	}
	return v
}

// String is the one line `lnk version` prints.
func (v versionInfo) String() string {
	c := v.Commit
	if c == "" {
		c = "unknown"
	}
	if v.Modified {
		c += " (modified)"
	}
	return fmt.Sprintf("lnk %s (commit %s, %s)", v.Version, c, v.Go)
}

func init() {
	register("", func() *cobra.Command {
		var asJSON bool
		c := &cobra.Command{
			Use:   "version",
			Short: "Print lnk's version, the commit it was built from and the Go that built it",
			Args:  cobra.NoArgs,
			RunE: func(c *cobra.Command, _ []string) error {
				bi, _ := debug.ReadBuildInfo()
				v := buildVersion(version, commit, bi)
				if asJSON {
					return writeJSON(c.OutOrStdout(), v)
				}
				fmt.Fprintln(c.OutOrStdout(), v)
				return nil
			},
		}
		c.Flags().BoolVar(&asJSON, "json", false, "print JSON")
		return c
	})
}
