// Command lnk-mcp-remote is Link's stdio MCP server for a tool at a URL:
// `lnk-mcp-remote URL`, its headers in LNK_MCP_HEADER_<n>. See
// lnk.dev/lnk/services/toolbridge/remote.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"lnk.dev/lnk/services/toolbridge/remote"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: lnk-mcp-remote URL (headers in LNK_MCP_HEADER_<n>)")
		os.Exit(2)
	}
	c, err := remote.FromEnv(os.Args[1], os.Environ())
	if err != nil {
		fmt.Fprintln(os.Stderr, "lnk-mcp-remote:", err)
		os.Exit(2)
	}
	if err := c.Run(context.Background(), os.Stdin, os.Stdout); err != nil {
		if !errors.Is(err, remote.ErrSessionGone) { // said already, where it was met
			fmt.Fprintln(os.Stderr, "lnk-mcp-remote:", err)
		}
		// Its session gone, it ends: the bridge answers the call as
		// gone, and its client starts another with initialize.
		os.Exit(1)
	}
}
