// Command lnk-mcp-remote is Link's stdio MCP server for a tool at a URL:
// `lnk-mcp-remote URL`, its headers in LNK_MCP_HEADER_<n>. See
// lnk.dev/lnk/services/toolbridge/remote.
package main

import (
	"context"
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
		fmt.Fprintln(os.Stderr, "lnk-mcp-remote:", err)
		os.Exit(1)
	}
}
