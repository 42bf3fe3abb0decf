// Command lnk is Link's command line. Everything it does is in
// lnk.dev/lnk/internal/cli.
package main

import "lnk.dev/lnk/internal/cli"

func main() { cli.Run() }
