// Command lnk is Link's command line. Everything it does is in
// lnk.dev/lnk/cli.
package main

import (
	"os"

	"lnk.dev/lnk/cli"
)

func main() {
	if cli.IsSandboxRun(os.Args[1:]) {
		cli.RunSandboxRun() // every sandboxed start: only that command is built
	}
	cli.Run()
}
