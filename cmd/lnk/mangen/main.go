// Command mangen writes lnk's man pages, one per command, from the
// commands' own help (cobra's generator over cli.NewRoot's tree). It is
// built only by make install and make deb (scripts/install.sh), never
// installed: the man pages are its whole output.
//
// Usage: go run ./cmd/lnk/mangen FOLDER
//
// The pages are dated by SOURCE_DATE_EPOCH where it is set (the install
// script sets it to the commit's time), so a build is reproducible.
package main

import (
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra/doc"

	"lnk.dev/lnk/cli"
)

func main() {
	if len(os.Args) != 2 || os.Args[1] == "" {
		fmt.Fprintln(os.Stderr, "usage: mangen FOLDER")
		os.Exit(2)
	}
	if err := write(os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "mangen: %v\n", err)
		os.Exit(1)
	}
}

// write generates every page into dir, which must exist.
func write(dir string) error {
	root := cli.NewRoot(io.Discard, io.Discard)
	root.InitDefaultCompletionCmd() // lnk completion, which cobra adds as lnk runs
	root.DisableAutoGenTag = true   // no generator's line with a date in every page
	header := &doc.GenManHeader{Title: "LNK", Section: "1", Source: "Link", Manual: "Link Manual"}
	return doc.GenManTree(root, header, dir)
}
